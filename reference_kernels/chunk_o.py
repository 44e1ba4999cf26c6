"""Gated chunk output kernels (GLA / gated delta rule), written for Triton-Ascend.

Shapes and conventions shared by every op in this module
--------------------------------------------------------
* ``q, k``: ``[B, T, H, K]``; ``v, do``: ``[B, T, HV, V]`` with ``HV`` a multiple of
  ``H`` (grouped value heads: value head ``i_hv`` reads q/k head ``i_hv // (HV // H)``).
* ``g``: ``[B, T, HV]`` gate in log2 space, already cumulatively summed inside each
  chunk of ``chunk_size`` tokens (chunks restart at every sequence start).  Decay
  between tokens ``s <= t`` of one chunk is ``exp2(g[t] - g[s])``.  ``g=None`` means
  no gate (every decay is 1).
* ``h, dh``: per-chunk states ``[B, NT, HV, K, V]``; ``h`` is the state at the start
  of a chunk, ``dh`` the gradient of the loss w.r.t. the state at the END of that
  chunk.  With ``cu_seqlens`` (int64, packed ``B == 1``) ``NT`` counts the chunks of
  all sequences, sequence after sequence.
* ``scale`` defaults to ``K ** -0.5``.

Layout choices for Ascend (why the code looks the way it does)
-------------------------------------------------------------
* The gate is read along time.  In ``[B, T, HV]`` storage consecutive tokens are
  ``HV`` elements apart, and the MTE engine that fills the Unified Buffer turns such
  a 1-D block into a slow element-by-element gather.  The host therefore transposes
  ``g`` once to ``[B, HV, T]`` (skipped when ``HV == 1``, where the stride is 1
  already) and the kernels pick the stride-1 pointer math through the constexpr
  ``G_T_CONTIG`` (the G_T_CONTIG pattern).  The legacy ``(HV,)`` stride survives only
  in the ``else`` branch, which the launchers select only for ``HV == 1``.
* Every kernel runs on a 1-D grid of the AI-core count (they all use ``tl.dot``;
  ``reference_kernels.core_grid.num_ai_cores``) and walks its tasks in a loop,
  ``for task in range(tl.program_id(0), n_tasks, tl.num_programs(0))`` (or the same
  loop as a ``while``, where prefetching across tasks does not pay; the forward kernel
  has both around one task body and the host picks by whether a program gets more
  than one task, ``MULTI_TASK``).  A task is one
  (V block,) value head and chunk (for dv_local, a pair of the value heads that share
  a q/k head: ``DV_LOCAL_HEADS_PER_TASK``); the chunk count is a runtime argument, so
  the grid stays one round of programs however long the sequences are, and a new
  length does not compile a new kernel.
* ``dg`` is reduced inside the dq/dk/dw kernel, from the unrounded dq / dk tiles it
  already holds: no fp32 scratch, no second pass over q, k, v, h and dh.
* Outputs along time (``dg``) are written transposed ``[B, HV, T]`` by the kernel so
  that the store is a stride-1 DMA too; the host turns them back into the public
  ``[B, T, HV]`` layout.
* Every address that can exceed 2**31 is built in int64 with ``tl.cast(x, tl.int64)``
  before the first multiplication; block-pointer offsets stay int32 (``i_t * BT``).
* There is no runtime branch inside any loop, no in-place pointer advance, and no
  tile is read again after it served as the left operand of ``tl.dot`` (Ascend's
  matmul may reuse the lhs buffer).  Optional inputs are selected by constexpr flags
  (``USE_G``, ``USE_DW``, ``IS_VARLEN``) so the unused path is never compiled; the
  task loop's body holds only such constexpr branches.
* Causal masks and the last-token select compare positions in float32
  (``o_t.to(tl.float32) < T_cur``, exact below 2**24): Triton-Ascend runs an integer
  vector compare element by element on the Scalar unit, every task.
* Launches carry no CUDA tuning keywords and no timing-based config search: block
  sizes are fixed on the host (``_block``; ``DQKWG_MAX_BV`` for the dq/dk/dw/dg kernel,
  ``DV_LOCAL_HEADS_PER_TASK`` for the dv_local task).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from .core_grid import num_ai_cores

__all__ = [
    "chunk_bwd_dqkwg",
    "chunk_bwd_dv_local",
    "chunk_bwd_kernel_dqkwg",
    "chunk_bwd_kernel_dv_local",
    "chunk_fwd_kernel_o",
    "chunk_fwd_o",
    "gate_base",
    "gate_block_ptr",
    "gate_scalar",
    "prepare_chunk_indices",
]


# ---------------------------------------------------------------------------
# gate helpers (shared by all kernels)
# ---------------------------------------------------------------------------
@triton.jit
def gate_base(
    g, bos, i_b, i_h, T_seq, HV: tl.constexpr, IS_VARLEN: tl.constexpr, G_T_CONTIG: tl.constexpr
):
    """Pointer to token 0 of this (sequence, value head) row of the gate.

    ``bos``, ``i_b`` and ``i_h`` are int64 already.  ``T_seq`` is the time length of
    the stored tensor (per-batch ``T``, or the packed total for varlen), NOT the
    local sequence length.
    """
    if G_T_CONTIG:
        # [B, HV, T] storage: each head owns a contiguous run of T_seq tokens.
        if IS_VARLEN:
            base = g + bos + i_h * T_seq
        else:
            base = g + i_b * HV * T_seq + i_h * T_seq
    else:
        # Legacy [B, T, HV] storage; launchers select it only when HV == 1.
        base = g + bos * HV + i_h
    return base


@triton.jit
def gate_block_ptr(g_base, T, offset, BT: tl.constexpr, HV: tl.constexpr, G_T_CONTIG: tl.constexpr):
    """1-D block pointer over ``BT`` gate values starting at token ``offset``.

    On the G_T_CONTIG path the stride is the literal 1, so the load is one
    contiguous DMA burst into UB.  The ``(HV,)`` stride of the fallback equals 1
    because the launchers only take it when ``HV == 1``.
    """
    if G_T_CONTIG:
        p_g = tl.make_block_ptr(g_base, (T,), (1,), (offset,), (BT,), (0,))
    else:
        p_g = tl.make_block_ptr(g_base, (T,), (HV,), (offset,), (BT,), (0,))
    return p_g


@triton.jit
def gate_scalar(g_base, idx, HV: tl.constexpr, G_T_CONTIG: tl.constexpr):
    """Gate value of one token (the chunk's last token) as fp32."""
    if G_T_CONTIG:
        b_g = tl.load(g_base + idx)
    else:
        b_g = tl.load(g_base + idx * HV)
    return b_g.to(tl.float32)


# ---------------------------------------------------------------------------
# core-grid task decomposition (shared by all kernels)
# ---------------------------------------------------------------------------
@triton.jit
def locate_chunk(i_c, T, chunk_indices, cu_seqlens, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    """Where global chunk ``i_c`` lives: ``(i_n, i_t, i_tg, bos, T_cur)``.

    ``i_n`` is the sequence (the batch row for fixed length), ``i_t`` the chunk's index
    inside it, ``i_tg`` its global index (which selects the chunk state in ``h``/``dh``),
    ``bos`` the sequence's first token and ``T_cur`` its length.  ``T`` is the stored
    time length; it is never rebound, so a task loop can call this on every iteration.

    Varlen: ``chunk_indices`` (int32, built on the host) maps the global chunk to
    (sequence, chunk); ``cu_seqlens`` is loaded as int64 so token offsets never wrap, and
    only the local length is narrowed.  Fixed length: ``B * cdiv(T, BT)`` chunks, batch
    row after batch row, so the scalar division by the runtime chunk count splits them.
    """
    i_tg = tl.cast(i_c, tl.int64)
    if IS_VARLEN:
        i_n = tl.load(chunk_indices + i_c * 2)
        i_t = tl.load(chunk_indices + i_c * 2 + 1)
        bos = tl.load(cu_seqlens + i_n)
        eos = tl.load(cu_seqlens + i_n + 1)
        T_cur = (eos - bos).to(tl.int32)
    else:
        NT = tl.cdiv(T, BT)
        i_n = i_c // NT
        i_t = i_c - i_n * NT
        bos = tl.cast(i_n, tl.int64) * T
        T_cur = T
    return tl.cast(i_n, tl.int64), i_t, i_tg, bos, T_cur


# ---------------------------------------------------------------------------
# forward: o = scale * (exp2(g) * (q @ h) + tril(q k^T * decay) @ v)
# ---------------------------------------------------------------------------
@triton.jit
def chunk_fwd_o_task(
    q,
    k,
    v,
    h,
    g,
    o,
    cu_seqlens,
    chunk_indices,
    scale,
    T,
    task,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    USE_G: tl.constexpr,
    G_T_CONTIG: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """One task of :func:`chunk_fwd_kernel_o`: V block ``task % NV`` of one value head
    and chunk, loads, matmuls and the store of its ``o`` tile."""
    NV: tl.constexpr = (V + BV - 1) // BV
    i_v = task % NV
    # int64 before any multiplication: B * T * HV * V overflows int32 at long context.
    i_h = tl.cast((task // NV) % HV, tl.int64)
    i_n, i_t, i_tg, bos, T_cur = locate_chunk(
        task // (NV * HV), T, chunk_indices, cu_seqlens, BT, IS_VARLEN
    )

    q_base = q + (bos * H + i_h // (HV // H)) * K
    k_base = k + (bos * H + i_h // (HV // H)) * K
    v_base = v + (bos * HV + i_h) * V
    o_base = o + (bos * HV + i_h) * V
    h_base = h + (i_tg * HV + i_h) * (K * V)

    # v and the gate first: their loads do not depend on the matmuls below, so issued
    # here they overlap the K loop's (GM -> UB transfers running while the cube unit
    # works on Ascend) instead of waiting behind it.
    p_v = tl.make_block_ptr(v_base, (T_cur, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    b_v = tl.load(p_v, boundary_check=(0, 1))
    if USE_G:
        g_row = gate_base(g, bos, i_n, i_h, T, HV, IS_VARLEN, G_T_CONTIG)
        b_g = tl.load(
            gate_block_ptr(g_row, T_cur, i_t * BT, BT, HV, G_T_CONTIG), boundary_check=(0,)
        ).to(tl.float32)

    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_q = tl.make_block_ptr(
            q_base, (T_cur, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
        )
        # k read as a [BK, BT] view: the unit-stride K axis stays the contiguous one.
        p_kt = tl.make_block_ptr(
            k_base, (K, T_cur), (1, H * K), (i_k * BK, i_t * BT), (BK, BT), (0, 1)
        )
        p_h = tl.make_block_ptr(h_base, (K, V), (V, 1), (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        b_q = tl.load(p_q, boundary_check=(0, 1))
        b_kt = tl.load(p_kt, boundary_check=(0, 1))
        b_h = tl.load(p_h, boundary_check=(0, 1)).to(b_q.dtype)
        # q feeds two matmuls as lhs; the second one gets its own copy because the
        # first may overwrite its lhs buffer in UB.
        b_q_for_A = b_q + 0.0
        b_o += tl.dot(b_q, b_h, input_precision="ieee")
        b_A += tl.dot(b_q_for_A, b_kt, input_precision="ieee")

    o_t = i_t * BT + tl.arange(0, BT)
    # The causal mask selects values, so its positions are compared in float32 (exact
    # below 2**24): an integer vector compare runs on the Scalar unit (ASC032).
    m_t = o_t.to(tl.float32) < T_cur
    m_A = (o_t[:, None].to(tl.float32) >= o_t[None, :]) & (m_t[:, None] & m_t[None, :])
    if USE_G:
        b_o = b_o * tl.exp2(b_g)[:, None]
        # Zero the exponent outside the causal mask so exp2 never overflows there.
        b_A = b_A * tl.exp2(tl.where(m_A, b_g[:, None] - b_g[None, :], 0.0))
    b_A = tl.where(m_A, b_A, 0.0)

    p_o = tl.make_block_ptr(o_base, (T_cur, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    b_A_lhs = b_A.to(b_v.dtype)
    b_o = (b_o + tl.dot(b_A_lhs, b_v, input_precision="ieee")) * scale
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


@triton.jit(do_not_specialize=["T", "n_chunks"])
def chunk_fwd_kernel_o(
    q,
    k,
    v,
    h,
    g,
    o,
    cu_seqlens,
    chunk_indices,
    scale,
    T,
    n_chunks,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    USE_G: tl.constexpr,
    G_T_CONTIG: tl.constexpr,
    IS_VARLEN: tl.constexpr,
    MULTI_TASK: tl.constexpr,
):
    """One program per AI core; each walks the tasks (V block, value head, chunk).

    The V block varies fastest, then the value head, so programs that run at the same
    time share the q/k rows of one chunk.  The task body is :func:`chunk_fwd_o_task`;
    ``MULTI_TASK`` (host side: more tasks than programs) only picks the loop that walks
    it, and either loop is correct for any task count.  With several tasks per program
    a ``for`` loop: overlapping the next task's q / k / h loads with this task's matmuls
    pays at long context.  With at most one a ``while`` loop: there is no next task to
    overlap, and the prefetch buffers would only take on-chip memory (the measurements
    are in :func:`chunk_fwd_o`).
    """
    NV: tl.constexpr = (V + BV - 1) // BV
    n_tasks = n_chunks * (HV * NV)
    if MULTI_TASK:
        for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
            chunk_fwd_o_task(
                q,
                k,
                v,
                h,
                g,
                o,
                cu_seqlens,
                chunk_indices,
                scale,
                T,
                task,
                H,
                HV,
                K,
                V,
                BT,
                BK,
                BV,
                USE_G,
                G_T_CONTIG,
                IS_VARLEN,
            )
    else:
        task = tl.program_id(0)
        while task < n_tasks:
            chunk_fwd_o_task(
                q,
                k,
                v,
                h,
                g,
                o,
                cu_seqlens,
                chunk_indices,
                scale,
                T,
                task,
                H,
                HV,
                K,
                V,
                BT,
                BK,
                BV,
                USE_G,
                G_T_CONTIG,
                IS_VARLEN,
            )
            task += tl.num_programs(0)


# ---------------------------------------------------------------------------
# backward, intra-chunk part of dv: dv[s] = sum_{t >= s} scale * (k_s . q_t) * decay * do[t]
# ---------------------------------------------------------------------------
@triton.jit(do_not_specialize=["T", "n_chunks"])
def chunk_bwd_kernel_dv_local(
    q,
    k,
    g,
    do,
    dv,
    cu_seqlens,
    chunk_indices,
    scale,
    T,
    n_chunks,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    HPT: tl.constexpr,
    USE_G: tl.constexpr,
    G_T_CONTIG: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """One program per AI core; each walks the tasks (pair of value heads, chunk).

    A task is ``HPT`` value heads (``DV_LOCAL_HEADS_PER_TASK``, a divisor of the group
    ``HV // H``) that read the same q/k head: the ungated scores ``k q^T`` are the same
    for all of them, so the task loads q / k and runs that matmul once, then applies
    each head's own gate and multiplies by its ``do``.  The head pair varies fastest,
    then the chunk.  The heads are a ``tl.static_range``: their loads are straight-line
    code in the task body.  A ``for`` task loop: with a pair of heads per task,
    overlapping the next task's loads with this task's matmuls pays on the H200 at long
    context (https://github.com/ascend-lint/ascend-lint/blob/main/benchmarks/KERNELS_RESULTS.md).
    """
    G: tl.constexpr = HV // H
    NG: tl.constexpr = HV // HPT
    n_tasks = n_chunks * NG
    for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        # int64 before any multiplication: B * T * HV * V overflows int32 at long context.
        i_h0 = tl.cast(task % NG, tl.int64) * HPT
        i_n, i_t, _, bos, T_cur = locate_chunk(
            task // NG, T, chunk_indices, cu_seqlens, BT, IS_VARLEN
        )

        q_base = q + (bos * H + i_h0 // G) * K
        k_base = k + (bos * H + i_h0 // G) * K

        # A[s, t] = k_s . q_t for the whole chunk, accumulated over K blocks: shared by
        # the HPT value heads of this task.
        b_A = tl.zeros([BT, BT], dtype=tl.float32)
        for i_k in range(tl.cdiv(K, BK)):
            p_k = tl.make_block_ptr(
                k_base, (T_cur, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
            )
            p_qt = tl.make_block_ptr(
                q_base, (K, T_cur), (1, H * K), (i_k * BK, i_t * BT), (BK, BT), (0, 1)
            )
            b_k = tl.load(p_k, boundary_check=(0, 1))
            b_qt = tl.load(p_qt, boundary_check=(0, 1))
            b_A += tl.dot(b_k, b_qt, input_precision="ieee")

        o_t = i_t * BT + tl.arange(0, BT)
        m_t = o_t.to(tl.float32) < T_cur
        m_A = (o_t[:, None].to(tl.float32) <= o_t[None, :]) & (m_t[:, None] & m_t[None, :])
        b_A = tl.where(m_A, b_A * scale, 0.0)

        for j in tl.static_range(HPT):
            i_h = i_h0 + j
            do_base = do + (bos * HV + i_h) * V
            dv_base = dv + (bos * HV + i_h) * V
            if USE_G:
                g_row = gate_base(g, bos, i_n, i_h, T, HV, IS_VARLEN, G_T_CONTIG)
                b_g = tl.load(
                    gate_block_ptr(g_row, T_cur, i_t * BT, BT, HV, G_T_CONTIG),
                    boundary_check=(0,),
                ).to(tl.float32)
                # Zero the exponent outside the causal mask so exp2 never overflows there.
                b_Ah = b_A * tl.exp2(tl.where(m_A, b_g[None, :] - b_g[:, None], 0.0))
            else:
                b_Ah = b_A
            for i_v in range(tl.cdiv(V, BV)):
                p_do = tl.make_block_ptr(
                    do_base, (T_cur, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
                )
                p_dv = tl.make_block_ptr(
                    dv_base, (T_cur, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
                )
                b_do = tl.load(p_do, boundary_check=(0, 1))
                # b_Ah is reused by every V block: hand the matmul a fresh copy each time.
                b_A_lhs = (b_Ah + 0.0).to(b_do.dtype)
                b_dv = tl.dot(b_A_lhs, b_do, input_precision="ieee")
                tl.store(p_dv, b_dv.to(p_dv.dtype.element_ty), boundary_check=(0, 1))


# ---------------------------------------------------------------------------
# backward dq / dk / dw / dg, one (value head, chunk) task at a time
# ---------------------------------------------------------------------------
@triton.jit(do_not_specialize=["T", "n_chunks"])
def chunk_bwd_kernel_dqkwg(
    q,
    k,
    v,
    g,
    h,
    do,
    dh,
    dv,
    dq,
    dk,
    dw,
    dg,
    cu_seqlens,
    chunk_indices,
    scale,
    T,
    n_chunks,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    USE_G: tl.constexpr,
    USE_DW: tl.constexpr,
    G_T_CONTIG: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """dq, dk and dw = -dv @ h^T per value head (``[B, T, HV, K]``), and dg.

    dq = scale * (exp2(g) * (do @ h^T) + ds @ k)
    dk = exp2(g_last - g) * (v @ dh^T) + ds^T @ q
    with ds = scale * tril(do @ v^T * decay).  The host sums dq / dk over the head group.

    dg[t] = sum_k(dq*q - dk*k)[t], plus on the chunk's last token the terms that depend
    on g_last through the state update: exp2(g_last) * <h, dh> + sum_t exp2(g_last -
    g[t]) * k_t . (dh v_t).  The result is in the kernel's log2 units (autodiff's dL/dg
    divided by ln 2), written ``[B, HV, T]`` so the store is a stride-1 DMA.

    Everything dg needs is in the program's tiles already (the unrounded dq / dk, the
    ungated ``v @ dh^T``), so it is reduced here over the K blocks, which this program
    walks itself: no fp32 dq / dk scratch, no second kernel, no per-K-block dg partials.
    ``ds`` is accumulated in the same pass over v / do as dq / dk / dw (recomputed per
    K block; with K <= 64 there is one).  The task loop is a ``while``: a task's loads
    feed its own matmuls only, and an innermost ``for`` would let Triton's GPU
    pipeliner prefetch the next task's tiles too, which on the H200 cost more than it
    gave (more shared memory per program, fewer programs per SM; see
    https://github.com/ascend-lint/ascend-lint/blob/main/benchmarks/KERNELS_RESULTS.md).  Both forms lower through the Ascend frontend
    (the compile gate the kernel tests run under, ``ascend_compile`` in pyproject.toml).
    """
    NK: tl.constexpr = (K + BK - 1) // BK
    NV: tl.constexpr = (V + BV - 1) // BV
    n_tasks = n_chunks * HV
    task = tl.program_id(0)
    while task < n_tasks:
        i_h = tl.cast(task % HV, tl.int64)
        i_n, i_t, i_tg, bos, T_cur = locate_chunk(
            task // HV, T, chunk_indices, cu_seqlens, BT, IS_VARLEN
        )

        q_base = q + (bos * H + i_h // (HV // H)) * K
        k_base = k + (bos * H + i_h // (HV // H)) * K
        v_base = v + (bos * HV + i_h) * V
        do_base = do + (bos * HV + i_h) * V
        h_base = h + (i_tg * HV + i_h) * (K * V)
        dh_base = dh + (i_tg * HV + i_h) * (K * V)
        dq_base = dq + (bos * HV + i_h) * K
        dk_base = dk + (bos * HV + i_h) * K

        o_t = i_t * BT + tl.arange(0, BT)
        m_t = o_t.to(tl.float32) < T_cur
        m_A = (o_t[:, None].to(tl.float32) >= o_t[None, :]) & (m_t[:, None] & m_t[None, :])

        if USE_G:
            g_row = gate_base(g, bos, i_n, i_h, T, HV, IS_VARLEN, G_T_CONTIG)
            b_g = tl.load(
                gate_block_ptr(g_row, T_cur, i_t * BT, BT, HV, G_T_CONTIG), boundary_check=(0,)
            ).to(tl.float32)
            last_idx = tl.minimum(i_t * BT + BT, T_cur) - 1
            b_g_last = gate_scalar(g_row, last_idx, HV, G_T_CONTIG)
            b_ds_gate = tl.exp2(tl.where(m_A, b_g[:, None] - b_g[None, :], 0.0))
            b_dq_gate = tl.exp2(b_g) * scale
            b_dk_gate = tl.where(m_t, tl.exp2(b_g_last - b_g), 0.0)
            b_dg = tl.zeros([BT], dtype=tl.float32)
            # the chunk-end terms, summed over all K and V blocks: <h, dh> and
            # sum_t exp2(g_last - g_t) k_t . (dh v_t)
            b_hdh = tl.zeros([1], dtype=tl.float32)
            b_kdhv = tl.zeros([1], dtype=tl.float32)
        for i_k in range(NK):
            b_ds = tl.zeros([BT, BT], dtype=tl.float32)
            b_dq = tl.zeros([BT, BK], dtype=tl.float32)
            b_dk = tl.zeros([BT, BK], dtype=tl.float32)
            if USE_DW:
                b_dw = tl.zeros([BT, BK], dtype=tl.float32)
            for i_v in range(NV):
                p_v = tl.make_block_ptr(
                    v_base, (T_cur, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
                )
                p_do = tl.make_block_ptr(
                    do_base, (T_cur, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
                )
                # h / dh are [K, V] row-major; read them as [BV, BK] views (unit stride on V).
                p_h = tl.make_block_ptr(
                    h_base, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1)
                )
                p_dh = tl.make_block_ptr(
                    dh_base, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1)
                )
                b_v = tl.load(p_v, boundary_check=(0, 1))
                b_do = tl.load(p_do, boundary_check=(0, 1))
                b_h = tl.load(p_h, boundary_check=(0, 1))
                b_dh = tl.load(p_dh, boundary_check=(0, 1))
                if USE_G:
                    b_hdh += tl.sum(tl.sum(b_h.to(tl.float32) * b_dh.to(tl.float32), 1), 0)
                # do is the lhs of two matmuls: the first one gets its own copy.
                b_do_for_ds = b_do + 0.0
                b_ds += tl.dot(b_do_for_ds, tl.trans(b_v), input_precision="ieee")
                b_dq += tl.dot(b_do, b_h.to(b_do.dtype), input_precision="ieee")
                b_dk += tl.dot(b_v, b_dh.to(b_v.dtype), input_precision="ieee")
                if USE_DW:
                    p_dv = tl.make_block_ptr(
                        dv + (bos * HV + i_h) * V,
                        (T_cur, V),
                        (HV * V, 1),
                        (i_t * BT, i_v * BV),
                        (BT, BV),
                        (1, 0),
                    )
                    b_dv = tl.load(p_dv, boundary_check=(0, 1)).to(b_v.dtype)
                    b_dw += tl.dot(b_dv, b_h.to(b_v.dtype), input_precision="ieee")

            if USE_DW:
                p_dw = tl.make_block_ptr(
                    dw + (bos * HV + i_h) * K,
                    (T_cur, K),
                    (HV * K, 1),
                    (i_t * BT, i_k * BK),
                    (BT, BK),
                    (1, 0),
                )
                tl.store(p_dw, (-b_dw).to(p_dw.dtype.element_ty), boundary_check=(0, 1))

            if USE_G:
                b_ds = b_ds * b_ds_gate
            b_ds = tl.where(m_A, b_ds * scale, 0.0)
            p_q = tl.make_block_ptr(
                q_base, (T_cur, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
            )
            p_k = tl.make_block_ptr(
                k_base, (T_cur, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
            )
            b_q = tl.load(p_q, boundary_check=(0, 1))
            b_k = tl.load(p_k, boundary_check=(0, 1))
            if USE_G:
                b_dq = b_dq * b_dq_gate[:, None]
                b_dk = b_dk * b_dk_gate[:, None]
                b_kdhv += tl.sum(tl.sum(b_dk * b_k.to(tl.float32), 1), 0)
            else:
                b_dq = b_dq * scale
            # ds feeds two matmuls (as is and transposed): both operands are materialised
            # before the first matmul, which may overwrite its lhs buffer in UB.
            b_ds_lhs = b_ds.to(b_k.dtype)
            b_dst_lhs = tl.trans(b_ds).to(b_q.dtype)
            b_dq += tl.dot(b_ds_lhs, b_k, input_precision="ieee")
            b_dk += tl.dot(b_dst_lhs, b_q, input_precision="ieee")
            if USE_G:
                b_dg += tl.sum(b_dq * b_q.to(tl.float32), 1) - tl.sum(b_dk * b_k.to(tl.float32), 1)

            p_dq = tl.make_block_ptr(
                dq_base, (T_cur, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
            )
            p_dk = tl.make_block_ptr(
                dk_base, (T_cur, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
            )
            tl.store(p_dq, b_dq.to(p_dq.dtype.element_ty), boundary_check=(0, 1))
            tl.store(p_dk, b_dk.to(p_dk.dtype.element_ty), boundary_check=(0, 1))

        if USE_G:
            b_dg_last = tl.exp2(b_g_last) * b_hdh + b_kdhv
            b_dg = tl.where(o_t.to(tl.float32) == last_idx, b_dg + b_dg_last, b_dg)
            # dg is written [B, HV, T] (stride-1 stores): the same addressing as the gate.
            dg_row = gate_base(dg, bos, i_n, i_h, T, HV, IS_VARLEN, True)
            p_dg = tl.make_block_ptr(dg_row, (T_cur,), (1,), (i_t * BT,), (BT,), (0,))
            tl.store(p_dg, b_dg.to(p_dg.dtype.element_ty), boundary_check=(0,))
        task += tl.num_programs(0)


# ---------------------------------------------------------------------------
# host side
# ---------------------------------------------------------------------------
def prepare_chunk_indices(cu_seqlens: torch.Tensor, chunk_size: int) -> torch.Tensor:
    """int32 ``[NT, 2]`` table of (sequence id, chunk id inside the sequence).

    Built as int32 on the host so the kernels load it without any narrowing cast;
    the token offsets themselves come from the int64 ``cu_seqlens``.
    """
    lens = cu_seqlens[1:] - cu_seqlens[:-1]
    n_chunks = (lens + chunk_size - 1) // chunk_size
    seq_ids = torch.repeat_interleave(torch.arange(len(lens), device=cu_seqlens.device), n_chunks)
    first = torch.cumsum(n_chunks, 0) - n_chunks
    chunk_ids = torch.arange(len(seq_ids), device=cu_seqlens.device) - first[seq_ids]
    return torch.stack([seq_ids, chunk_ids], dim=1).to(torch.int32).contiguous()


def _check_inputs(
    q: torch.Tensor, HV: int, cu_seqlens: torch.Tensor | None, chunk_size: int
) -> None:
    H = q.shape[2]
    if HV % H != 0:
        raise ValueError(f"HV={HV} must be a multiple of H={H}")
    if chunk_size < 16 or chunk_size & (chunk_size - 1):
        raise ValueError(f"chunk_size={chunk_size} must be a power of two >= 16")
    if cu_seqlens is not None:
        if q.shape[0] != 1:
            raise ValueError("cu_seqlens needs packed inputs with batch size 1")
        if cu_seqlens.dtype != torch.int64:
            raise ValueError("cu_seqlens must be int64 (token offsets are int64 in the kernels)")


def _num_chunks(B: int, T: int, cu_seqlens: torch.Tensor | None, chunk_size: int):
    """(chunks of all sequences, chunk_indices or None): the kernels' task count along time."""
    if cu_seqlens is None:
        return B * triton.cdiv(T, chunk_size), None
    chunk_indices = prepare_chunk_indices(cu_seqlens, chunk_size)
    return chunk_indices.shape[0], chunk_indices


def _block(n: int, cap: int = 64) -> int:
    # Whole head dimension when small, 64-wide tiles otherwise: a [64, 64] fp32 tile
    # is 16 KiB, which leaves room in the ~192 KiB UB for the [BT, BT] score tile.
    return min(max(triton.next_power_of_2(n), 16), cap)


# V tile of the dq/dk/dw/dg kernel.  Its V loop carries four fp32 accumulators
# (ds [BT, BT], dq, dk, dw [BT, BK]) and loads five tiles per step (v, do, dv
# [BT, BV]; h, dh [BV, BK]), h and dh also widened to fp32 for <h, dh>.  32-wide V
# tiles halve what those loads hold at once, and from V = 64 on give the loop at
# least two steps, so the next step's loads overlap this step's matmuls (in one A/B
# run on an H200, B=2 H=4 K=V=64: 0.0210 -> 0.0189 ms at T=2048, 0.1396 -> 0.1246
# ms at T=8192; https://github.com/ascend-lint/ascend-lint/blob/main/benchmarks/KERNELS_RESULTS.md).  dv_local keeps 64: its V loop
# holds one accumulator, and 32 measured slower there at both lengths.
DQKWG_MAX_BV = 32

# Value heads per dv_local task (when the group HV // H divides by it; else 1).  The
# heads of one group read the same q / k rows, so their ungated scores k q^T are one
# matmul: a task of two heads loads q and k once (half the GM -> UB traffic for them)
# and runs half the [BT, K] x [K, BT] cube work, while what each extra head adds to
# the task's UB is only its gate, gated score tile and do / dv tiles.  Two rather than
# the whole group keeps that per-task footprint fixed whatever the group size and
# leaves n_chunks * HV / 2 tasks for the cores.  On an H200 (B=2 H=4 K=V=64, 4
# programs per SM), with the kernel's `for` task loop: 0.0329 -> 0.0276 ms at T=8192
# (HV=16), 0.0047 -> 0.0058 ms at T=2048 (HV=8: 512 tasks, one per program, so no
# next task to overlap, and the bigger program leaves fewer resident per SM); four
# heads per task measured 0.032-0.040 ms at T=8192 (https://github.com/ascend-lint/ascend-lint/blob/main/benchmarks/KERNELS_RESULTS.md).
DV_LOCAL_HEADS_PER_TASK = 2


def _gate_arg(g: torch.Tensor | None, HV: int) -> torch.Tensor | None:
    """G_T_CONTIG: the read-only gate transposed once to ``[B, HV, T]`` (~10-15 us on an
    accelerator) so every program reads it with stride 1.  With ``HV == 1`` the
    ``[B, T, 1]`` tensor already has unit stride along T: no copy, legacy branch."""
    if g is not None and HV != 1:
        return g.transpose(1, 2).contiguous()
    return g


def chunk_fwd_o(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    h: torch.Tensor,
    g: torch.Tensor | None = None,
    scale: float | None = None,
    cu_seqlens: torch.LongTensor | None = None,
    chunk_size: int = 64,
) -> torch.Tensor:
    """Chunk output ``o [B, T, HV, V]`` (dtype of ``v``).

    For token t of chunk c (tokens s of the same chunk, s <= t):
    ``o[t] = scale * (exp2(g[t]) * q[t] @ h[c] + sum_s (q[t] . k[s]) exp2(g[t] - g[s]) v[s])``.

    Launched on a 1-D grid of the AI-core count; the token and chunk counts are runtime
    arguments, so a new sequence length does not compile a new kernel.
    """
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    _check_inputs(q, HV, cu_seqlens, chunk_size)
    if scale is None:
        scale = K**-0.5
    BT, BK, BV = chunk_size, _block(K), _block(V)
    n_chunks, chunk_indices = _num_chunks(B, T, cu_seqlens, BT)
    o = torch.empty_like(v)
    if q.numel() == 0 or o.numel() == 0 or n_chunks == 0:
        return o  # no tokens: a grid of 0 programs aborts on triton-ascend 3.2.0
    # One program per AI core (the kernel uses tl.dot), never more programs than tasks.
    n_tasks = n_chunks * HV * triton.cdiv(V, BV)
    grid = (min(n_tasks, num_ai_cores(q)),)
    # MULTI_TASK picks the kernel's task loop: a `for` when some program gets a second
    # task, a `while` when every program has at most one.  It is a bool, so whatever the
    # lengths the kernel compiles at most twice per head / block configuration (it flips
    # once, where n_tasks crosses the core count).  On an H200 (B=2 H=4 K=V=64, 528
    # programs) the `for` form lets Triton's pipeliner fetch the next task's q / k / h
    # during this task's matmuls, 0.039 ms against 0.055 ms as `while` at T=8192 (HV=16,
    # 2048 tasks); with one task per program (T=2048, HV=8, 512 tasks) the prefetch has
    # nothing to fetch and its 97 KiB of shared memory per program (32 KiB as `while`)
    # leave fewer programs resident: 0.0090 ms against 0.0069 ms
    # (https://github.com/ascend-lint/ascend-lint/blob/main/benchmarks/KERNELS_RESULTS.md).  On Ascend both loops walk the same tasks in the
    # same order; a one-task program likewise has no next iteration for double-buffered
    # loads to prefetch, so the `while` form there gives up nothing.
    multi_task = n_tasks > grid[0]
    chunk_fwd_kernel_o[grid](
        q,
        k,
        v,
        h,
        _gate_arg(g, HV),
        o,
        cu_seqlens,
        chunk_indices,
        scale,
        T,
        n_chunks,
        H=H,
        HV=HV,
        K=K,
        V=V,
        BT=BT,
        BK=BK,
        BV=BV,
        USE_G=g is not None,
        G_T_CONTIG=HV != 1,
        IS_VARLEN=cu_seqlens is not None,
        MULTI_TASK=multi_task,
    )
    return o


def chunk_bwd_dv_local(
    q: torch.Tensor,
    k: torch.Tensor,
    do: torch.Tensor,
    g: torch.Tensor | None = None,
    scale: float | None = None,
    cu_seqlens: torch.LongTensor | None = None,
    chunk_size: int = 64,
) -> torch.Tensor:
    """Intra-chunk part of ``dv [B, T, HV, V]`` (dtype of ``do``).

    ``dv[s] = scale * sum_{t >= s, same chunk} (k[s] . q[t]) exp2(g[t] - g[s]) do[t]``.
    """
    B, T, H, K = q.shape
    HV, V = do.shape[2], do.shape[3]
    _check_inputs(q, HV, cu_seqlens, chunk_size)
    if scale is None:
        scale = K**-0.5
    BT, BK, BV = chunk_size, _block(K), _block(V)
    n_chunks, chunk_indices = _num_chunks(B, T, cu_seqlens, BT)
    # A task is HPT value heads of one q/k head group (see DV_LOCAL_HEADS_PER_TASK).
    HPT = math.gcd(HV // H, DV_LOCAL_HEADS_PER_TASK)
    dv = torch.empty_like(do)
    if q.numel() == 0 or dv.numel() == 0 or n_chunks == 0:
        return dv
    grid = (min(n_chunks * (HV // HPT), num_ai_cores(q)),)
    chunk_bwd_kernel_dv_local[grid](
        q,
        k,
        _gate_arg(g, HV),
        do,
        dv,
        cu_seqlens,
        chunk_indices,
        scale,
        T,
        n_chunks,
        H=H,
        HV=HV,
        K=K,
        V=V,
        BT=BT,
        BK=BK,
        BV=BV,
        HPT=HPT,
        USE_G=g is not None,
        G_T_CONTIG=HV != 1,
        IS_VARLEN=cu_seqlens is not None,
    )
    return dv


def chunk_bwd_dqkwg(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    do: torch.Tensor,
    h: torch.Tensor,
    dh: torch.Tensor,
    g: torch.Tensor | None = None,
    w: torch.Tensor | None = None,
    dv: torch.Tensor | None = None,
    scale: float | None = None,
    cu_seqlens: torch.LongTensor | None = None,
    chunk_size: int = 64,
):
    """Gradients of ``L = <do, o> + sum_c <dh[c], h_end[c]>`` for one chunk step.

    ``o`` is :func:`chunk_fwd_o` and ``h_end[c] = exp2(g_last) h[c] + sum_s k[s]^T
    exp2(g_last - g[s]) v[s]`` the state after chunk c (``g_last`` = gate of the
    chunk's last token); ``v``, ``h``, ``do`` and ``dh`` are constants.

    Returns ``(dq, dk, dw, dg)``:

    * ``dq, dk``: ``[B, T, H, K]`` in ``q``'s dtype, summed over the value heads that
      share a q/k head.
    * ``dw``: ``-dv @ h[c]^T`` as ``[B, T, HV, K]`` in ``w``'s dtype (delta rule; ``w``
      only fixes shape and dtype), or ``None`` when ``w`` is None.
    * ``dg``: fp32 ``[B, T, HV]``, autodiff's dL/dg divided by ln 2 (the log2-space
      convention of the fused GDN backward), or ``None`` when ``g`` is None.

    One kernel computes all four (dg from the unrounded dq / dk in its own tiles).
    With ``HV == H`` it writes dq / dk straight into the outputs; otherwise into one
    ``[B, T, HV, K]`` buffer each, in ``q``'s dtype, that the host sums over the group.
    """
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    _check_inputs(q, HV, cu_seqlens, chunk_size)
    if w is not None and dv is None:
        raise ValueError("dw needs dv")
    if scale is None:
        scale = K**-0.5
    BT, BK, BV = chunk_size, _block(K), _block(V, DQKWG_MAX_BV)
    n_chunks, chunk_indices = _num_chunks(B, T, cu_seqlens, BT)

    dq_hv = torch.empty(B, T, HV, K, dtype=q.dtype, device=q.device)
    dk_hv = torch.empty(B, T, HV, K, dtype=k.dtype, device=q.device)
    dw = torch.empty(B, T, HV, K, dtype=w.dtype, device=q.device) if w is not None else None
    # Written [B, HV, T] (stride-1 stores), returned in the public [B, T, HV] layout.
    dg_t = torch.empty(B, HV, T, dtype=torch.float32, device=q.device) if g is not None else None
    if q.numel() > 0 and dq_hv.numel() > 0 and n_chunks > 0:  # no tokens: launch nothing
        grid = (min(n_chunks * HV, num_ai_cores(q)),)
        chunk_bwd_kernel_dqkwg[grid](
            q,
            k,
            v,
            _gate_arg(g, HV),
            h,
            do,
            dh,
            dv,
            dq_hv,
            dk_hv,
            dw,
            dg_t,
            cu_seqlens,
            chunk_indices,
            scale,
            T,
            n_chunks,
            H=H,
            HV=HV,
            K=K,
            V=V,
            BT=BT,
            BK=BK,
            BV=BV,
            USE_G=g is not None,
            USE_DW=w is not None,
            G_T_CONTIG=HV != 1,
            IS_VARLEN=cu_seqlens is not None,
        )

    dg = dg_t.transpose(1, 2).contiguous() if g is not None else None
    if HV == H:
        return dq_hv, dk_hv, dw, dg
    G = HV // H
    dq = dq_hv.view(B, T, H, G, K).sum(3, dtype=torch.float32).to(q.dtype)
    dk = dk_hv.view(B, T, H, G, K).sum(3, dtype=torch.float32).to(k.dtype)
    return dq, dk, dw, dg
