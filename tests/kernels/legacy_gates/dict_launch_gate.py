"""Legacy-layout kernels launched the way FLA's Ascend backends launch them: arguments
in a `kernel_kwargs` dict, a launch helper, and one of two kernels picked by the head
count. Gate `[B, T, HV]` read along time with stride `HV` (ASC001), fixed-length or
packed varlen. Input to the G_T_CONTIG fix tests.

y[t, h, :] = x[t, h, :] * exp2(g[t, h])        (decay_kernel)
y[t, h, :] = x[t, h, :] * exp2(g[t, h]) + 1    (decay_kernel_hv1, picked for HV == 1)
"""

import torch
import triton
import triton.language as tl


@triton.jit
def decay_kernel(
    x,
    g,
    y,
    cu_seqlens,
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
        bos = tl.load(cu_seqlens + i_b)
        eos = tl.load(cu_seqlens + i_b + 1)
        T = (eos - bos).to(tl.int32)
    else:
        bos = i_b * T
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    b_g = tl.load(g + bos * HV + i_h + o_t * HV, mask=m_t, other=0.0)
    p_x = tl.make_block_ptr(
        x + (bos * HV + i_h) * D, (T, D), (HV * D, 1), (i_t * BT, 0), (BT, BD), (1, 0)
    )
    p_y = tl.make_block_ptr(
        y + (bos * HV + i_h) * D, (T, D), (HV * D, 1), (i_t * BT, 0), (BT, BD), (1, 0)
    )
    b_y = tl.load(p_x, boundary_check=(0, 1)) * tl.exp2(b_g)[:, None]
    tl.store(p_y, b_y.to(p_y.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def decay_kernel_hv1(
    x,
    g,
    y,
    cu_seqlens,
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
        bos = tl.load(cu_seqlens + i_b)
        eos = tl.load(cu_seqlens + i_b + 1)
        T = (eos - bos).to(tl.int32)
    else:
        bos = i_b * T
    p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    b_g = tl.load(p_g, boundary_check=(0,))
    p_x = tl.make_block_ptr(
        x + (bos * HV + i_h) * D, (T, D), (HV * D, 1), (i_t * BT, 0), (BT, BD), (1, 0)
    )
    p_y = tl.make_block_ptr(
        y + (bos * HV + i_h) * D, (T, D), (HV * D, 1), (i_t * BT, 0), (BT, BD), (1, 0)
    )
    b_y = tl.load(p_x, boundary_check=(0, 1)) * tl.exp2(b_g)[:, None] + 1.0
    tl.store(p_y, b_y.to(p_y.dtype.element_ty), boundary_check=(0, 1))


def _launch(kernel, grid, kernel_kwargs):
    kernel[grid](**kernel_kwargs)


def decay(x, g, cu_seqlens=None, chunk_size=16):
    B, T, HV, D = x.shape
    if cu_seqlens is None:
        N, longest = B, T
    else:
        N, longest = len(cu_seqlens) - 1, int((cu_seqlens[1:] - cu_seqlens[:-1]).max())
    y = torch.empty_like(x)
    kernel = decay_kernel_hv1 if HV == 1 else decay_kernel
    kernel_kwargs = {
        "x": x,
        "g": g,
        "y": y,
        "cu_seqlens": cu_seqlens,
        "T": T,
        "HV": HV,
        "D": D,
        "BT": chunk_size,
        "BD": triton.next_power_of_2(D),
        "IS_VARLEN": cu_seqlens is not None,
    }
    _launch(kernel, (triton.cdiv(longest, chunk_size), N * HV), kernel_kwargs)
    return y
