"""ASC003 runtime-branch-in-loop: an `if` on runtime values inside a kernel loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class RuntimeBranchInLoop(Rule):
    code = "ASC003"
    name = "runtime-branch-in-loop"
    summary = "`if` on a runtime value inside a loop of a kernel (scalar work each iteration, both sides live in UB)"
    reference = "reference_kernels/chunk_o.py::chunk_bwd_kernel_dqkwg"

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        for fn in ctx.index.kernels:
            for stmt in fn.statements:
                if not isinstance(stmt, ast.If):
                    continue
                loops = fn.context(stmt).loops
                if not loops or not fn.is_runtime(stmt.test, aliases):
                    continue
                names = fn.runtime_names_in(stmt.test, aliases)
                what = (
                    ", ".join(f"`{n}`" for n in names) if names else f"`{ast.unparse(stmt.test)}`"
                )
                loop = "tl.static_range" if loops[-1].static else "loop"
                yield Finding(
                    stmt,
                    f"runtime branch on {what} inside a {loop}; make it a constexpr split "
                    "or a `tl.where` mask",
                    end_node=stmt.test,
                )

    VALID = [
        # constexpr conditions and static_range variables are resolved at compile time
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr, BC: tl.constexpr, USE_G: tl.constexpr):
    NC = BT // BC
    for i in range(0, T, BT):
        if USE_G:
            pass
        if NC > 1:
            pass
    for r in tl.static_range(4):
        for c in tl.static_range(4):
            if r == c:
                pass
""",
        # a runtime branch outside any loop
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr):
    i_t = tl.program_id(0)
    if i_t * BT >= T:
        return
""",
        # constexpr conditional expressions are fine
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, REVERSE: tl.constexpr):
    for i in range(T):
        j = T - 1 - i if REVERSE else i
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, T, NT, BT: tl.constexpr):
    for r in range(NT):
        for c in range(NT):
            if r == c:
                pass
""",
            rows=[9],
        ),
        # a runtime test inside a static_range loop, and a runtime elif after a constexpr if
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit(do_not_specialize=["NT"])
def k(x, NT, W: tl.constexpr, BT: tl.constexpr, FIRST: tl.constexpr):
    i_t = tl.program_id(0)
    for t in tl.static_range(4):
        if i_t + t < NT:
            pass
        if FIRST:
            pass
        elif i_t * BT >= W:
            pass
""",
            rows=[9, 13],
        ),
    ]
