# Golden-output fixture: ASC001 with an unsafe fix of several edits (kernel and launcher).
import triton
import triton.language as tl


@triton.jit
def gate_kernel(g, o, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    T = eos - bos
    p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    tl.store(o + i_nh * BT + tl.arange(0, BT), tl.load(p_g, boundary_check=(0,)))


def launch(g, o, cu_seqlens):
    B, T, HV = g.shape
    gate_kernel[(4, HV)](g, o, cu_seqlens, T, HV=HV, BT=64)
