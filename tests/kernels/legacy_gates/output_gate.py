"""Legacy-layout kernel with gate-shaped outputs: `g` `[B, T, HV]` is read along time
with stride `HV`, and two tensors of the same shape are written with stride `HV` (ASC001
on each). Input to the G_T_CONTIG fix tests, for the output side of the rewrite.

* `dg` is fresh (`torch.empty_like`), written by a 1-D block-pointer store:
  `dg[t, h] = x[t, h] * exp2(g[t, h])`;
* `acc` belongs to the caller and is accumulated in place by a helper that loads and
  stores it (`acc[t, h] += x[t, h] * g[t, h]`): its old values must survive the rewrite.

Fixed-length `[B, T, HV]` storage or packed varlen `[1, T, HV]` through `cu_seqlens`.
The kernel is launched directly (`gate_outputs`) and through a launch helper that takes
its arguments as a dict built in the call (`gate_outputs_through_helper`, FLA's style).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _accumulate(acc_row, i_t, T, update, HV: tl.constexpr, BT: tl.constexpr):
    p_acc = tl.make_block_ptr(acc_row, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    b_acc = tl.load(p_acc, boundary_check=(0,))
    tl.store(p_acc, b_acc + update, boundary_check=(0,))


@triton.jit
def gate_outputs_kernel(
    x,
    g,
    dg,
    acc,
    cu_seqlens,
    T,
    HV: tl.constexpr,
    BT: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_b).to(tl.int64)
        eos = tl.load(cu_seqlens + i_b + 1).to(tl.int64)
        T = (eos - bos).to(tl.int32)
    else:
        bos = i_b * T
    p_x = tl.make_block_ptr(x + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    p_dg = tl.make_block_ptr(dg + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    b_x = tl.load(p_x, boundary_check=(0,))
    b_g = tl.load(p_g, boundary_check=(0,))
    tl.store(p_dg, b_x * tl.exp2(b_g), boundary_check=(0,))
    _accumulate(acc + bos * HV + i_h, i_t, T, b_x * b_g, HV, BT)


def _grid(B, T, HV, cu_seqlens, chunk_size):
    """(chunks of the longest sequence, sequences x heads)."""
    N = B if cu_seqlens is None else len(cu_seqlens) - 1
    if cu_seqlens is None:
        longest = T
    else:
        longest = int((cu_seqlens[1:] - cu_seqlens[:-1]).max())
    return triton.cdiv(longest, chunk_size), N * HV


def gate_outputs(x, g, acc, cu_seqlens=None, chunk_size=16):
    """Returns `dg`; adds `x * g` into `acc` in place."""
    B, T, HV = g.shape
    dg = torch.empty_like(g)
    gate_outputs_kernel[_grid(B, T, HV, cu_seqlens, chunk_size)](
        x, g, dg, acc, cu_seqlens, T, HV=HV, BT=chunk_size, IS_VARLEN=cu_seqlens is not None
    )
    return dg


def _launch(kernel, grid, kernel_kwargs):
    kernel[grid](**kernel_kwargs)


def gate_outputs_through_helper(x, g, acc, cu_seqlens=None, chunk_size=16):
    """`gate_outputs`, launched the way FLA's NPU wrappers launch."""
    B, T, HV = g.shape
    dg = torch.empty_like(g)
    _launch(
        gate_outputs_kernel,
        _grid(B, T, HV, cu_seqlens, chunk_size),
        kernel_kwargs={
            "x": x,
            "g": g,
            "dg": dg,
            "acc": acc,
            "cu_seqlens": cu_seqlens,
            "T": T,
            "HV": HV,
            "BT": chunk_size,
            "IS_VARLEN": cu_seqlens is not None,
        },
    )
    return dg
