"""ASC003 runtime-branch-in-loop: an `if` on runtime values inside a kernel loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index import own_nodes
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class RuntimeBranchInLoop(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        for fn in ctx.index.kernels:
            for stmt in fn.statements:
                loops = fn.context(stmt).loops
                if not loops:
                    continue
                # `a if c else b` lowers to the same `scf.if` as a statement.
                tests = [(n, n.test) for n in own_nodes(stmt) if isinstance(n, ast.IfExp)]
                if isinstance(stmt, ast.If):
                    tests.insert(0, (stmt, stmt.test))
                for node, test in tests:
                    if not fn.is_runtime(test, aliases, at=stmt):
                        continue
                    names = fn.runtime_names_in(test, aliases, at=stmt)
                    what = ", ".join(f"`{n}`" for n in names) if names else f"`{ast.unparse(test)}`"
                    loop = "tl.static_range" if loops[-1].static else "loop"
                    kind = "branch" if node is stmt else "conditional expression"
                    yield Finding(
                        node,
                        f"runtime {kind} on {what} inside a {loop}; make it a constexpr split "
                        "or a `tl.where` mask",
                        end_node=test,
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
        # `is None` is resolved when the kernel compiles (Triton specialises None arguments)
        """
import triton
import triton.language as tl

@triton.jit
def k(x, scale, T, BT: tl.constexpr):
    for i in range(0, T, BT):
        o = i + tl.arange(0, BT)
        b = tl.load(x + o, mask=o < T)
        if scale is not None:
            b = b * tl.load(scale + o, mask=o < T)
        has_bias = scale is None
        if has_bias:
            pass
""",
        # the value a name holds where it is read: rebound to a load only after the loop
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr):
    n = BT // 2
    for i in range(T):
        if n > 1:
            pass
    n = tl.load(x)
""",
    ]
    INVALID = [
        # a loaded flag stays runtime through a cast
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, flags, N):
    for i in range(N):
        keep = tl.load(flags + i).to(tl.int1)
        if keep:
            tl.store(x + i, 0.0)
""",
            rows=[9],
        ),
        # literals assigned under a runtime branch: the value depends on the path taken
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(draft, target, out, N):
    rejected = False
    for i in range(N):
        if not rejected:
            tl.store(out + i, tl.load(draft + i))
        if tl.load(draft + i) != tl.load(target + i):
            rejected = True
""",
            rows=[9, 11],
        ),
        # a conditional expression lowers to the same runtime branch
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, N, total):
    pid = tl.program_id(0)
    last = 0
    for g in range(N):
        start = pid if pid >= last else pid + total
        last += tl.load(x + g)
""",
            rows=[10],
        ),
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
