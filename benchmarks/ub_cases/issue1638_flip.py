"""The core of triton-ascend issue #1638, rebuilt: a 64x64 fp32 tile reversed along its
second dimension with ``tl.flip``.  The issue's kernel (which also inserts a column and
applies ``libdevice.tan`` twice, compiled with ``multibuffer=False``) failed with ub
overflow at 64 and compiled at 32; the flip lowers to 64x2x2x2x2x2x2.
"""

import triton
import triton.language as tl


@triton.jit
def flip_tile_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], tl.flip(x, 1))
