"""GPU-habit "before" versions of the chunk output ops (the legacy-layout side of the A/B).

Numerically correct, same wrapper signatures as ``reference_kernels.chunk_o``, so tests
and ``benchmarks/bench_kernels.py`` can swap the two modules.  Everything here is what
a straight CUDA-to-Ascend port tends to keep, and what ascend-lint reports:

* the gate stays ``[B, T, HV]`` and is read with ``tl.make_block_ptr(g + bos * HV + i_h,
  (T,), (HV,), ...)``: a strided gather along time (ASC001); ``dg`` is stored the same
  way (``dg + o_t * HV``);
* ``num_warps=4, num_stages=2`` at every launch (ASC004);
* a runtime ``if`` inside the V loop of the dv kernel that picks an unmasked
  block-pointer load for full tiles and a masked load for the ragged one (ASC003,
  ASC005);
* ``.to(tl.int64)`` on a program id and late int64 casts of products (ASC007),
  ``chunk_indices`` / ``cu_seqlens`` narrowed with ``.to(tl.int32)`` (ASC009);
* a tile reused after it was the lhs of ``tl.dot`` (ASC010) and a pointer advanced
  in place inside a loop (ASC011).

None of this is wrong on a GPU; see ``reference_kernels/chunk_o.py`` for the fixes.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["T"])
def chunk_fwd_kernel_o(
    q, k, v, h, g, o, cu_seqlens, chunk_indices, scale, T,
    H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    USE_G: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2).to(tl.int64)
    i_b, i_h = i_bh // HV, i_bh % HV
    if IS_VARLEN:
        i_tg = i_t.to(tl.int64)
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        T = eos - bos
    else:
        i_tg = i_b * tl.cdiv(T, BT) + i_t
        bos = i_b * T

    q += (bos * H + i_h // (HV // H)) * K
    k += (bos * H + i_h // (HV // H)) * K
    v += (bos * HV + i_h) * V
    o += (bos * HV + i_h) * V
    h += (i_tg * HV + i_h).to(tl.int64) * K * V

    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    o_kk = tl.arange(0, BK)
    # pointers advanced in place along K (a GPU habit)
    p_q = q + o_t[:, None] * (H * K) + o_kk[None, :]
    p_k = k + o_kk[:, None] + o_t[None, :] * (H * K)
    p_h = h + o_kk[:, None] * V + (i_v * BV + tl.arange(0, BV))[None, :]
    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        m_k = (i_k * BK + o_kk) < K
        b_q = tl.load(p_q, mask=m_t[:, None] & m_k[None, :], other=0.0)
        b_k = tl.load(p_k, mask=m_k[:, None] & m_t[None, :], other=0.0)
        b_h = tl.load(p_h, mask=m_k[:, None] & ((i_v * BV + tl.arange(0, BV)) < V)[None, :], other=0.0)
        b_o += tl.dot(b_q, b_h.to(b_q.dtype))
        b_A += tl.dot(b_q, b_k)
        p_q += BK
        p_k += BK
        p_h += BK * V

    if USE_G:
        p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
        b_g = tl.load(p_g, boundary_check=(0,)).to(tl.float32)
        b_o = b_o * tl.exp2(b_g)[:, None]
        b_A = b_A * tl.exp2(b_g[:, None] - b_g[None, :])
    m_A = (o_t[:, None] >= o_t[None, :]) & (m_t[:, None] & m_t[None, :])
    b_A = tl.where(m_A, b_A, 0)

    p_v = tl.make_block_ptr(v, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    p_o = tl.make_block_ptr(o, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
    b_v = tl.load(p_v, boundary_check=(0, 1))
    b_o = b_o * scale + tl.dot(b_A.to(b_v.dtype), b_v) * scale
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


@triton.jit(do_not_specialize=["T"])
def chunk_bwd_kernel_dv_local(
    q, k, g, do, dv, cu_seqlens, chunk_indices, scale, T,
    H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    USE_G: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    i_t, i_bh = tl.program_id(0), tl.program_id(1).to(tl.int64)
    i_b, i_h = i_bh // HV, i_bh % HV
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos = i_b * T

    q += (bos * H + i_h // (HV // H)) * K
    k += (bos * H + i_h // (HV // H)) * K
    do += (bos * HV + i_h) * V
    dv += (bos * HV + i_h) * V

    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        p_k = tl.make_block_ptr(k, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        p_qt = tl.make_block_ptr(q, (K, T), (1, H * K), (i_k * BK, i_t * BT), (BK, BT), (0, 1))
        b_A += tl.dot(tl.load(p_k, boundary_check=(0, 1)), tl.load(p_qt, boundary_check=(0, 1))) * scale

    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    if USE_G:
        g += bos * HV + i_h
        p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
        b_g = tl.load(p_g, boundary_check=(0,)).to(tl.float32)
        b_A *= tl.exp2(b_g[None, :] - b_g[:, None])
    m_A = (o_t[:, None] <= o_t[None, :]) & (m_t[:, None] & m_t[None, :])
    b_A = tl.where(m_A, b_A, 0).to(do.dtype.element_ty)

    for i_v in range(tl.cdiv(V, BV)):
        # full V tiles take an unmasked fast path, the ragged one a masked load
        if i_v * BV + BV <= V:
            p_do = tl.make_block_ptr(do, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
            b_do = tl.load(p_do, boundary_check=(0,))
        else:
            o_v = i_v * BV + tl.arange(0, BV)
            b_do = tl.load(do + o_t[:, None] * (HV * V) + o_v[None, :], mask=m_t[:, None] & (o_v < V)[None, :], other=0.0)
        b_dv = tl.dot(b_A, b_do)
        p_dv = tl.make_block_ptr(dv, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        tl.store(p_dv, b_dv.to(p_dv.dtype.element_ty), boundary_check=(0, 1))


@triton.jit(do_not_specialize=["T"])
def chunk_bwd_kernel_dqkwg(
    q, k, v, g, h, do, dh, dv, dq, dk, dw, dg, cu_seqlens, chunk_indices, scale, T,
    B: tl.constexpr, H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    USE_G: tl.constexpr, USE_DW: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    """dq, dk, dw and (fused) a per-K-block partial dg, gate read as [B, T, HV]."""
    i_k, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2).to(tl.int64)
    i_b, i_h = i_bh // HV, i_bh % HV
    all = (B * T).to(tl.int64)
    if IS_VARLEN:
        i_tg = i_t.to(tl.int64)
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        T = eos - bos
    else:
        i_tg = i_b * tl.cdiv(T, BT) + i_t
        bos = i_b * T

    v += (bos * HV + i_h) * V
    do += (bos * HV + i_h) * V
    h += (i_tg * HV + i_h).to(tl.int64) * K * V
    dh += (i_tg * HV + i_h).to(tl.int64) * K * V
    q += (bos * H + i_h // (HV // H)) * K
    k += (bos * H + i_h // (HV // H)) * K
    dq += (bos * HV + i_h) * K
    dk += (bos * HV + i_h) * K
    if USE_DW:
        dw += (bos * HV + i_h) * K
        dv += (bos * HV + i_h) * V

    b_dq = tl.zeros([BT, BK], dtype=tl.float32)
    b_dk = tl.zeros([BT, BK], dtype=tl.float32)
    b_ds = tl.zeros([BT, BT], dtype=tl.float32)
    b_dw = tl.zeros([BT, BK], dtype=tl.float32)
    b_dg_last = tl.zeros([1], dtype=tl.float32)
    for i_v in range(tl.cdiv(V, BV)):
        p_v = tl.make_block_ptr(v, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        p_do = tl.make_block_ptr(do, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
        p_h = tl.make_block_ptr(h, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1))
        p_dh = tl.make_block_ptr(dh, (V, K), (1, V), (i_v * BV, i_k * BK), (BV, BK), (0, 1))
        b_v = tl.load(p_v, boundary_check=(0, 1))
        b_do = tl.load(p_do, boundary_check=(0, 1))
        b_h = tl.load(p_h, boundary_check=(0, 1))
        b_dh = tl.load(p_dh, boundary_check=(0, 1))
        b_ds += tl.dot(b_do, tl.trans(b_v))
        b_dq += tl.dot(b_do, b_h.to(b_do.dtype))
        b_dk += tl.dot(b_v, b_dh.to(b_v.dtype))
        if USE_G:
            b_dg_last += tl.sum(b_h.to(tl.float32) * b_dh.to(tl.float32))
        if USE_DW:
            p_dv = tl.make_block_ptr(dv, (T, V), (HV * V, 1), (i_t * BT, i_v * BV), (BT, BV), (1, 0))
            b_dv = tl.load(p_dv, boundary_check=(0, 1))
            b_dw += tl.dot(b_dv.to(b_v.dtype), b_h.to(b_v.dtype))
    if USE_DW:
        p_dw = tl.make_block_ptr(dw, (T, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        tl.store(p_dw, -b_dw.to(p_dw.dtype.element_ty), boundary_check=(0, 1))

    p_q = tl.make_block_ptr(q, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_k = tl.make_block_ptr(k, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    b_q = tl.load(p_q, boundary_check=(0, 1))
    b_k = tl.load(p_k, boundary_check=(0, 1))
    p_dq = tl.make_block_ptr(dq, (T, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_dk = tl.make_block_ptr(dk, (T, K), (HV * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    m_A = (o_t[:, None] >= o_t[None, :]) & (m_t[:, None] & m_t[None, :])
    if USE_G:
        g += bos * HV + i_h
        dg += i_k * all * HV + bos * HV + i_h
        b_g = tl.load(tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,)), boundary_check=(0,)).to(tl.float32)
        last_idx = tl.minimum(i_t * BT + BT, T) - 1
        b_g_last = tl.load(g + last_idx * HV).to(tl.float32)
        b_dg_last *= tl.exp2(b_g_last)
        b_dq = b_dq * tl.exp2(b_g)[:, None] * scale
        b_dk = b_dk * tl.where(m_t, tl.exp2(-b_g + b_g_last), 0)[:, None]
        b_dg_last += tl.sum(b_dk * b_k.to(tl.float32))
        b_ds = tl.where(m_A, b_ds * tl.exp2(b_g[:, None] - b_g[None, :]), 0) * scale
        b_ds = b_ds.to(b_k.dtype)
        b_dq += tl.dot(b_ds, b_k)
        b_dk += tl.dot(tl.trans(b_ds), b_q)
        b_dg = tl.sum(b_dq * b_q.to(tl.float32), axis=1) - tl.sum(b_dk * b_k.to(tl.float32), axis=1)
        b_dg = tl.where(o_t < last_idx, b_dg, b_dg + b_dg_last)
        tl.store(dg + o_t * HV, b_dg, mask=m_t)
    else:
        b_ds = tl.where(m_A, b_ds, 0).to(b_k.dtype)
        b_dq += tl.dot(b_ds, b_k)
        b_dk += tl.dot(tl.trans(b_ds), b_q) * scale
        b_dq *= scale
    tl.store(p_dq, b_dq.to(p_dq.dtype.element_ty), boundary_check=(0, 1))
    tl.store(p_dk, b_dk.to(p_dk.dtype.element_ty), boundary_check=(0, 1))


def _chunk_indices(cu_seqlens, BT):
    lens = cu_seqlens[1:] - cu_seqlens[:-1]
    n = (lens + BT - 1) // BT
    seq = torch.repeat_interleave(torch.arange(len(lens), device=cu_seqlens.device), n)
    first = torch.cumsum(n, 0) - n
    idx = torch.arange(len(seq), device=cu_seqlens.device) - first[seq]
    return torch.stack([seq, idx], 1).to(cu_seqlens).contiguous()


def _blocks(K, V):
    return min(max(triton.next_power_of_2(K), 16), 64), min(max(triton.next_power_of_2(V), 16), 64)


def chunk_fwd_o(q, k, v, h, g=None, scale=None, cu_seqlens=None, chunk_size=64):
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    scale = K ** -0.5 if scale is None else scale
    BK, BV = _blocks(K, V)
    chunk_indices = _chunk_indices(cu_seqlens, chunk_size) if cu_seqlens is not None else None
    NT = triton.cdiv(T, chunk_size) if cu_seqlens is None else len(chunk_indices)
    o = torch.empty_like(v)
    chunk_fwd_kernel_o[(triton.cdiv(V, BV), NT, B * HV)](
        q, k, v, h, g, o, cu_seqlens, chunk_indices, scale, T,
        H=H, HV=HV, K=K, V=V, BT=chunk_size, BK=BK, BV=BV,
        USE_G=g is not None, IS_VARLEN=cu_seqlens is not None,
        num_warps=4, num_stages=2,
    )
    return o


def chunk_bwd_dv_local(q, k, do, g=None, scale=None, cu_seqlens=None, chunk_size=64):
    B, T, H, K = q.shape
    HV, V = do.shape[2], do.shape[3]
    scale = K ** -0.5 if scale is None else scale
    BK, BV = _blocks(K, V)
    chunk_indices = _chunk_indices(cu_seqlens, chunk_size) if cu_seqlens is not None else None
    NT = triton.cdiv(T, chunk_size) if cu_seqlens is None else len(chunk_indices)
    dv = torch.empty_like(do)
    chunk_bwd_kernel_dv_local[(NT, B * HV)](
        q, k, g, do, dv, cu_seqlens, chunk_indices, scale, T,
        H=H, HV=HV, K=K, V=V, BT=chunk_size, BK=BK, BV=BV,
        USE_G=g is not None, IS_VARLEN=cu_seqlens is not None,
        num_warps=4, num_stages=2,
    )
    return dv


def chunk_bwd_dqkwg(q, k, v, do, h, dh, g=None, w=None, dv=None, scale=None, cu_seqlens=None, chunk_size=64):
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    scale = K ** -0.5 if scale is None else scale
    BK, BV = _blocks(K, V)
    NK = triton.cdiv(K, BK)
    chunk_indices = _chunk_indices(cu_seqlens, chunk_size) if cu_seqlens is not None else None
    NT = triton.cdiv(T, chunk_size) if cu_seqlens is None else len(chunk_indices)
    dq = torch.empty(B, T, HV, K, dtype=torch.float32, device=q.device)
    dk = torch.empty(B, T, HV, K, dtype=torch.float32, device=q.device)
    dw = torch.empty(B, T, HV, K, dtype=w.dtype, device=q.device) if w is not None else None
    dg = torch.empty(NK, B, T, HV, dtype=torch.float32, device=q.device) if g is not None else None
    chunk_bwd_kernel_dqkwg[(NK, NT, B * HV)](
        q, k, v, g, h, do, dh, dv, dq, dk, dw, dg, cu_seqlens, chunk_indices, scale, T,
        B=B, H=H, HV=HV, K=K, V=V, BT=chunk_size, BK=BK, BV=BV,
        USE_G=g is not None, USE_DW=w is not None, IS_VARLEN=cu_seqlens is not None,
        num_warps=4, num_stages=2,
    )
    G = HV // H
    dq = dq.view(B, T, H, G, K).sum(3).to(q.dtype)
    dk = dk.view(B, T, H, G, K).sum(3).to(k.dtype)
    return dq, dk, dw, (dg.sum(0) if dg is not None else None)
