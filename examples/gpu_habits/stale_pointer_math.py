"""ASC002 demo: the launcher transposes the gate, the kernel still uses [B, T, HV] math.

DELIBERATELY WRONG.  This file exists only so that ascend-lint has a realistic
stale-pointer-math case to report; it is not tested for numerical correctness and
must not be used.  After ``g.transpose(1, 2).contiguous()`` the gate is stored
``[B, HV, T]``, so ``g += bos * HV + i_h`` with stride ``(HV,)`` walks across heads
instead of along time: wrong values, and on Ascend possibly misaligned UB accesses.
The corrected pointer math is ``gate_base`` / ``gate_block_ptr`` in
``reference_kernels/chunk_o.py``.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def gate_decay_kernel(g, x, y, T, HV: tl.constexpr, BT: tl.constexpr):
    """y[b, h, t] = x[b, h, t] * exp2(g[b, t, h]) (intended); x, y are [B, HV, T]."""
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    bos = i_b * T
    # stale: this is the [B, T, HV] offset, but the launcher passed [B, HV, T]
    g += bos * HV + i_h
    p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    b_g = tl.load(p_g, boundary_check=(0,))
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    row = tl.cast(i_bh, tl.int64) * T
    b_x = tl.load(x + row + o_t, mask=m_t, other=0.0)
    tl.store(y + row + o_t, b_x * tl.exp2(b_g), mask=m_t)


def gate_decay(g: torch.Tensor, x: torch.Tensor, chunk_size: int = 64) -> torch.Tensor:
    """g: [B, T, HV], x: [B, HV, T].  Wrong on purpose (see the module docstring)."""
    B, T, HV = g.shape
    assert x.shape == (B, HV, T)
    y = torch.empty_like(x)
    grid = (triton.cdiv(T, chunk_size), B * HV)
    gate_decay_kernel[grid](g.transpose(1, 2).contiguous(), x, y, T, HV=HV, BT=chunk_size)
    return y
