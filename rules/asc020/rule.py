"""ASC020 chained-bool-op: `a and b and c` in a kernel, which Triton's code generator rejects."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import nest_bool_op
from ascend_lint.diagnostics import Applicability, Fix
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class ChainedBoolOp(Rule):
    fix_applicability = Applicability.SAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fn in ctx.index.kernels:
            chains = [node for node in fn.bool_ops if len(node.values) > 2]
            for node in sorted(chains, key=lambda n: (n.lineno, n.col_offset)):
                op = "and" if isinstance(node.op, ast.And) else "or"
                yield Finding(
                    node,
                    f"`{op}` chains {len(node.values)} operands; Triton compiles only pairs "
                    f"(`(a {op} b) {op} c`)",
                    fix=Fix(
                        Applicability.SAFE,
                        "Nest the operands into pairs",
                        (nest_bool_op(ctx.source, node),),
                    ),
                )

    VALID = [
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, USE_A: tl.constexpr, USE_B: tl.constexpr, USE_C: tl.constexpr):
    if (USE_A and USE_B) and USE_C:
        pass
    if USE_A and USE_B or USE_C:  # mixed: already pairs
        pass
    m = (tl.arange(0, 16) < n) & (tl.arange(0, 16) >= 0) & (tl.arange(0, 16) != 3)

def host(a, b, c):
    return a and b and c  # host Python, not compiled by Triton
""",
    ]
    INVALID = [
        # the Example of ASC020.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def copy_kernel(
    x, y, n, HAS_X: tl.constexpr, HAS_Y: tl.constexpr, ENABLED: tl.constexpr, BLOCK: tl.constexpr
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if HAS_X and HAS_Y and ENABLED:  # ASC020
        tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)
""",
            rows=[11],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, USE_A: tl.constexpr, USE_B: tl.constexpr, USE_C: tl.constexpr, USE_D: tl.constexpr):
    if USE_A and USE_B and USE_C:
        pass
    if (USE_A or  # first
            USE_B or
            (USE_C) or USE_D):
        pass
    ok = USE_A and (USE_B or USE_C or USE_D) and USE_D
""",
            rows=[7, 9, 13, 13],
        ),
    ]
