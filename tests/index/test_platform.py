"""Platform facts (`ascend_lint/index/platform.py`): which kernel statements compile only
on one SoC or platform."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex

SOURCE = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x, IS_910_95: tl.constexpr, IS_A5: tl.constexpr):
        if IS_910_95:
            a = 1
        else:
            b = 2
        if not IS_A5:
            c = 3
        else:
            d = 4
        e = 5
    """
)


def test_the_a5_side_of_a_soc_test():
    index = KernelIndex.build(ast.parse(SOURCE))
    k = index.kernels[0]
    only = {
        ast.unparse(s).split(" ")[0]
        for s in k.statements
        if isinstance(s, ast.Assign) and index.platform.kernel_on_a5_only(k, s)
    }
    assert only == {"a", "d"}
