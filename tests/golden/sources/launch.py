# Golden-output fixture: ASC001 over several lines, ASC003, and a fixable ASC004
# after non-ASCII text on the same line.
import triton
import triton.language as tl


@triton.jit
def gather_kernel(g, name, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    p_g = tl.make_block_ptr(
        g + i_h,
        (T,),
        (HV,),
        (i_t * BT,),
        (BT,),
        (0,),
    )
    for i in range(0, T, BT):
        if i < T:
            tl.load(p_g, boundary_check=(0,))


def launch(g, T):
    gather_kernel[(1, 4)](g, "ñé漢", T, HV=4, BT=64, num_warps=4)
