"""ASC006 constexpr-or-runtime: `if FLAG or <runtime>:` where FLAG guards an optional pointer."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascend_lint.index import names_in
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

# USE_G, HAS_BIAS, USE_INITIAL_STATE, TOPP_ENABLED: flags that say whether a pointer exists.
_FLAG = re.compile(r"^(?:USE|HAS|WITH|ENABLE)_(?P<a>\w+)$|^(?P<b>\w+?)_(?:ENABLED|ENABLE|ON)$")


def _flag_stem(name: str) -> str | None:
    m = _FLAG.match(name)
    return (m.group("a") or m.group("b")).lower() if m else None


def _guards(stem: str, pointer: str) -> bool:
    """Does a flag stem name this pointer? `initial_state`/`initial_state`, `g`/`g`, `topp`/`p`."""
    p = pointer.lower()
    return p == stem or stem.endswith(p) or stem.startswith(p) or p.startswith(stem)


def _only_under(fn, pointer: str, flag: str) -> bool:
    """Is every read of `pointer` in the kernel inside an `if` that tests `flag`? Then the
    flag is what makes the pointer optional, whatever the two are called."""
    reads = [i for i, (names, _) in enumerate(fn.statement_names()) if pointer in names]
    return bool(reads) and all(
        any(flag in names_in(branch.test) for branch in fn.context(fn.statements[i]).branches)
        or (isinstance(fn.statements[i], ast.If) and flag in names_in(fn.statements[i].test))
        for i in reads
    )


class ConstexprOrRuntime(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        for fn in ctx.index.kernels:
            for stmt in fn.statements:
                if not (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.BoolOp)):
                    continue
                operands = stmt.test.values
                flags = [
                    n
                    for op in operands
                    if not fn.is_runtime(op, aliases, at=stmt)
                    for n in names_in(op)
                    if n in fn.constexpr_params
                ]
                if not flags or not any(fn.is_runtime(op, aliases, at=stmt) for op in operands):
                    continue
                pointers = ctx.index.values.of(fn).pointers & set(fn.params)
                used = set().union(*(names_in(s) for s in (*stmt.body, *stmt.orelse)))
                guarded = [
                    (flag, p)
                    for flag in flags
                    if (stem := _flag_stem(flag))
                    for p in sorted(pointers & used)
                    if _guards(stem, p) or _only_under(fn, p, flag)
                ]
                if guarded:
                    flag, pointer = guarded[0]
                    op = "or" if isinstance(stmt.test.op, ast.Or) else "and"
                    yield Finding(
                        stmt,
                        f"`{flag}` guards the optional pointer `{pointer}` but is combined with a runtime "
                        f"test by `{op}`: both sides compile, including `{pointer}` arithmetic when it is None; "
                        f"nest `if not {flag}: ... elif <runtime>: ...`",
                        end_node=stmt.test,
                    )

    VALID = [
        """
import triton
import triton.language as tl

@triton.jit
def k(x, h0, T, W, BT: tl.constexpr, USE_INITIAL_STATE: tl.constexpr):
    i_t = tl.program_id(0)
    if not USE_INITIAL_STATE:
        b = tl.load(x + i_t)
    elif i_t * BT >= W:
        b = tl.load(x + i_t)
    else:
        b = tl.load(h0 + i_t)
""",
        # a non-pointer flag combined with a runtime test
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, NT, IS_VARLEN: tl.constexpr):
    i_t = tl.program_id(0)
    if IS_VARLEN and i_t < NT:
        b = tl.load(x + i_t)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, initial_state, T, W, BT: tl.constexpr, USE_INITIAL_STATE: tl.constexpr):
    i_t = tl.program_id(0)
    if not USE_INITIAL_STATE or i_t * BT >= W:
        b = tl.load(x + i_t)
    else:
        b = tl.load(initial_state + i_t)
""",
            rows=[8],
        ),
    ]
