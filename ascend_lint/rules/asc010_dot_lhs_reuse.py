"""ASC010 dot-lhs-reuse: a tile used as the lhs of `tl.dot` and read again afterwards."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index import LANGUAGE, Aliases, JitFunction, own_nodes
from ascend_lint.index.syntax import walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

DOT = f"{LANGUAGE}.dot"


def lhs_tile(expr: ast.AST, aliases: Aliases) -> str | None:
    """The tile behind a dot operand: `b_A`, `b_A.to(dt)`, `tl.trans(b_do.to(dt))` -> the name.
    Anything else (`b_A + 0.0`, a load) is a fresh value, not a reuse hazard."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr == "to"
        ):
            expr = expr.func.value
        elif (
            isinstance(expr, ast.Call)
            and aliases.resolve(expr.func) == f"{LANGUAGE}.trans"
            and expr.args
        ):
            expr = expr.args[0]
        elif isinstance(expr, ast.Attribute) and expr.attr == "T":
            expr = expr.value
        else:
            return None


def _exclusive(a, b) -> bool:
    """Two statements on different sides of the same `if`: never both run."""
    sides = {id(br.node): br.taken for br in a}
    return any(id(br.node) in sides and sides[id(br.node)] != br.taken for br in b)


def _outside(stmt: ast.stmt, call: ast.Call) -> list[ast.AST]:
    """Nodes of the statement outside `call` (the dot itself)."""
    skipped = {id(n) for n in walk(call)}
    return [n for n in own_nodes(stmt) if id(n) not in skipped]


class DotLhsReuse(Rule):
    code = "ASC010"
    name = "dot-lhs-reuse"
    summary = "a `tl.dot` lhs tile read again later: Ascend's matmul may overwrite its lhs in UB"
    reference = "reference_kernels/chunk_o.py::chunk_bwd_kernel_dqkwg"

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        for fn in ctx.index.kernels:
            for call, stmt in ctx.index.calls_in(fn, DOT):
                if not call.args:
                    continue
                tile = lhs_tile(call.args[0], aliases)
                if tile is None:
                    continue
                rhs = call.args[1] if len(call.args) > 1 else None
                if rhs is not None and lhs_tile(rhs, aliases) == tile:
                    continue  # `tl.dot(b_k, tl.trans(b_k))`: one operand read, considered safe
                reuse = self._reuse(fn, stmt, call, tile)
                if reuse is not None:
                    yield Finding(
                        call,
                        f"`{tile}` is the lhs of this `tl.dot` and is {reuse}; Ascend's matmul may "
                        f"overwrite its lhs: reload it or dot a copy (`{tile} + 0.0`) taken before",
                    )

    @staticmethod
    def _reuse(fn: JitFunction, stmt: ast.stmt, call: ast.Call, tile: str) -> str | None:
        names = fn.statement_names()
        here = fn.order_of(stmt)
        # Read again in the same statement, outside this dot.
        if any(isinstance(n, ast.Name) and n.id == tile for n in _outside(stmt, call)):
            return f"read again on line {stmt.lineno}"
        # Read again after it, before it is redefined (not on the other side of an if).
        branches = fn.context(stmt).branches
        for index in range(here + 1, len(fn.statements)):
            reads, writes = names[index]
            if tile not in reads and tile not in writes:
                continue  # (asked first: most statements do not mention the tile)
            later = fn.statements[index]
            if _exclusive(branches, fn.context(later).branches):
                continue
            if tile in reads:
                return f"read again on line {later.lineno}"
            if tile in writes:
                break
        # Used in a loop it was defined outside of: every iteration after the first reuses it.
        loops = fn.context(stmt).loops
        if loops:
            loop = loops[-1].node
            defs = [i for i in range(here) if tile in names[i][1]]
            inside = [
                i
                for i in defs
                if any(lp.node is loop for lp in fn.context(fn.statements[i]).loops)
                or fn.statements[i] is loop
            ]
            if defs and not inside:
                return f"defined before the loop on line {loop.lineno} and used as lhs in every iteration"
        return None

    VALID = [
        """
import triton
import triton.language as tl

@triton.jit
def k(q, kk, o, BT: tl.constexpr, NV: tl.constexpr):
    b_q = tl.load(q)
    b_k = tl.load(kk)
    b_A = tl.dot(b_q, tl.trans(b_k))
    b_kk = tl.dot(b_k, tl.trans(b_k))
    for i_v in range(NV):
        b_A_i = b_A + 0.0
        b_v = tl.load(o + i_v)
        b_o = tl.dot(b_A_i, b_v)
        tl.store(o + i_v, b_o)
""",
    ]
    INVALID = [
        # read again after the dot
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(do, v, dv, A):
    b_do = tl.load(do)
    b_v = tl.load(v)
    b_dA = tl.dot(b_do, b_v)
    b_dv = tl.dot(tl.load(A), b_do)
""",
            rows=[9],
        ),
        # defined outside the loop, lhs in every iteration
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(A, v, u, NV: tl.constexpr):
    b_A = tl.load(A)
    for i_v in range(NV):
        b_v = tl.load(v + i_v)
        b_u = tl.dot(b_A.to(tl.float16), b_v)
        tl.store(u + i_v, b_u)
""",
            rows=[10],
        ),
    ]
