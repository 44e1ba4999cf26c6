"""Legacy-layout kernel: packed varlen sequences, gate `[1, T, HV]` read along time
with stride `HV` by a masked vector load (ASC001). Input to the G_T_CONTIG fix tests.

o[t, h, :] = v[t, h, :] * exp2(g[t, h] - g[first token of t's chunk, h])
"""

import torch
import triton
import triton.language as tl


@triton.jit
def gated_scale_kernel(
    v,
    g,
    o,
    cu_seqlens,
    T,
    HV: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BV: tl.constexpr,
):
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    bos = tl.load(cu_seqlens + i_n).to(tl.int64)
    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    T = (eos - bos).to(tl.int32)
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    b_g = tl.load(g + (bos + o_t) * HV + i_h, mask=m_t, other=0.0)
    b_first = tl.load(g + (bos + i_t * BT) * HV + i_h, mask=i_t * BT < T, other=0.0)
    p_v = tl.make_block_ptr(
        v + (bos * HV + i_h) * V, (T, V), (HV * V, 1), (i_t * BT, 0), (BT, BV), (1, 0)
    )
    p_o = tl.make_block_ptr(
        o + (bos * HV + i_h) * V, (T, V), (HV * V, 1), (i_t * BT, 0), (BT, BV), (1, 0)
    )
    b_v = tl.load(p_v, boundary_check=(0, 1))
    b_o = b_v * tl.exp2(b_g - b_first)[:, None]
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


def gated_scale(v, g, cu_seqlens, chunk_size=16):
    _B, T, HV, V = v.shape
    lens = cu_seqlens[1:] - cu_seqlens[:-1]
    NT = triton.cdiv(int(lens.max()), chunk_size)
    o = torch.empty_like(v)
    BV = triton.next_power_of_2(V)
    gated_scale_kernel[(NT, (len(cu_seqlens) - 1) * HV)](
        v, g, o, cu_seqlens, T, HV=HV, V=V, BT=chunk_size, BV=BV
    )
    return o
