"""ASC010 dot-lhs-reuse: a tile used as the lhs of `tl.dot` and read again afterwards."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.diagnostics import Citations
from ascend_lint.index import JitFunction, own_nodes
from ascend_lint.index.syntax import walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


def _exclusive(a, b) -> bool:
    """Two statements on different sides of the same `if`: never both run."""
    sides = {id(br.node): br.taken for br in a}
    return any(id(br.node) in sides and sides[id(br.node)] != br.taken for br in b)


def _outside(stmt: ast.stmt, call: ast.Call) -> list[ast.AST]:
    """Nodes of the statement outside `call` (the dot itself)."""
    skipped = {id(n) for n in walk(call)}
    return [n for n in own_nodes(stmt) if id(n) not in skipped]


class DotLhsReuse(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        core = ctx.index.core
        for fn in ctx.index.kernels:
            for use in core.dot_lhs_uses(fn):
                cites = Citations()
                reuse = self._reuse(fn, use.stmt, use.call, use.tile, cites)
                if reuse is None and self._is_parameter(fn, use.stmt, use.tile):
                    # A helper's parameter: the tile is the one its callers pass.
                    for passed in core.tiles_passed_to(fn, use.tile):
                        again = self._reuse(
                            passed.caller, passed.stmt, passed.call, passed.tile, cites
                        )
                        if again is not None:
                            reuse = (
                                f"the tile `{passed.tile}` that `{passed.caller.name}` passes on "
                                f"{cites(passed.stmt)}, which is {again}"
                            )
                            break
                if reuse is None:
                    continue
                yield Finding(
                    use.call,
                    f"`{use.tile}` is the lhs of this `tl.dot` and is {reuse}; Ascend's matmul "
                    f"may overwrite its lhs: reload it or dot a copy (`{use.tile} + 0.0`) "
                    "taken before",
                    related=tuple(cites.nodes),
                )

    @staticmethod
    def _is_parameter(fn: JitFunction, stmt: ast.stmt, name: str) -> bool:
        reach = fn.reaching(name, fn.order_of(stmt))
        return name in fn.params and bool(reach) and all(d.order < 0 for d in reach)

    @staticmethod
    def _reuse(
        fn: JitFunction, stmt: ast.stmt, call: ast.Call, tile: str, cites: Citations
    ) -> str | None:
        names = fn.statement_names()
        here = fn.order_of(stmt)
        # Read again in the same statement, outside this dot (its own target is no read).
        if any(
            isinstance(n, ast.Name) and n.id == tile and isinstance(n.ctx, ast.Load)
            for n in _outside(stmt, call)
        ):
            return f"read again on {cites(stmt)}"
        if tile in names[here][1]:
            return None  # `b = tl.dot(b, a)`: the statement ends the old tile
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
                return f"read again on {cites(later)}"
            if tile in writes:
                break
        # Used in a loop it was defined outside of: every iteration after the first
        # reuses it. A definition anywhere in the loop's body (after the dot included)
        # gives the next iteration a new tile.
        loops = fn.context(stmt).loops
        if loops:
            loop = loops[-1].node
            first, last = fn.loop_spans[id(loop)]
            if any(tile in names[i][1] for i in range(first - 1, last + 1)):
                return None
            if any(d.order < first - 1 for d in fn.reaching(tile, here)):
                return (
                    f"defined before the loop on {cites(loop)} and used as lhs in every iteration"
                )
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
        # the dot's own result rebinds its lhs: the next read (and the next iteration)
        # sees a new tile
        """
import triton
import triton.language as tl


@triton.jit
def k(A, B, out, N: tl.constexpr):
    a = tl.load(A)
    b = tl.load(B)
    for i in range(N):
        b = tl.dot(b.to(tl.float16), a)
    tl.store(out, b)
    c = tl.load(B)
    c = tl.dot(c, a)
    tl.store(out, c)
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
        # a helper dots its parameter; the caller passes the same tile every iteration
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def _apply(b_a, b_v):
    return tl.dot(b_a, b_v)


@triton.jit
def k(A, v, u, NV: tl.constexpr):
    b_A = tl.load(A)
    for i_v in range(NV):
        b_v = tl.load(v + i_v)
        b_u = _apply(b_A, b_v)
        tl.store(u + i_v, b_u)
""",
            rows=[8],
        ),
    ]
