"""Legacy-layout kernel: gate `[B, T, HV]` read along time with stride `HV` in a loop
over chunks, the previous chunk's last gate read through a runtime conditional
expression (0 for the first chunk). Input to the G_T_CONTIG fix tests: the fix must
choose the address inside that expression, not copy it into both branches.

y[b, h, t] = g[b, t, h] - g[b, (start of t's chunk) - 1, h], or g[b, t, h] in the first chunk
"""

import torch
import triton
import triton.language as tl


@triton.jit
def chunk_delta_kernel(g, y, T, HV: tl.constexpr, BT: tl.constexpr):
    i_bh = tl.program_id(0)
    i_b, i_h = i_bh // HV, i_bh % HV
    bos = i_b * T
    g += bos * HV + i_h
    for i_s in range(0, T, BT):
        o_s = i_s + tl.arange(0, BT)
        m_s = o_s < T
        b_g = tl.load(g + o_s * HV, mask=m_s, other=0).to(tl.float32)
        # The runtime conditional in the loop is the point of this kernel.
        b_gp = tl.load(g + (i_s - 1) * HV).to(tl.float32) if i_s > 0 else 0.0  # noqa: ASC003
        tl.store(y + i_bh * T + o_s, b_g - b_gp, mask=m_s)


def chunk_delta(g, chunk_size=16):
    B, T, HV = g.shape
    y = torch.empty(B, HV, T, dtype=torch.float32, device=g.device)
    chunk_delta_kernel[(B * HV,)](g, y, T, HV=HV, BT=chunk_size)
    return y
