"""Dtype uses in a kernel (`ascend_lint/index/dtypes.py`): how a dtype reaches each use,
and what the use does."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import LANGUAGE, KernelIndex

F64 = frozenset({f"{LANGUAGE}.float64"})


def uses(source: str, dtypes=F64):
    index = KernelIndex.build(ast.parse(textwrap.dedent(source)))
    kernel = index.kernels[0]
    return [
        (
            u.node.lineno,
            u.how.replace("{@0}", f"line {u.cited[0].lineno}") if u.cited else u.how,
            u.kind,
        )
        for u in index.dtypes.uses(kernel, dtypes)
    ]


def test_each_way_a_dtype_reaches_a_kernel():
    found = uses(
        """
        import triton
        import triton.language as tl

        WIDE = tl.float64
        ALSO = WIDE

        @triton.jit
        def k(x, o, BLOCK: tl.constexpr, ACC: tl.constexpr):
            dt = tl.float64
            a = tl.zeros([BLOCK], dtype=dt)
            b = tl.load(x).to(ALSO)
            c = tl.full([BLOCK], 0, dtype=ACC)
            d = tl.cast(a, tl.float64, bitcast=True)
            if x.dtype.element_ty == tl.float64:
                a = a + 1
            tl.store(o, a + b + c + d)

        def launch(x, o):
            k[(1,)](x, o, BLOCK=16, ACC=tl.float64)
        """
    )
    assert found == [
        (11, "held in `dt`, set on line 10", ""),
        (12, "the module constant `ALSO`", "to"),
        (13, "passed as `ACC` by the launch on line 20", ""),
        (14, "", "bitcast"),
    ]


def test_a_local_read_only_in_a_comparison_is_no_use():
    assert (
        uses(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def k(x, o):
                wide = tl.float64
                if o.dtype.element_ty == wide:
                    tl.store(o, tl.load(x))
            """
        )
        == []
    )
