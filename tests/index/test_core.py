"""Core facts (`ascend_lint/index/core.py`): the tile behind each `tl.dot` lhs, and the
tiles callers hand to a helper's parameter, followed through helpers that pass on a
parameter of their own."""

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


def test_the_tiles_behind_dot_lhs_and_those_callers_pass_to_a_helper():
    index = KernelIndex.build(ast.parse(textwrap.dedent(HELPERS)))
    fns = {fn.name: fn for fn in index.kernels}
    # `tl.dot(b_c, tl.trans(b_c))` reads one operand: no lhs use
    assert [u.tile for u in index.core.dot_lhs_uses(fns["k"])] == ["b_a"]
    assert [u.tile for u in index.core.dot_lhs_uses(fns["inner"])] == ["x"]
    passed = [(p.caller.name, p.tile) for p in index.core.tiles_passed_to(fns["inner"], "x")]
    # `outer` passes its parameter `b` on (so `k`'s `b_b`), and its own local `a`
    assert sorted(passed) == [("k", "b_b"), ("outer", "a")]
