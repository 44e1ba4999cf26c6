"""ASC019 masked-negative-offset: a negative offset kept out by the mask, not by a clamp.

The evidence is the mask's own test. A lower bound on a value (`o >= 0`, `o > -1`,
`slot != -1`, `0 <= o`) says the lanes it keeps out hold a negative value; a shifted one
(`o >= c`, `o > c - 1`) says the same of `o - c`. The mask is followed through the locals
it is built in (`valid = (i >= 0) & (i < n)`, `m = valid & col_mask`, `valid[:, None]`),
and so is the address (`p = x + (o - 1) * D`). Only values that differ between lanes or
come from memory count: `tl.arange` vectors and `tl.load` results (index tables with a
-1 sentinel, scalar or block) and what is computed from them, not program-id arithmetic.
Safe: a use inside `tl.maximum`/`tl.where`/`tl.clamp`, a value clamped where it is
assigned, an access behind a branch or an early exit that tests the value.

The kernel facts come from the index (`index.bounds`): which values can be negative,
which vary between lanes or are loaded, the -1 sentinels launches bind, the guards
before an access and the table an index is loaded from. The rule matches mask tests to
the address's uses, words the message and builds the fix.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascend_lint.codemods import node_offsets
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import LANGUAGE, TRITON, JitFunction
from ascend_lint.index.bounds import (
    CLAMPS,
    comparison_pairs,
    is_atomic,
    last_assignment,
    last_assignment_order,
    lower_bound,
    strip_casts,
)
from ascend_lint.index.syntax import children, names_in, show
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_LOAD = f"{LANGUAGE}.load"
_ACCESSES = {_LOAD: 1, f"{LANGUAGE}.store": 2}  # -> position of `mask`
# Calls that reshape, broadcast or cast a mask without changing which lanes it keeps.
_SHAPING = frozenset({f"{LANGUAGE}.broadcast_to", f"{LANGUAGE}.expand_dims", f"{LANGUAGE}.reshape"})
_SHAPING_METHODS = frozenset({"to", "broadcast_to", "expand_dims", "reshape"})
_MAX_LOCALS = 64  # locals followed from one mask or one address


@dataclass
class _Bound:
    """One lower-bound test of a mask: the lanes it keeps out have `target < 0`."""

    test: ast.Compare  # the comparison as written
    value: ast.expr  # what it bounds: `o`, `o_x + W`
    shift: ast.expr | None  # `c` of `value >= c`; None for 0
    reach: int | None  # for a name: index of the assignment the test reads (None: none)
    via: str | None  # the mask local the test was found through
    target: ast.expr = field(init=False)  # `value`, or `value - shift`
    key: str = field(init=False)

    def __post_init__(self) -> None:
        if self.shift is None:
            self.target = self.value
        else:
            self.target = ast.BinOp(self.value, ast.Sub(), self.shift)
        self.key = ast.dump(self.target)


def _mask_of(call: ast.Call, position: int) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == "mask":
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _grouping(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of `text[start:end]` with the grouping parentheses right around it, if
    any: the fix's call brackets the expression already. Not a call's or a subscript's
    own (`f(o - 1)` keeps its parentheses)."""
    before, after = start, end
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    while after < len(text) and text[after] in " \t":
        after += 1
    if before == 0 or text[before - 1] != "(" or after >= len(text) or text[after] != ")":
        return start, end
    outside = before - 1
    while outside > 0 and text[outside - 1] in " \t":
        outside -= 1
    if outside > 0 and (text[outside - 1].isalnum() or text[outside - 1] in "_)]}\"'"):
        return start, end  # `f(`: a call's parentheses
    return before - 1, after + 1


def _language_prefix(ctx: RuleContext) -> str | None:
    """How the module spells `triton.language`, for the clamp the fix writes."""
    modules = ctx.index.aliases.modules
    spelled = sorted(name for name, qual in modules.items() if qual == LANGUAGE)
    if "tl" in spelled:
        return "tl"
    if spelled:
        return spelled[0]
    triton = sorted(name for name, qual in modules.items() if qual == TRITON)
    return f"{triton[0]}.language" if triton else None


class MaskedNegativeOffset(Rule):
    code = "ASC019"
    name = "masked-negative-offset"
    summary = (
        "a load/store whose mask keeps out negative offsets the address still uses: "
        "Ascend issues the masked-out access"
    )
    reference = "reference_kernels/shift_window.py::causal_conv1d_fwd_kernel"
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        bounds_of = index.bounds
        for fn in index.kernels:
            for qual, position in _ACCESSES.items():
                for call, stmt in index.calls_in(fn, qual):
                    mask = _mask_of(call, position)
                    if mask is None or not call.args:
                        continue
                    at = fn.order_of(stmt)
                    minus_one = bounds_of.sentinels(fn)
                    bounds = list(self._mask_bounds(ctx, fn, mask, at, minus_one))
                    if not bounds:
                        continue
                    known = bounds_of.varying(fn)
                    bounds = [
                        b
                        for b in bounds
                        if names_in(b.value) & known
                        and bounds_of.can_be_negative(fn, b.target, at)
                        and not bounds_of.guarded(fn, b.value, stmt, at)
                    ]
                    if not bounds:
                        continue
                    uses = self._uses(ctx, fn, call.args[0], at, bounds)
                    if uses:
                        yield self._finding(ctx, fn, call, at, uses)

    # -- the mask -----------------------------------------------------------------------
    def _mask_bounds(
        self,
        ctx: RuleContext,
        fn: JitFunction,
        mask: ast.AST,
        at: int,
        sentinels: frozenset[str],
    ) -> Iterator[_Bound]:
        """The lower-bound tests that every lane the mask keeps must pass: through `&`,
        `and`, subscripts, casts and reshapes, and the locals the mask is built in."""
        resolve = ctx.index.aliases.resolve
        pending: list[tuple[ast.AST, int, str | None]] = [(mask, at, None)]
        seen: set[tuple[str, int]] = set()
        while pending:
            node, here, via = pending.pop()
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
                pending += [(node.right, here, via), (node.left, here, via)]
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
                pending += [(v, here, via) for v in reversed(node.values)]
            elif isinstance(node, ast.Subscript):
                pending.append((node.value, here, via))
            elif isinstance(node, ast.Call):
                func = node.func
                if resolve(func) in _SHAPING and node.args:
                    pending.append((node.args[0], here, via))
                elif isinstance(func, ast.Attribute) and func.attr in _SHAPING_METHODS:
                    if resolve(func) is None:  # a method of the mask, not `tl.reshape`
                        pending.append((func.value, here, via))
            elif isinstance(node, ast.Name):
                found = last_assignment(fn, node.id, here)
                if found is not None and (node.id, found[0]) not in seen:
                    if len(seen) < _MAX_LOCALS:
                        seen.add((node.id, found[0]))
                        pending.append((found[1], found[0], via or node.id))
            elif isinstance(node, ast.Compare):
                for left, op, right in comparison_pairs(node):
                    bound = lower_bound(left, op, right, sentinels)
                    if bound is None:
                        continue
                    value, shift = bound
                    value = strip_casts(value)
                    reach = (
                        last_assignment_order(fn, value.id, here)
                        if isinstance(value, ast.Name)
                        else None
                    )
                    yield _Bound(node, value, shift, reach, via)

    # -- the address --------------------------------------------------------------------
    def _uses(
        self, ctx: RuleContext, fn: JitFunction, address: ast.AST, at: int, bounds: list[_Bound]
    ) -> list[tuple[_Bound, ast.AST]]:
        """Where the address reads a bound's target outside a clamp, directly or through
        the locals it is built in (`p = x + o * D; tl.load(p, mask=o >= 0)`). Loads
        nested in the address are accesses of their own, not followed."""
        resolve = ctx.index.aliases.resolve
        found: list[tuple[_Bound, ast.AST]] = []
        pending: list[tuple[ast.AST, int]] = [(address, at)]
        seen: set[tuple[str, int]] = set()
        while pending:
            expr, here = pending.pop()
            stack = [expr]
            while stack:
                node = stack.pop()
                if isinstance(node, (ast.Compare, ast.BoolOp)):
                    continue  # a 0/1 flag, not the value it tests
                if isinstance(node, ast.Call):
                    qual = resolve(node.func)
                    if qual in CLAMPS or qual == _LOAD or is_atomic(qual):
                        continue
                hit = self._match(fn, node, here, bounds)
                if hit is not None:
                    found.append((hit, node))
                    continue
                if isinstance(node, ast.Name):
                    local = last_assignment(fn, node.id, here)
                    if local is not None and (node.id, local[0]) not in seen:
                        if len(seen) < _MAX_LOCALS:
                            seen.add((node.id, local[0]))
                            pending.append((local[1], local[0]))
                    continue
                stack.extend(reversed(children(node)))
        return found

    @staticmethod
    def _match(fn: JitFunction, node: ast.AST, here: int, bounds: list[_Bound]) -> _Bound | None:
        for bound in bounds:
            target = bound.target
            if isinstance(target, ast.Name):
                if (
                    isinstance(node, ast.Name)
                    and node.id == target.id
                    and last_assignment_order(fn, node.id, here) == bound.reach
                ):
                    return bound
            elif type(node) is type(target) and ast.dump(node) == bound.key:
                return bound
        return None

    # -- the report ---------------------------------------------------------------------
    def _finding(
        self,
        ctx: RuleContext,
        fn: JitFunction,
        call: ast.Call,
        at: int,
        uses: list[tuple[_Bound, ast.AST]],
    ) -> Finding:
        bound, node = uses[0]
        use = self._text(ctx, node)
        clamp = f"{_language_prefix(ctx) or 'tl'}.maximum({use}, 0)"
        test = show(bound.test)
        mask = f"the mask `{bound.via}` (from `{test}`)" if bound.via else f"the mask test `{test}`"
        others = sorted({self._text(ctx, n) for _, n in uses[1:]} - {use})
        also = f" (and `{'`, `'.join(others)}`)" if others else ""
        table = (
            ctx.index.bounds.table_of(fn, bound.value.id, at)
            if bound.shift is None and isinstance(bound.value, ast.Name)
            else None
        )
        if table is not None:
            message = (
                f"`{bound.value.id}` is loaded from `{table}`, whose -1 entries {mask} keeps "
                f"out, but the address still uses `{use}` unclamped{also}: Triton-Ascend "
                "issues the access of masked-out lanes, which faults out of range; clamp it "
                f"with `{clamp}` and keep the mask"
            )
        else:
            message = (
                f"{mask} keeps out the lanes where `{use}` is negative, but the address "
                f"still uses it unclamped{also}: Triton-Ascend issues the access of "
                "masked-out lanes, which faults out of range; clamp it with "
                f"`{clamp}` and keep the mask"
            )
        return Finding(call, message, fix=self._fix(ctx, [n for _, n in uses], use))

    @staticmethod
    def _text(ctx: RuleContext, node: ast.AST) -> str:
        if getattr(node, "end_col_offset", None) is None:
            return show(node)
        start, end = node_offsets(ctx.source, node)
        text = ctx.source.text[start:end]
        return text if "\n" not in text else show(node)

    @staticmethod
    def _fix(ctx: RuleContext, uses: list[ast.AST], use: str) -> Fix | None:
        """Wrap every unclamped use in `tl.maximum(use, 0)`; None when a use has no
        source span or the edits would overlap or not parse."""
        prefix = _language_prefix(ctx)
        if prefix is None:
            return None
        spans: list[tuple[int, int, ast.AST]] = []
        for node in uses:
            if (
                getattr(node, "lineno", None) is None
                or getattr(node, "end_col_offset", None) is None
            ):
                return None
            start, end = node_offsets(ctx.source, node)
            spans.append((start, end, node))
        spans.sort(key=lambda s: (s[0], -s[1]))
        kept: list[tuple[int, int, ast.AST]] = []
        for start, end, node in spans:
            if kept and start < kept[-1][1]:
                if end <= kept[-1][1]:
                    continue  # inside a use already clamped
                return None
            kept.append((start, end, node))
        text = ctx.source.text
        edits = []
        for start, end, _node in reversed(kept):
            inner = text[start:end]
            start, end = _grouping(text, start, end)  # `(o - 1) * D` -> `tl.maximum(o - 1, 0) * D`
            clamp = f"{prefix}.maximum({inner}, 0)"
            # Each clamp replaces a whole expression (or its grouping brackets) with a
            # call, so the file parses when the call does; the fix loop re-parses the
            # whole file before writing it. (Parsing the file here, per finding, was
            # most of the rule's time.)
            try:
                ast.parse(clamp, mode="eval")
            except SyntaxError:
                return None
            edits.append(Edit(ctx.source.position_of(start), ctx.source.position_of(end), clamp))
        return Fix(
            Applicability.UNSAFE,
            f"Clamp `{use}` in the address",
            tuple(reversed(edits)),
        )

    VALID = [
        # clamped address, mask kept
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - (W - 1)
    b = tl.load(x + tl.maximum(o_t, 0), mask=o_t >= 0, other=0.0)
    tl.store(y + tl.arange(0, BT), b)
""",
        # an upper bound only
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, 0.0, mask=offs < n)
""",
        # a scalar index tested before use
        """
import triton
import triton.language as tl

@triton.jit
def k(x, idx, BLOCK: tl.constexpr):
    i = tl.program_id(0) - 1
    tl.store(x + tl.arange(0, BLOCK), 0.0, mask=i >= 0)
""",
        # clamped through `tl.where` in a local, the mask built in another local
        """
import triton
import triton.language as tl

@triton.jit
def k(src, dst, n, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = offs - PAD
    keep = (idx >= 0) & (idx < n)
    safe = tl.where(keep, idx, 0)
    tl.store(dst + offs, tl.load(src + safe, mask=keep, other=0.0), mask=offs < n)
""",
        # a shifted guard whose shifted use is clamped
        """
import triton
import triton.language as tl

@triton.jit
def k(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    before = tl.load(x + tl.maximum(o - 1, 0), mask=(o > 0) & (o < n), other=0.0)
    tl.store(out + o, before, mask=o < n)
""",
        # `o > 0` guarding `o` itself: the kept-out lane reads x[0], in range
        """
import triton
import triton.language as tl

@triton.jit
def k(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    b = tl.load(x + o, mask=(o > 0) & (o < n), other=0.0)
    tl.store(out + o, b, mask=o < n)
""",
        # an early exit on the sentinel before the access: the store never runs with -1
        """
import triton
import triton.language as tl

@triton.jit
def k(key, cache, slots, stride, D: tl.constexpr):
    i = tl.program_id(0)
    slot = tl.load(slots + i).to(tl.int64)
    if slot < 0:
        return
    offs = tl.arange(0, D)
    row = tl.load(key + i * D + offs)
    tl.store(cache + slot * stride + offs, row, mask=(slot >= 0) & (offs < D))
""",
        # a scalar branch around the access (a branch, not a mask)
        """
import triton
import triton.language as tl

@triton.jit
def k(state, table, out, D: tl.constexpr):
    b = tl.program_id(0)
    src = tl.load(table + b)
    offs = tl.arange(0, D)
    if src >= 0:
        row = tl.load(state + src * D + offs, mask=(src >= 0) & (offs < D))
        tl.store(out + b * D + offs, row)
""",
        # the tested index is not in the address
        """
import triton
import triton.language as tl

@triton.jit
def k(flags, x, y, D: tl.constexpr):
    r = tl.program_id(0)
    tag = tl.load(flags + r)
    offs = tl.arange(0, D)
    live = (tag >= 0) & (offs < D)
    tl.store(y + r * D + offs, tl.load(x + r * D + offs, mask=live, other=0.0), mask=live)
""",
        # program-id arithmetic tested as a scalar: no lane- or table-varying value
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, D: tl.constexpr):
    row = tl.program_id(0) - 1
    offs = tl.arange(0, D)
    prev = tl.load(x + row * D + offs, mask=(row >= 0) & (offs < D), other=0.0)
    tl.store(y + (row + 1) * D + offs, prev)
""",
        # a defensive test on an offset that cannot be negative
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    m_t = (o_t >= 0) & (o_t < T)
    tl.store(y + o_t, tl.load(x + o_t, mask=m_t, other=0.0), mask=m_t)
""",
        # the index is clamped where it is loaded
        """
import triton
import triton.language as tl

@triton.jit
def k(pages, table, out, PAGE: tl.constexpr):
    i = tl.program_id(0)
    page = tl.maximum(tl.load(table + i), 0)
    offs = tl.arange(0, PAGE)
    vals = tl.load(pages + page * PAGE + offs, mask=page >= 0, other=0.0)
    tl.store(out + i * PAGE + offs, vals)
""",
        # the branch bounds the window start from below: `t0 + i_w >= 1` there
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, W: tl.constexpr, BT: tl.constexpr):
    t0 = tl.program_id(0) * BT
    acc = tl.zeros((BT,), dtype=tl.float32)
    if t0 >= W:
        for i_w in tl.static_range(-W + 1, 1):
            o_x = t0 + i_w + tl.arange(0, BT)
            acc += tl.load(x + o_x, mask=(o_x >= 0) & (o_x < T), other=0.0)
    tl.store(y + t0 + tl.arange(0, BT), acc)
""",
        # an early exit on a sentinel the launcher passes as an argument
        """
import triton
import triton.language as tl

PAD_SLOT = -1


@triton.jit
def k(state, state_indices, out, pad_slot_id, D: tl.constexpr):
    b = tl.program_id(0)
    line = tl.load(state_indices + b).to(tl.int64)
    if line == pad_slot_id:
        return
    offs = tl.arange(0, D)
    row = tl.load(state + line * D + offs, mask=(line != pad_slot_id) & (offs < D), other=0.0)
    tl.store(out + b * D + offs, row)


def read_states(state, state_indices, out, pad_slot_id: int = PAD_SLOT):
    k[(out.shape[0],)](state, state_indices, out, pad_slot_id, D=64)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def conv_kernel(x, y, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - (W - 1)
    b = tl.load(x + o_t, mask=o_t >= 0, other=0.0)
    tl.store(y + tl.arange(0, BT), b)
""",
            rows=[8],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def conv_kernel(x, y, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - (W - 1)
    b = tl.load(x + tl.maximum(o_t, 0), mask=o_t >= 0, other=0.0)
    tl.store(y + tl.arange(0, BT), b)
""",
        ),
        # loaded indices with a -1 sentinel, the address built in a local
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def gather_kernel(src, idx, out, D: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.load(idx + tl.arange(0, BLOCK))
    p = src + rows[:, None] * D + tl.arange(0, D)[None, :]
    vals = tl.load(p, mask=(rows != -1)[:, None], other=0.0)
    tl.store(out + tl.arange(0, BLOCK)[:, None] * D + tl.arange(0, D)[None, :], vals)
""",
            rows=[9],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def gather_kernel(src, idx, out, D: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.load(idx + tl.arange(0, BLOCK))
    p = src + tl.maximum(rows, 0)[:, None] * D + tl.arange(0, D)[None, :]
    vals = tl.load(p, mask=(rows != -1)[:, None], other=0.0)
    tl.store(out + tl.arange(0, BLOCK)[:, None] * D + tl.arange(0, D)[None, :], vals)
""",
        ),
        # the mask built in a local
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def pad_copy_kernel(src, dst, n, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = offs - PAD
    valid = (idx >= 0) & (idx < n)
    vals = tl.load(src + idx, mask=valid, other=0.0)
    tl.store(dst + offs, vals, mask=offs < n + PAD)
""",
            rows=[10],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def pad_copy_kernel(src, dst, n, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = offs - PAD
    valid = (idx >= 0) & (idx < n)
    vals = tl.load(src + tl.maximum(idx, 0), mask=valid, other=0.0)
    tl.store(dst + offs, vals, mask=offs < n + PAD)
""",
        ),
        # the mask combined through several locals and broadcast with `[:, None]`
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def window_rows_kernel(x, y, T, D: tl.constexpr, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - W
    o_d = tl.arange(0, D)
    row_ok = (o_t >= 0) & (o_t < T)
    col_ok = o_d < D
    m = row_ok[:, None] & col_ok[None, :]
    p = x + o_t[:, None] * D + o_d[None, :]
    b = tl.load(p, mask=m, other=0.0)
    tl.store(y + (o_t + W)[:, None] * D + o_d[None, :], b)
""",
            rows=[13],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def window_rows_kernel(x, y, T, D: tl.constexpr, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - W
    o_d = tl.arange(0, D)
    row_ok = (o_t >= 0) & (o_t < T)
    col_ok = o_d < D
    m = row_ok[:, None] & col_ok[None, :]
    p = x + tl.maximum(o_t, 0)[:, None] * D + o_d[None, :]
    b = tl.load(p, mask=m, other=0.0)
    tl.store(y + (o_t + W)[:, None] * D + o_d[None, :], b)
""",
        ),
        # shifted guard: `o > 0` keeps out the lane whose `o - 1` is -1
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def prev_diff_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_range = o < n
    cur = tl.load(x + o, mask=in_range, other=0.0)
    has_prev = o > 0
    prev = tl.load(x + (o - 1), mask=in_range & has_prev, other=0.0)
    tl.store(out + o, cur - prev, mask=in_range)
""",
            rows=[11],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def prev_diff_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_range = o < n
    cur = tl.load(x + o, mask=in_range, other=0.0)
    has_prev = o > 0
    prev = tl.load(x + tl.maximum(o - 1, 0), mask=in_range & has_prev, other=0.0)
    tl.store(out + o, cur - prev, mask=in_range)
""",
        ),
        # shifted guard by a runtime argument, the shifted offset in a local
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def lag_kernel(x, y, n, shift, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = o - shift
    b = tl.load(x + src, mask=(o >= shift) & (o < n), other=0.0)
    tl.store(y + o, b, mask=o < n)
""",
            rows=[9],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def lag_kernel(x, y, n, shift, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = tl.maximum(o - shift, 0)
    b = tl.load(x + src, mask=(o >= shift) & (o < n), other=0.0)
    tl.store(y + o, b, mask=o < n)
""",
        ),
        # shifted guard on a store: `o_t >= 1` around the row `o_t - 1`
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def shift_back_kernel(x, y, T, D: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    o_d = tl.arange(0, D)
    b = tl.load(x + o_t[:, None] * D + o_d[None, :], mask=(o_t < T)[:, None], other=0.0)
    m_prev = (o_t >= 1) & (o_t < T)
    tl.store(y + (o_t - 1)[:, None] * D + o_d[None, :], b, mask=m_prev[:, None])
""",
            rows=[11],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def shift_back_kernel(x, y, T, D: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    o_d = tl.arange(0, D)
    b = tl.load(x + o_t[:, None] * D + o_d[None, :], mask=(o_t < T)[:, None], other=0.0)
    m_prev = (o_t >= 1) & (o_t < T)
    tl.store(y + tl.maximum(o_t - 1, 0)[:, None] * D + o_d[None, :], b, mask=m_prev[:, None])
""",
        ),
        # shifted guards by a constexpr (`o >= K`, `o > K - 1`) and by a literal
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def taps_kernel(x, y, n, K: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(x + (o - K), mask=o >= K, other=0.0)
    acc += tl.load(x + (o - K) * 2, mask=(o > K - 1) & (o < n), other=0.0)
    acc += tl.load(x + (o - 2), mask=o >= 2, other=0.0)
    tl.store(y + o, acc, mask=o < n)
""",
            rows=[8, 9, 10],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def taps_kernel(x, y, n, K: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(x + tl.maximum(o - K, 0), mask=o >= K, other=0.0)
    acc += tl.load(x + tl.maximum(o - K, 0) * 2, mask=(o > K - 1) & (o < n), other=0.0)
    acc += tl.load(x + tl.maximum(o - 2, 0), mask=o >= 2, other=0.0)
    tl.store(y + o, acc, mask=o < n)
""",
        ),
        # a scalar slot from a table with -1 entries
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def write_cache_kernel(key, cache, slot_mapping, stride, D: tl.constexpr):
    i = tl.program_id(0)
    slot = tl.load(slot_mapping + i).to(tl.int64)
    offs = tl.arange(0, D)
    row = tl.load(key + i * D + offs)
    tl.store(cache + slot * stride + offs, row, mask=(slot != -1) & (offs < D))
""",
            rows=[11],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def write_cache_kernel(key, cache, slot_mapping, stride, D: tl.constexpr):
    i = tl.program_id(0)
    slot = tl.load(slot_mapping + i).to(tl.int64)
    offs = tl.arange(0, D)
    row = tl.load(key + i * D + offs)
    tl.store(cache + tl.maximum(slot, 0) * stride + offs, row, mask=(slot != -1) & (offs < D))
""",
        ),
        # a scalar state index, the mask in a local, two accesses
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def state_update_kernel(state, state_indices, delta, D: tl.constexpr):
    b = tl.program_id(0)
    s = tl.load(state_indices + b)
    offs = tl.arange(0, D)
    live = (s >= 0) & (offs < D)
    base = state + s * D
    cur = tl.load(base + offs, mask=live, other=0.0)
    tl.store(base + offs, cur + tl.load(delta + b * D + offs), mask=live)
""",
            rows=[12, 13],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def state_update_kernel(state, state_indices, delta, D: tl.constexpr):
    b = tl.program_id(0)
    s = tl.load(state_indices + b)
    offs = tl.arange(0, D)
    live = (s >= 0) & (offs < D)
    base = state + tl.maximum(s, 0) * D
    cur = tl.load(base + offs, mask=live, other=0.0)
    tl.store(base + offs, cur + tl.load(delta + b * D + offs), mask=live)
""",
        ),
        # a sentinel the launcher passes as an argument: every launch binds it to -1
        Invalid(
            """
import triton
import triton.language as tl

PAD_SLOT = -1


@triton.jit
def read_state_kernel(state, state_indices, out, pad_slot_id, D: tl.constexpr):
    b = tl.program_id(0)
    line = tl.load(state_indices + b).to(tl.int64)
    offs = tl.arange(0, D)
    live = (line != pad_slot_id) & (offs < D)
    row = tl.load(state + line * D + offs, mask=live, other=0.0)
    tl.store(out + b * D + offs, row)


def read_states(state, state_indices, out, pad_slot_id: int = PAD_SLOT):
    read_state_kernel[(out.shape[0],)](state, state_indices, out, pad_slot_id, D=64)
""",
            rows=[14],
            fixed="""
import triton
import triton.language as tl

PAD_SLOT = -1


@triton.jit
def read_state_kernel(state, state_indices, out, pad_slot_id, D: tl.constexpr):
    b = tl.program_id(0)
    line = tl.load(state_indices + b).to(tl.int64)
    offs = tl.arange(0, D)
    live = (line != pad_slot_id) & (offs < D)
    row = tl.load(state + tl.maximum(line, 0) * D + offs, mask=live, other=0.0)
    tl.store(out + b * D + offs, row)


def read_states(state, state_indices, out, pad_slot_id: int = PAD_SLOT):
    read_state_kernel[(out.shape[0],)](state, state_indices, out, pad_slot_id, D=64)
""",
        ),
        # a block of page ids from a block table, `> -1` broadcast over the page
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def gather_pages_kernel(pages, block_table, out, PAGE: tl.constexpr, NB: tl.constexpr):
    seq = tl.program_id(0)
    o_b = tl.arange(0, NB)
    blk = tl.load(block_table + seq * NB + o_b)
    used = blk > -1
    o_p = tl.arange(0, PAGE)
    vals = tl.load(pages + blk[:, None] * PAGE + o_p[None, :], mask=used[:, None], other=0.0)
    tl.store(out + (seq * NB + o_b)[:, None] * PAGE + o_p[None, :], vals)
""",
            rows=[12],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def gather_pages_kernel(pages, block_table, out, PAGE: tl.constexpr, NB: tl.constexpr):
    seq = tl.program_id(0)
    o_b = tl.arange(0, NB)
    blk = tl.load(block_table + seq * NB + o_b)
    used = blk > -1
    o_p = tl.arange(0, PAGE)
    vals = tl.load(pages + tl.maximum(blk, 0)[:, None] * PAGE + o_p[None, :], mask=used[:, None], other=0.0)
    tl.store(out + (seq * NB + o_b)[:, None] * PAGE + o_p[None, :], vals)
""",
        ),
    ]
