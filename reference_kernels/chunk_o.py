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
* Outputs along time (``dg``) are written transposed ``[B, HV, T]`` by the kernel so
  that the store is a stride-1 DMA too; the host turns them back into the public
  ``[B, T, HV]`` layout.
* Every address that can exceed 2**31 is built in int64 with ``tl.cast(x, tl.int64)``
  before the first multiplication; block-pointer offsets stay int32 (``i_t * BT``).
* There is no runtime branch inside any loop, no in-place pointer advance, and no
  tile is read again after it served as the left operand of ``tl.dot`` (Ascend's
  matmul may reuse the lhs buffer).  Optional inputs are selected by constexpr flags
  (``USE_G``, ``USE_DW``, ``IS_VARLEN``) so the unused path is never compiled.
* Launches carry no CUDA tuning keywords and no timing-based config search: block
  sizes are fixed on the host (``_block``).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

__all__ = [
    "chunk_bwd_dqkwg",
    "chunk_bwd_dv_local",
    "chunk_bwd_kernel_dg",
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
# forward: o = scale * (exp2(g) * (q @ h) + tril(q k^T * decay) @ v)
# ---------------------------------------------------------------------------
@triton.jit
def locate_chunk(i_t, i_b, T, chunk_indices, cu_seqlens, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    """Where this program's chunk lives: its index inside its sequence, its global index
    (which selects the chunk state in ``h``/``dh``), the sequence's first token and the
    sequence's length.

    Varlen: ``chunk_indices`` (int32, built on the host) maps the launch's chunk to
    (sequence, chunk); ``cu_seqlens`` is loaded as int64 so token offsets never wrap, and
    only the local length is narrowed.  Fixed length: sequence ``i_b`` starts at token
    ``i_b * T`` (``i_b`` is int64 already).
    """
    if IS_VARLEN:
        i_tg = tl.cast(i_t, tl.int64)
        i_n = tl.load(chunk_indices + i_t * 2)
        i_t = tl.load(chunk_indices + i_t * 2 + 1)
        bos = tl.load(cu_seqlens + i_n)
        eos = tl.load(cu_seqlens + i_n + 1)
        T = (eos - bos).to(tl.int32)
    else:
        i_tg = i_b * tl.cdiv(T, BT) + i_t
        bos = i_b * T
    return i_t, i_tg, bos, T


@triton.jit(do_not_specialize=["T"])
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
    i_v = tl.program_id(0)
    i_t = tl.program_id(1)
    i_bh = tl.program_id(2)
    # int64 before any multiplication: B * T * HV * V overflows int32 at long context.
    i_b = tl.cast(i_bh // HV, tl.int64)
    i_h = tl.cast(i_bh % HV, tl.int64)
    # Keep the stored time length: the varlen branch rebinds T to the local length.
    T_seq = T
    i_t, i_tg, bos, T = locate_chunk(i_t, i_b, T, chunk_indices, cu_seqlens, BT, IS_VARLEN)

    q_base = q + (bos * H + i_h // (HV // H)) * K
    k_base = k + (bos * H + i_h // (HV // H)) * K
    v_base = v + (bos * HV + i_h) * V
    o_base = o + (bos * HV + i_h) * V
    h_base = h + (i_tg * HV + i_h) * (K * V)

    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_q = tl.make_block_ptr(q_base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        # k read as a [BK, BT] view: the unit-stride K axis stays the contiguous one.
        p_kt = tl.make_block_ptr(k_base, (K, T), (1, H * K), (i_k * BK, i_t * BT), (BK, BT), (0, 1))
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
    m_t = o_t < T
    m_A = (o_t[:, None] >= o_t[None, :]) & (m_t[:, None] & m_t[None, :])
    if USE_G:
        g_row = gate_base(g, bos, i_b, i_h, T_seq, HV, IS_VARLEN, G_T_CONTIG)
        b_g = tl.load(
            gate_block_ptr(g_row, T, i_t * BT, BT, HV, G_T_CONTIG), boundary_check=(0,)
        ).to(tl.float32)
        b_o = b_o * tl.exp2(b_g)[:, None]
        # Zero the exponent outside the causal mask so exp2 never overflows there.
        b_A = b_A * tl.exp2(tl.where(m_A, b_g[:, None] - b_g[None, :], 0.0))
    b_A = tl.where(m_A, b_A, 0.0)

    p_v = tl.make_block_ptr(v_base, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    p_o = tl.make_block_ptr(o_base, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    b_v = tl.load(p_v, boundary_check=(0, 1))
    b_A_lhs = b_A.to(b_v.dtype)
    b_o = (b_o + tl.dot(b_A_lhs, b_v, input_precision="ieee")) * scale
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


# ---------------------------------------------------------------------------
# backward, intra-chunk part of dv: dv[s] = sum_{t >= s} scale * (k_s . q_t) * decay * do[t]
# ---------------------------------------------------------------------------
@triton.jit(do_not_specialize=["T"])
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
    i_t = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = tl.cast(i_bh // HV, tl.int64)
    i_h = tl.cast(i_bh % HV, tl.int64)
    T_seq = T
    i_t, _, bos, T = locate_chunk(i_t, i_b, T, chunk_indices, cu_seqlens, BT, IS_VARLEN)

    q_base = q + (bos * H + i_h // (HV // H)) * K
    k_base = k + (bos * H + i_h // (HV // H)) * K
    do_base = do + (bos * HV + i_h) * V
    dv_base = dv + (bos * HV + i_h) * V

    # A[s, t] = k_s . q_t for the whole chunk, accumulated over K blocks.
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_k = tl.make_block_ptr(k_base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_qt = tl.make_block_ptr(q_base, (K, T), (1, H * K), (i_k * BK, i_t * BT), (BK, BT), (0, 1))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_qt = tl.load(p_qt, boundary_check=(0, 1))
        b_A += tl.dot(b_k, b_qt, input_precision="ieee")

    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    m_A = (o_t[:, None] <= o_t[None, :]) & (m_t[:, None] & m_t[None, :])
    if USE_G:
        g_row = gate_base(g, bos, i_b, i_h, T_seq, HV, IS_VARLEN, G_T_CONTIG)
        b_g = tl.load(
            gate_block_ptr(g_row, T, i_t * BT, BT, HV, G_T_CONTIG), boundary_check=(0,)
        ).to(tl.float32)
        b_A = b_A * tl.exp2(tl.where(m_A, b_g[None, :] - b_g[:, None], 0.0))
    b_A = tl.where(m_A, b_A * scale, 0.0)

    for i_v in range(tl.cdiv(V, BV)):
        p_do = tl.make_block_ptr(
            do_base, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
        )
        p_dv = tl.make_block_ptr(
            dv_base, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
        )
        b_do = tl.load(p_do, boundary_check=(0, 1))
        # b_A is reused by every V block: hand the matmul a fresh copy each time.
        b_A_lhs = (b_A + 0.0).to(b_do.dtype)
        b_dv = tl.dot(b_A_lhs, b_do, input_precision="ieee")
        tl.store(p_dv, b_dv.to(p_dv.dtype.element_ty), boundary_check=(0, 1))


# ---------------------------------------------------------------------------
# backward dq / dk / dw (fp32, one value head per program)
# ---------------------------------------------------------------------------
@triton.jit(do_not_specialize=["T"])
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
    cu_seqlens,
    chunk_indices,
    scale,
    T,
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
    """dq, dk (fp32, [B, T, HV, K], per value head) and dw = -dv @ h^T.

    dq = scale * (exp2(g) * (do @ h^T) + ds @ k)
    dk = exp2(g_last - g) * (v @ dh^T) + ds^T @ q
    with ds = scale * tril(do @ v^T * decay).  The host sums the head group.
    """
    i_k = tl.program_id(0)
    i_t = tl.program_id(1)
    i_bh = tl.program_id(2)
    i_b = tl.cast(i_bh // HV, tl.int64)
    i_h = tl.cast(i_bh % HV, tl.int64)
    T_seq = T
    i_t, i_tg, bos, T = locate_chunk(i_t, i_b, T, chunk_indices, cu_seqlens, BT, IS_VARLEN)

    q_base = q + (bos * H + i_h // (HV // H)) * K
    k_base = k + (bos * H + i_h // (HV // H)) * K
    v_base = v + (bos * HV + i_h) * V
    do_base = do + (bos * HV + i_h) * V
    h_base = h + (i_tg * HV + i_h) * (K * V)
    dh_base = dh + (i_tg * HV + i_h) * (K * V)
    dq_base = dq + (bos * HV + i_h) * K
    dk_base = dk + (bos * HV + i_h) * K

    b_dq = tl.zeros([BT, BK], dtype=tl.float32)
    b_dk = tl.zeros([BT, BK], dtype=tl.float32)
    b_ds = tl.zeros([BT, BT], dtype=tl.float32)
    if USE_DW:
        dv_base = dv + (bos * HV + i_h) * V
        dw_base = dw + (bos * HV + i_h) * K
        b_dw = tl.zeros([BT, BK], dtype=tl.float32)
    for i_v in range(tl.cdiv(V, BV)):
        p_v = tl.make_block_ptr(v_base, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        p_do = tl.make_block_ptr(
            do_base, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
        )
        # h / dh are [K, V] row-major; read them as [BV, BK] views (unit stride on V).
        p_h = tl.make_block_ptr(h_base, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1))
        p_dh = tl.make_block_ptr(dh_base, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1))
        b_v = tl.load(p_v, boundary_check=(0, 1))
        b_do = tl.load(p_do, boundary_check=(0, 1))
        # Matmul operands in the input dtype, taken from the pointer type so no tile
        # is read after it has served as a matmul lhs.
        b_h = tl.load(p_h, boundary_check=(0, 1)).to(v.dtype.element_ty)
        b_dh = tl.load(p_dh, boundary_check=(0, 1)).to(v.dtype.element_ty)
        b_do_for_dq = b_do + 0.0
        b_ds += tl.dot(b_do, tl.trans(b_v), input_precision="ieee")
        b_dq += tl.dot(b_do_for_dq, b_h, input_precision="ieee")
        b_dk += tl.dot(b_v, b_dh, input_precision="ieee")
        if USE_DW:
            p_dv = tl.make_block_ptr(
                dv_base, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
            )
            b_dv = tl.load(p_dv, boundary_check=(0, 1)).to(v.dtype.element_ty)
            b_dw += tl.dot(b_dv, b_h, input_precision="ieee")

    if USE_DW:
        p_dw = tl.make_block_ptr(
            dw_base, (T, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
        )
        tl.store(p_dw, (-b_dw).to(p_dw.dtype.element_ty), boundary_check=(0, 1))

    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    m_A = (o_t[:, None] >= o_t[None, :]) & (m_t[:, None] & m_t[None, :])
    if USE_G:
        g_row = gate_base(g, bos, i_b, i_h, T_seq, HV, IS_VARLEN, G_T_CONTIG)
        b_g = tl.load(
            gate_block_ptr(g_row, T, i_t * BT, BT, HV, G_T_CONTIG), boundary_check=(0,)
        ).to(tl.float32)
        last_idx = tl.minimum(i_t * BT + BT, T) - 1
        b_g_last = gate_scalar(g_row, last_idx, HV, G_T_CONTIG)
        b_dq = b_dq * (tl.exp2(b_g) * scale)[:, None]
        b_dk = b_dk * tl.where(m_t, tl.exp2(b_g_last - b_g), 0.0)[:, None]
        b_ds = b_ds * tl.exp2(tl.where(m_A, b_g[:, None] - b_g[None, :], 0.0))
    else:
        b_dq = b_dq * scale
    b_ds = tl.where(m_A, b_ds * scale, 0.0)

    p_q = tl.make_block_ptr(q_base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_k = tl.make_block_ptr(k_base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    b_q = tl.load(p_q, boundary_check=(0, 1))
    b_k = tl.load(p_k, boundary_check=(0, 1))
    # Both lhs operands are materialised before the first matmul touches UB.
    b_ds_lhs = (b_ds + 0.0).to(b_k.dtype)
    b_dst_lhs = tl.trans(b_ds).to(b_q.dtype)
    b_dq += tl.dot(b_ds_lhs, b_k, input_precision="ieee")
    b_dk += tl.dot(b_dst_lhs, b_q, input_precision="ieee")

    p_dq = tl.make_block_ptr(dq_base, (T, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_dk = tl.make_block_ptr(dk_base, (T, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    tl.store(p_dq, b_dq.to(p_dq.dtype.element_ty), boundary_check=(0, 1))
    tl.store(p_dk, b_dk.to(p_dk.dtype.element_ty), boundary_check=(0, 1))


# ---------------------------------------------------------------------------
# backward dg from the fp32 dq / dk of chunk_bwd_kernel_dqkwg
# ---------------------------------------------------------------------------
@triton.jit(do_not_specialize=["T"])
def chunk_bwd_kernel_dg(
    q,
    k,
    v,
    g,
    h,
    dh,
    dq,
    dk,
    dg,
    cu_seqlens,
    chunk_indices,
    T,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    G_T_CONTIG: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """dg[t] = sum_k(dq*q - dk*k)[t], plus the chunk-end term on the last token.

    The chunk-end term collects everything that depends on g_last through the
    state update: exp2(g_last) * <h, dh> + sum_t exp2(g_last - g[t]) * k_t . (dh v_t).
    The result is in the kernel's log2 units (autodiff's dL/dg divided by ln 2).
    ``dg`` is written as ``[B, HV, T]`` so the store is a stride-1 DMA.
    """
    i_t = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = tl.cast(i_bh // HV, tl.int64)
    i_h = tl.cast(i_bh % HV, tl.int64)
    T_seq = T
    i_t, i_tg, bos, T = locate_chunk(i_t, i_b, T, chunk_indices, cu_seqlens, BT, IS_VARLEN)
    # dg is written [B, HV, T] (stride-1 stores): the same addressing as the gate.
    dg_row = gate_base(dg, bos, i_b, i_h, T_seq, HV, IS_VARLEN, True)

    q_base = q + (bos * H + i_h // (HV // H)) * K
    k_base = k + (bos * H + i_h // (HV // H)) * K
    v_base = v + (bos * HV + i_h) * V
    h_base = h + (i_tg * HV + i_h) * (K * V)
    dh_base = dh + (i_tg * HV + i_h) * (K * V)
    dq_base = dq + (bos * HV + i_h) * K
    dk_base = dk + (bos * HV + i_h) * K

    g_row = gate_base(g, bos, i_b, i_h, T_seq, HV, IS_VARLEN, G_T_CONTIG)
    b_g = tl.load(gate_block_ptr(g_row, T, i_t * BT, BT, HV, G_T_CONTIG), boundary_check=(0,)).to(
        tl.float32
    )
    last_idx = tl.minimum(i_t * BT + BT, T) - 1
    b_g_last = gate_scalar(g_row, last_idx, HV, G_T_CONTIG)

    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    b_dg = tl.zeros([BT], dtype=tl.float32)
    # per-token k_t . (dh v_t), before the exp2(g_last - g_t) factor
    b_kdhv = tl.zeros([BT], dtype=tl.float32)
    b_hdh = tl.zeros([BV, BK], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        b_dk_state = tl.zeros([BT, BK], dtype=tl.float32)
        for i_v in range(tl.cdiv(V, BV)):
            p_v = tl.make_block_ptr(
                v_base, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0)
            )
            p_h = tl.make_block_ptr(h_base, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1))
            p_dh = tl.make_block_ptr(
                dh_base, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1)
            )
            b_v = tl.load(p_v, boundary_check=(0, 1))
            b_h = tl.load(p_h, boundary_check=(0, 1)).to(tl.float32)
            b_dh = tl.load(p_dh, boundary_check=(0, 1))
            b_hdh += b_h * b_dh.to(tl.float32)
            b_dk_state += tl.dot(b_v, b_dh.to(v.dtype.element_ty), input_precision="ieee")
        p_q = tl.make_block_ptr(q_base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_k = tl.make_block_ptr(k_base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_dq = tl.make_block_ptr(
            dq_base, (T, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
        )
        p_dk = tl.make_block_ptr(
            dk_base, (T, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0)
        )
        b_q = tl.load(p_q, boundary_check=(0, 1)).to(tl.float32)
        b_k = tl.load(p_k, boundary_check=(0, 1)).to(tl.float32)
        b_dq = tl.load(p_dq, boundary_check=(0, 1)).to(tl.float32)
        b_dk = tl.load(p_dk, boundary_check=(0, 1)).to(tl.float32)
        b_dg += tl.sum(b_dq * b_q, axis=1) - tl.sum(b_dk * b_k, axis=1)
        b_kdhv += tl.sum(b_dk_state * b_k, axis=1)

    b_dg_last = tl.exp2(b_g_last) * tl.sum(tl.sum(b_hdh, axis=1), axis=0)
    b_dg_last += tl.sum(tl.where(m_t, tl.exp2(b_g_last - b_g), 0.0) * b_kdhv, axis=0)
    b_dg = tl.where(o_t == last_idx, b_dg + b_dg_last, b_dg)

    p_dg = tl.make_block_ptr(dg_row, (T,), (1,), (i_t * BT,), (BT,), (0,))
    tl.store(p_dg, b_dg.to(p_dg.dtype.element_ty), boundary_check=(0,))


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
    """(grid extent along time, chunk_indices or None)."""
    if cu_seqlens is None:
        return triton.cdiv(T, chunk_size), None
    chunk_indices = prepare_chunk_indices(cu_seqlens, chunk_size)
    return chunk_indices.shape[0], chunk_indices


def _block(n: int) -> int:
    # Whole head dimension when small, 64-wide tiles otherwise: a [64, 64] fp32 tile
    # is 16 KiB, which leaves room in the ~192 KiB UB for the [BT, BT] score tile.
    return min(max(triton.next_power_of_2(n), 16), 64)


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
    """
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    _check_inputs(q, HV, cu_seqlens, chunk_size)
    if scale is None:
        scale = K**-0.5
    BT, BK, BV = chunk_size, _block(K), _block(V)
    NT, chunk_indices = _num_chunks(B, T, cu_seqlens, BT)
    # G_T_CONTIG: transpose the read-only gate once to [B, HV, T] (~10-15 us on an
    # accelerator) so every program reads it with stride 1.  With HV == 1 the
    # [B, T, 1] tensor already has unit stride along T: no copy, legacy branch.
    g_arg = g
    if g is not None and HV != 1:
        g_arg = g.transpose(1, 2).contiguous()
    o = torch.empty_like(v)
    grid = (triton.cdiv(V, BV), NT, B * HV)
    chunk_fwd_kernel_o[grid](
        q,
        k,
        v,
        h,
        g_arg,
        o,
        cu_seqlens,
        chunk_indices,
        scale,
        T,
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
    NT, chunk_indices = _num_chunks(B, T, cu_seqlens, BT)
    # G_T_CONTIG: transpose the read-only gate once to [B, HV, T] (~10-15 us on an
    # accelerator) so every program reads it with stride 1.  With HV == 1 the
    # [B, T, 1] tensor already has unit stride along T: no copy, legacy branch.
    g_arg = g
    if g is not None and HV != 1:
        g_arg = g.transpose(1, 2).contiguous()
    dv = torch.empty_like(do)
    grid = (NT, B * HV)
    chunk_bwd_kernel_dv_local[grid](
        q,
        k,
        g_arg,
        do,
        dv,
        cu_seqlens,
        chunk_indices,
        scale,
        T,
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
    """
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    _check_inputs(q, HV, cu_seqlens, chunk_size)
    if w is not None and dv is None:
        raise ValueError("dw needs dv")
    if scale is None:
        scale = K**-0.5
    BT, BK, BV = chunk_size, _block(K), _block(V)
    NT, chunk_indices = _num_chunks(B, T, cu_seqlens, BT)
    # G_T_CONTIG: transpose the read-only gate once to [B, HV, T] (~10-15 us on an
    # accelerator) so every program reads it with stride 1.  With HV == 1 the
    # [B, T, 1] tensor already has unit stride along T: no copy, legacy branch.
    g_arg = g
    if g is not None and HV != 1:
        g_arg = g.transpose(1, 2).contiguous()

    # fp32 per-value-head scratch: the dg kernel needs unrounded dq / dk.
    dq_hv = torch.empty(B, T, HV, K, dtype=torch.float32, device=q.device)
    dk_hv = torch.empty(B, T, HV, K, dtype=torch.float32, device=q.device)
    dw = torch.empty(B, T, HV, K, dtype=w.dtype, device=q.device) if w is not None else None
    chunk_bwd_kernel_dqkwg[(triton.cdiv(K, BK), NT, B * HV)](
        q,
        k,
        v,
        g_arg,
        h,
        do,
        dh,
        dv,
        dq_hv,
        dk_hv,
        dw,
        cu_seqlens,
        chunk_indices,
        scale,
        T,
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

    dg = None
    if g is not None:
        # Written [B, HV, T] (stride-1 stores), returned in the public [B, T, HV] layout.
        dg_t = torch.empty(B, HV, T, dtype=torch.float32, device=q.device)
        chunk_bwd_kernel_dg[(NT, B * HV)](
            q,
            k,
            v,
            g_arg,
            h,
            dh,
            dq_hv,
            dk_hv,
            dg_t,
            cu_seqlens,
            chunk_indices,
            T,
            H=H,
            HV=HV,
            K=K,
            V=V,
            BT=BT,
            BK=BK,
            BV=BV,
            G_T_CONTIG=HV != 1,
            IS_VARLEN=cu_seqlens is not None,
        )
        dg = dg_t.transpose(1, 2).contiguous()

    G = HV // H
    dq = dq_hv.view(B, T, H, G, K).sum(3).to(q.dtype)
    dk = dk_hv.view(B, T, H, G, K).sum(3).to(k.dtype)
    return dq, dk, dw, dg
