"""Core facts (`ascend_lint/index/core.py`): the tiles a kernel hands to a matmul as
its lhs, its own `tl.dot`s and the helpers it passes a tile that they dot."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex

HELPERS = """
import triton
import triton.language as tl

@triton.jit
def inner(x, y):
    return tl.dot(x, y)

@triton.jit
def outer(a, b, c):
    a = a * 2
    return inner(b, c) + inner(a, c)

@triton.jit
def k(A, B, C):
    b_a, b_b, b_c = tl.load(A), tl.load(B), tl.load(C)
    s = tl.dot(b_a.to(tl.float16), b_b)
    t = tl.dot(b_c, tl.trans(b_c))
    u = outer(b_a, tl.trans(b_b), b_c)
"""


def test_dot_lhs_uses_follow_helpers_to_the_parameter_they_dot():
    index = KernelIndex.build(ast.parse(textwrap.dedent(HELPERS)))
    fns = {fn.name: fn for fn in index.kernels}
    # `outer` rebinds `a` before it reaches a dot: only `b` is dotted as it was passed
    assert index.core.dot_lhs_params(fns["outer"]) == {"b": "inner"}
    uses = [(u.tile, u.through) for u in index.core.dot_lhs_uses(fns["k"])]
    # `tl.dot(b_c, tl.trans(b_c))` reads one operand: no lhs use
    assert uses == [("b_a", None), ("b_b", "`inner`, which `outer` passes its `b`")]
