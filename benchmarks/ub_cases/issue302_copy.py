"""The shape of triton-ascend issue #302, rebuilt: one fp32 tile of 48,000 values loaded
and stored.  The compiler reported "ub overflow, requires 3072000 bits while 1572864
bits available"; a maintainer explained it as 48000 x 32 bits x 2 (multibuffer).
"""

import triton
import triton.language as tl


@triton.jit
def copy_tile_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
