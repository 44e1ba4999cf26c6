"""ASC011 inplace-pointer-advance-in-loop: `ptr += ...` inside a kernel loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


def _advanced_pointer(stmt: ast.stmt) -> str | None:
    """`p += step`, `p -= step`, `p = p + step`: the name carried from one iteration to the next."""
    if (
        isinstance(stmt, ast.AugAssign)
        and isinstance(stmt.op, (ast.Add, ast.Sub))
        and isinstance(stmt.target, ast.Name)
    ):
        return stmt.target.id
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.BinOp)
        and isinstance(stmt.value.op, (ast.Add, ast.Sub))
        and isinstance(stmt.value.left, ast.Name)
        and stmt.value.left.id == stmt.targets[0].id
    ):
        return stmt.targets[0].id
    return None


class InplacePointerAdvanceInLoop(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fn in ctx.index.kernels:
            for stmt in fn.statements:
                name = _advanced_pointer(stmt)
                # The kernel's pointers are asked last: most kernels advance none in a loop.
                if (
                    name is not None
                    and fn.context(stmt).loops
                    and name in ctx.index.values.of(fn).pointers
                ):
                    yield Finding(
                        stmt,
                        f"`{name}` is advanced in place inside a loop; rebuild it from its base "
                        f"each iteration (`p = base + i * step`)",
                    )

    VALID = [
        """
import triton
import triton.language as tl

@triton.jit
def k(q, bos, T, H: tl.constexpr, K: tl.constexpr):
    q += bos * H * K
    acc = 0.0
    for i in range(T):
        p_q = q + i * H * K
        acc += tl.load(p_q)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(q, T, H: tl.constexpr, K: tl.constexpr):
    p_q = q + tl.program_id(0)
    for i in range(T):
        b = tl.load(p_q)
        p_q += H * K
""",
            rows=[10],
        ),
        # the same, spelled as a rebinding; an int counter is not a pointer
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BT: tl.constexpr):
    p = x + tl.arange(0, BT)
    while n > 0:
        tl.store(p, 0.0)
        p = p + BT
        n -= 1
""",
            rows=[10],
        ),
    ]
