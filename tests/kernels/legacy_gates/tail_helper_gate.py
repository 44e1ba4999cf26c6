"""Legacy-layout kernel: gate `[B, T, HV]` read along time with stride `HV` by a block
pointer (ASC001) and a scalar tail load in a `@triton.jit` helper, fixed-length or
packed varlen. Input to the G_T_CONTIG fix tests.

y[t, h, :] = x[t, h, :] * exp2(g[last token of t's chunk, h] - g[t, h])
"""

import torch
import triton
import triton.language as tl


@triton.jit
def gate_at(g_row, idx, HV: tl.constexpr):
    return tl.load(g_row + idx * HV).to(tl.float32)


@triton.jit
def chunk_decay_kernel(
    x,
    g,
    y,
    cu_seqlens,
    chunk_indices,
    T,
    HV: tl.constexpr,
    D: tl.constexpr,
    BT: tl.constexpr,
    BD: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    if IS_VARLEN:
        i_n = tl.load(chunk_indices + i_t * 2)
        i_t = tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos = tl.load(cu_seqlens + i_n)
        eos = tl.load(cu_seqlens + i_n + 1)
        T = (eos - bos).to(tl.int32)
    else:
        bos = i_b * T
    g += bos * HV + i_h
    p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    b_g = tl.load(p_g, boundary_check=(0,)).to(tl.float32)
    last_idx = tl.minimum(i_t * BT + BT, T) - 1
    b_g_last = gate_at(g, last_idx, HV)
    p_x = tl.make_block_ptr(
        x + (bos * HV + i_h) * D, (T, D), (HV * D, 1), (i_t * BT, 0), (BT, BD), (1, 0)
    )
    p_y = tl.make_block_ptr(
        y + (bos * HV + i_h) * D, (T, D), (HV * D, 1), (i_t * BT, 0), (BT, BD), (1, 0)
    )
    b_x = tl.load(p_x, boundary_check=(0, 1))
    b_y = b_x * tl.exp2(b_g_last - b_g)[:, None]
    tl.store(p_y, b_y.to(p_y.dtype.element_ty), boundary_check=(0, 1))


def _chunk_indices(cu_seqlens, BT):
    lens = cu_seqlens[1:] - cu_seqlens[:-1]
    n = (lens + BT - 1) // BT
    seq = torch.repeat_interleave(torch.arange(len(lens)), n)
    first = torch.cumsum(n, 0) - n
    idx = torch.arange(len(seq)) - first[seq]
    return torch.stack([seq, idx], 1).to(cu_seqlens).contiguous()


def chunk_decay(x, g, cu_seqlens=None, chunk_size=16):
    B, T, HV, D = x.shape
    chunk_indices = _chunk_indices(cu_seqlens, chunk_size) if cu_seqlens is not None else None
    NT = triton.cdiv(T, chunk_size) if cu_seqlens is None else len(chunk_indices)
    y = torch.empty_like(x)
    chunk_decay_kernel[(NT, B * HV)](
        x,
        g,
        y,
        cu_seqlens,
        chunk_indices,
        T,
        HV=HV,
        D=D,
        BT=chunk_size,
        BD=triton.next_power_of_2(D),
        IS_VARLEN=cu_seqlens is not None,
    )
    return y
