"""The shape of triton-ascend issue #2246, rebuilt from its description: the log-sum-exp
of a row over a large vocabulary (N = 151,936, BLOCK_N = 8,192, 19 blocks), each bf16
block loaded with a mask and converted to fp32, with an online max and sum.

Reported on A5 (Ascend950): the ``tl.static_range`` loop fails with ub overflow
(requires 4,333,568 bits, multibuffer on or off); the same loop as ``tl.range``
compiles, and the ``tl.static_range`` one is reported to compile on A3.
"""

import triton
import triton.language as tl


@triton.jit
def lse_static_range_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    m = tl.full([], -float("inf"), tl.float32)
    s = tl.zeros([], tl.float32)
    for start in tl.static_range(0, N, BLOCK_N):
        cols = start + offs
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    tl.store(out_ptr + row, m + tl.log(s))


@triton.jit
def lse_range_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    m = tl.full([], -float("inf"), tl.float32)
    s = tl.zeros([], tl.float32)
    for start in tl.range(0, N, BLOCK_N):
        cols = start + offs
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    tl.store(out_ptr + row, m + tl.log(s))
