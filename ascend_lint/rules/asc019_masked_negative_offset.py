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
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascend_lint.codemods import node_offsets
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import LANGUAGE, TRITON, JitFunction, pointer_names
from ascend_lint.index.syntax import children, int_literal, names_in, show, walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_LOAD = f"{LANGUAGE}.load"
_ACCESSES = {_LOAD: 1, f"{LANGUAGE}.store": 2}  # -> position of `mask`
_CLAMPS = frozenset({f"{LANGUAGE}.maximum", f"{LANGUAGE}.where", f"{LANGUAGE}.clamp"})
# Calls that reshape, broadcast or cast a mask without changing which lanes it keeps.
_SHAPING = frozenset({f"{LANGUAGE}.broadcast_to", f"{LANGUAGE}.expand_dims", f"{LANGUAGE}.reshape"})
_SHAPING_METHODS = frozenset({"to", "broadcast_to", "expand_dims", "reshape"})
_EXITS = (ast.Return, ast.Continue, ast.Break)
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


def _reaching(fn: JitFunction, name: str, at: int) -> tuple[int, ast.AST] | None:
    """The last assignment to `name` before statement `at` in source order (loops and
    branches are not followed: the index's straight-line approximation)."""
    best = None
    for order, value in fn.definitions.get(name, ()):
        if order >= at:
            break
        best = (order, value)
    return best


def _reach_index(fn: JitFunction, name: str, at: int) -> int | None:
    found = _reaching(fn, name, at)
    return None if found is None else found[0]


def _strip(expr: ast.AST) -> ast.AST:
    """`o.to(tl.int64)` -> `o`: a cast keeps the sign."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "to"
    ):
        expr = expr.func.value
    return expr


def _pairs(test: ast.Compare) -> Iterator[tuple[ast.AST, ast.cmpop, ast.AST]]:
    """`0 <= o < n` -> (0, <=, o), (o, <, n)."""
    left = test.left
    for op, right in zip(test.ops, test.comparators):
        yield left, op, right
        left = right


def _minus_one(node: ast.AST, sentinels: frozenset[str]) -> bool:
    """`-1`, or a kernel argument every launch binds to -1 (`pad_slot_id`)."""
    return int_literal(node) == -1 or (isinstance(node, ast.Name) and node.id in sentinels)


def _lower_bound(
    left: ast.AST, op: ast.cmpop, right: ast.AST, sentinels: frozenset[str] = frozenset()
) -> tuple[ast.expr, ast.expr | None] | None:
    """(value, c) when the comparison keeps only `value >= c` (c None for 0): `o >= 0`,
    `o > -1`, `o != -1`, `0 <= o`, `o >= k`, `o > 0` (c = 1), `o > k - 1` (c = k), and
    `slot != pad_slot_id` where every launch passes -1 for `pad_slot_id`."""
    if isinstance(op, (ast.Lt, ast.LtE)):  # `a < b` is `b > a`
        left, right = right, left
        op = ast.Gt() if isinstance(op, ast.Lt) else ast.GtE()
    elif isinstance(op, ast.NotEq) and _minus_one(left, sentinels):
        left, right = right, left
    if int_literal(left) is not None or isinstance(left, ast.Constant):
        return None
    shift: ast.expr | None
    if isinstance(op, ast.GtE):
        shift = right
    elif isinstance(op, ast.Gt):
        n = int_literal(right)
        if n is not None:
            shift = ast.Constant(n + 1)
        elif (
            isinstance(right, ast.BinOp)
            and isinstance(right.op, ast.Sub)
            and int_literal(right.right) == 1
        ):
            shift = right.left
        else:
            return None
    elif isinstance(op, ast.NotEq) and _minus_one(right, sentinels):
        shift = None
    else:
        return None
    if shift is not None:
        n = int_literal(shift)
        if n is not None and n < 0:
            return None  # `o >= -2`: says nothing about a negative offset
        if n == 0:
            shift = None
        elif isinstance(shift, ast.Constant) and not isinstance(shift.value, int):
            return None  # a float bound: a value test, not an index
    return left, shift


_NEGATED = {
    ast.Lt: ast.GtE,
    ast.LtE: ast.Gt,
    ast.Gt: ast.LtE,
    ast.GtE: ast.Lt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}


def _same(a: ast.AST, b: ast.AST) -> bool:
    a, b = _strip(a), _strip(b)
    if isinstance(a, ast.Name) or isinstance(b, ast.Name):
        return isinstance(a, ast.Name) and isinstance(b, ast.Name) and a.id == b.id
    return type(a) is type(b) and ast.dump(a) == ast.dump(b)


def _guards(
    test: ast.AST, holds: bool, value: ast.AST, sentinels: frozenset[str] = frozenset()
) -> bool:
    """Whether an `if` test bounds `value` from below where it `holds` (is true) or not:
    `if slot >= 0:` around the access, `if slot < 0: return` or `if slot == -1: return`
    before it, `else` of `if o < 0:`."""
    parts = [test]
    while parts:
        node = parts.pop()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            if _guards(node.operand, not holds, value, sentinels):
                return True
            continue
        joins = (ast.And, ast.BitAnd) if holds else (ast.Or, ast.BitOr)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, joins):
            parts += node.values
        elif isinstance(node, ast.BinOp) and isinstance(node.op, joins):
            parts += [node.left, node.right]
        elif isinstance(node, ast.Compare):
            for left, op, right in _pairs(node):
                if not holds:
                    op = _NEGATED[type(op)]() if type(op) in _NEGATED else None
                found = _lower_bound(left, op, right, sentinels) if op is not None else None
                if found is not None and _same(found[0], value):
                    return True
    return False


class _Uncast(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        inner = _strip(node)
        return self.visit(inner) if inner is not node else self.generic_visit(node)


def _norm(expr: ast.AST) -> str:
    """A structural key that ignores casts: `i_t.to(tl.int64) * BT` is `i_t * BT`."""
    return ast.dump(_Uncast().visit(copy.deepcopy(expr)))


def _floors(test: ast.AST, holds: bool, params: frozenset[str]) -> list[ast.AST]:
    """What an `if` test bounds from below where it `holds` (is true) or not: `t0` of
    `t0 >= W` true, `t_off` of `t_off < -(width - 1)` false, `i_t * BT` of
    `i_t * BT >= W`. The bound must be made of kernel arguments only (`i_t * BT >= T`
    says nothing about how large `T` is)."""
    parts, found = [test], []
    while parts:
        node = parts.pop()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            found += _floors(node.operand, not holds, params)
            continue
        joins = (ast.And, ast.BitAnd) if holds else (ast.Or, ast.BitOr)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, joins):
            parts += node.values
        elif isinstance(node, ast.BinOp) and isinstance(node.op, joins):
            parts += [node.left, node.right]
        elif isinstance(node, ast.Compare):
            for left, op, right in _pairs(node):
                above = (ast.GtE, ast.Gt) if holds else (ast.Lt, ast.LtE)
                below = (ast.LtE, ast.Lt) if holds else (ast.Gt, ast.GtE)
                for bounded, other, ops in ((left, right, above), (right, left, below)):
                    bounded = _strip(bounded)
                    if (
                        isinstance(bounded, (ast.Name, ast.BinOp))
                        and isinstance(op, ops)
                        and names_in(bounded) - params
                        and names_in(other) <= params
                    ):
                        found.append(bounded)
    return found


def _increasing(fn: JitFunction, expr: ast.AST, floor: ast.AST, at: int) -> bool:
    """Whether `expr` grows with `floor` (a name or an expression: it appears, and is
    only added or multiplied in), through the locals `expr` is built in."""
    name = floor.id if isinstance(floor, ast.Name) else None
    key = None if name is not None else _norm(floor)
    occurs = False
    pending: list[tuple[ast.AST, int, int]] = [(expr, at, 1)]
    seen: set[tuple[str, int]] = set()
    while pending:
        node, here, sign = pending.pop()
        node = _strip(node)
        if (name is not None and isinstance(node, ast.Name) and node.id == name) or (
            key is not None and type(node) is type(floor) and _norm(node) == key
        ):
            if sign < 0:
                return False
            occurs = True
        elif isinstance(node, ast.Name):
            found = _reaching(fn, node.id, here)
            if found is not None and (node.id, found[0]) not in seen:
                if len(seen) >= _MAX_LOCALS:
                    return False
                seen.add((node.id, found[0]))
                pending.append((found[1], found[0], sign))
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                pending += [(node.left, here, sign), (node.right, here, sign)]
            elif isinstance(node.op, ast.Sub):
                pending += [(node.left, here, sign), (node.right, here, -sign)]
            elif isinstance(node.op, ast.Mult):
                for side, other in ((node.left, node.right), (node.right, node.left)):
                    n = int_literal(other)
                    pending.append((side, here, -sign if n is not None and n < 0 else sign))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            pending.append((node.operand, here, -sign))
        elif isinstance(node, ast.Subscript):
            pending.append((node.value, here, sign))
    return occurs


def _base_name(expr: ast.AST) -> str | None:
    """The leftmost name of an address: `slot_mapping` of `slot_mapping + i * 2`."""
    while True:
        expr = _strip(expr)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            expr = expr.left
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        else:
            break
    return expr.id if isinstance(expr, ast.Name) else None


def _is_atomic(qual: str | None) -> bool:
    """`tl.atomic_add(p, v)` returns the old value at `p`, not an offset."""
    return qual is not None and qual.startswith(f"{LANGUAGE}.atomic_")


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


# A linear form over kernel arguments: {"": constant, name: coefficient}; None: unbounded.
_Form = dict[str, int]
_Interval = tuple["_Form | None", "_Form | None"]  # (lowest, highest)
_ZERO: _Form = {"": 0}
_UNKNOWN: _Interval = (None, None)


def _add(a: _Form | None, b: _Form | None, scale: int = 1) -> _Form | None:
    if a is None or b is None:
        return None
    out = dict(a)
    for name, coeff in b.items():
        out[name] = out.get(name, 0) + scale * coeff
    return {n: c for n, c in out.items() if c or n == ""}


def _scale(a: _Form | None, k: int) -> _Form | None:
    return None if a is None else {n: k * c for n, c in a.items()}


def _non_negative(form: _Form | None) -> bool:
    """Provably >= 0, kernel arguments (sizes, strides, offsets) taken as >= 0."""
    return form is not None and all(c >= 0 for c in form.values())


class _Ranges:
    """Lowest and highest value of an index expression as linear forms over the kernel's
    arguments, along its straight-line data flow: `i_t * BT + tl.arange(0, BT)` is at
    least 0; `o_t + i_w` with `i_w` over `tl.static_range(-W + 1, 1)` at least `1 - W`,
    and `o_t + i_w + W` at least 1. A value loaded from memory counts as a non-negative
    index inside arithmetic and as unbounded on its own (a `-1` sentinel)."""

    _DEPTH = 32

    def __init__(self, ctx: RuleContext):
        self.ctx = ctx
        self.active: set[tuple[int, str, int]] = set()

    def can_be_negative(self, fn: JitFunction, expr: ast.AST, at: int) -> bool:
        return not _non_negative(self.interval(fn, expr, at, True, 0)[0])

    def interval(
        self, fn: JitFunction, expr: ast.AST, at: int, whole: bool, depth: int
    ) -> _Interval:
        if depth > self._DEPTH:
            return _UNKNOWN
        deeper = depth + 1
        expr = _strip(expr)

        def part(node: ast.AST, keep: bool = False) -> _Interval:
            return self.interval(fn, node, at, whole and keep, deeper)

        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, bool) or not isinstance(expr.value, int):
                return _UNKNOWN
            return {"": expr.value}, {"": expr.value}
        if isinstance(expr, ast.Name):
            return self._name(fn, expr.id, at, whole, deeper)
        if isinstance(expr, ast.Subscript):
            return part(expr.value, True)
        if isinstance(expr, ast.UnaryOp):
            if isinstance(expr.op, ast.USub):
                low, high = part(expr.operand)
                return _scale(high, -1), _scale(low, -1)
            return part(expr.operand, True) if isinstance(expr.op, ast.UAdd) else _UNKNOWN
        if isinstance(expr, ast.IfExp):
            return self._join(part(expr.body, True), part(expr.orelse, True))
        if isinstance(expr, ast.BinOp):
            return self._binop(expr, part)
        if isinstance(expr, ast.Call):
            return self._call(fn, expr, part, whole)
        return _UNKNOWN

    @staticmethod
    def _join(a: _Interval, b: _Interval) -> _Interval:
        """Either of two values: bounds that hold for both."""
        low = _ZERO if _non_negative(a[0]) and _non_negative(b[0]) else None
        if a[0] is not None and a[0] == b[0]:
            low = a[0]
        high = a[1] if a[1] is not None and a[1] == b[1] else None
        return low, high

    @staticmethod
    def _binop(expr: ast.BinOp, part) -> _Interval:
        (l_low, l_high), (r_low, r_high) = part(expr.left), part(expr.right)
        op = expr.op
        if isinstance(op, ast.Add):
            return _add(l_low, r_low), _add(l_high, r_high)
        if isinstance(op, ast.Sub):
            return _add(l_low, r_high, -1), _add(l_high, r_low, -1)
        if isinstance(op, ast.Mult):
            for (k_low, k_high), (low, high) in (
                ((l_low, l_high), (r_low, r_high)),
                ((r_low, r_high), (l_low, l_high)),
            ):
                if k_low is not None and k_low == k_high and set(k_low) == {""}:
                    k = k_low[""]  # a literal factor
                    return (
                        (_scale(low, k), _scale(high, k))
                        if k >= 0
                        else (
                            _scale(high, k),
                            _scale(low, k),
                        )
                    )
            return (_ZERO if _non_negative(l_low) and _non_negative(r_low) else None), None
        if isinstance(op, (ast.FloorDiv, ast.Mod, ast.RShift, ast.BitAnd)):
            low = _ZERO if _non_negative(l_low) and _non_negative(r_low) else None
            high = _add(r_high, {"": -1}) if isinstance(op, ast.Mod) and low else None
            return low, high
        return _UNKNOWN

    def _call(self, fn: JitFunction, expr: ast.Call, part, whole: bool) -> _Interval:
        qual = self.ctx.index.aliases.resolve(expr.func)
        args = expr.args
        if qual == _LOAD or _is_atomic(qual):
            return (None if whole else _ZERO), None
        if qual in (f"{LANGUAGE}.program_id", f"{LANGUAGE}.num_programs"):
            return _ZERO, None
        if qual == f"{LANGUAGE}.arange" and len(args) == 2:
            return part(args[0])[0], _add(part(args[1])[1], {"": -1})
        if qual == f"{LANGUAGE}.cast" and args:
            return part(args[0], True)
        if qual == f"{LANGUAGE}.maximum" and len(args) == 2:
            (a_low, _), (b_low, _) = part(args[0]), part(args[1])
            low = _ZERO if _non_negative(a_low) or _non_negative(b_low) else (a_low or b_low)
            return low, None
        if qual == f"{LANGUAGE}.where" and len(args) == 3:
            return self._join(part(args[1], True), part(args[2], True))
        if qual in (f"{LANGUAGE}.minimum", f"{LANGUAGE}.cdiv") and len(args) == 2:
            lows = [part(a)[0] for a in args]
            return (_ZERO if all(_non_negative(x) for x in lows) else None), None
        if qual in (f"{LANGUAGE}.full",) and len(args) >= 2:
            return part(args[1], True)
        if qual in (f"{LANGUAGE}.zeros", f"{LANGUAGE}.zeros_like"):
            return _ZERO, _ZERO
        return _UNKNOWN

    def _name(self, fn: JitFunction, name: str, at: int, whole: bool, depth: int) -> _Interval:
        found = _reaching(fn, name, at)
        if found is not None:
            key = (id(fn), name, found[0])
            if key in self.active:  # a loop-carried update: `o = o - 1`
                return _UNKNOWN
            self.active.add(key)
            try:
                return self.interval(fn, found[1], found[0], whole, depth)
            finally:
                self.active.discard(key)
        loops = [order for order, _static in fn.loop_targets.get(name, ()) if order < at]
        if loops:
            return self._loop(fn, fn.statements[loops[-1]], depth)
        if name not in fn.params:
            return _UNKNOWN
        bindings = [b for b in self.ctx.index.helper_calls_to(fn) if b.caller is not None]
        if not bindings:
            return {name: 1}, {name: 1}  # a kernel argument
        for binding in bindings:  # a helper's parameter: what its callers bind to it
            caller = binding.caller
            key = (id(caller), name, id(binding.call))
            if key in self.active:
                return _UNKNOWN
            where = next((s for c, s in caller.calls if c is binding.call), None)
            here = caller.order_of(where) if where is not None else len(caller.statements)
            self.active.add(key)
            try:
                for value in binding.args.get(name, ()):
                    if not _non_negative(self.interval(caller, value, here, whole, depth)[0]):
                        return _UNKNOWN
            finally:
                self.active.discard(key)
        return _ZERO, None

    def _loop(self, fn: JitFunction, loop: ast.stmt, depth: int) -> _Interval:
        """A `range`/`tl.range`/`tl.static_range` loop variable: from the start to below
        the end (the other way round for a literal negative step)."""
        it = getattr(loop, "iter", None)
        if not isinstance(it, ast.Call) or not it.args or len(it.args) > 3:
            return _UNKNOWN
        at = fn.order_of(loop)

        def bound(node: ast.AST) -> _Interval:
            return self.interval(fn, node, at, False, depth)

        if len(it.args) == 1:
            return _ZERO, _add(bound(it.args[0])[1], {"": -1})
        step = int_literal(it.args[2]) if len(it.args) == 3 else 1
        start, end = bound(it.args[0]), bound(it.args[1])
        if step is not None and step < 0:
            return _add(end[0], {"": 1}), start[1]
        return start[0], _add(end[1], {"": -1})


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
        evidence: dict[int, set[str]] = {}
        sentinels: dict[int, frozenset[str]] = {}
        ranges = _Ranges(ctx)
        for fn in index.kernels:
            for qual, position in _ACCESSES.items():
                for call, stmt in index.calls_in(fn, qual):
                    mask = _mask_of(call, position)
                    if mask is None or not call.args:
                        continue
                    at = fn.order_of(stmt)
                    if id(fn) not in sentinels:
                        sentinels[id(fn)] = self._sentinels(ctx, fn)
                    minus_one = sentinels[id(fn)]
                    bounds = list(self._mask_bounds(ctx, fn, mask, at, minus_one))
                    if not bounds:
                        continue
                    if id(fn) not in evidence:
                        evidence[id(fn)] = self._evidence(ctx, fn, evidence, ())
                    known = evidence[id(fn)]
                    bounds = [
                        b
                        for b in bounds
                        if names_in(b.value) & known
                        and ranges.can_be_negative(fn, b.target, at)
                        and not self._safe(ctx, fn, b, stmt, at, minus_one)
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
                found = _reaching(fn, node.id, here)
                if found is not None and (node.id, found[0]) not in seen:
                    if len(seen) < _MAX_LOCALS:
                        seen.add((node.id, found[0]))
                        pending.append((found[1], found[0], via or node.id))
            elif isinstance(node, ast.Compare):
                for left, op, right in _pairs(node):
                    bound = _lower_bound(left, op, right, sentinels)
                    if bound is None:
                        continue
                    value, shift = bound
                    value = _strip(value)
                    reach = (
                        _reach_index(fn, value.id, here) if isinstance(value, ast.Name) else None
                    )
                    yield _Bound(node, value, shift, reach, via)

    # -- sentinels passed as arguments ------------------------------------------------
    def _sentinels(self, ctx: RuleContext, fn: JitFunction) -> frozenset[str]:
        """Parameters compared with `==`/`!=` that every launch (and every calling
        kernel) binds to -1: `slot != pad_slot_id` with `pad_slot_id=PAD_SLOT_ID` and
        `PAD_SLOT_ID = -1` in the module."""
        params = set(fn.params)
        candidates = {
            operand.id
            for test in fn.compares
            if any(isinstance(op, (ast.Eq, ast.NotEq)) for op in test.ops)
            for operand in (test.left, *test.comparators)
            if isinstance(operand, ast.Name) and operand.id in params
        }
        if not candidates:
            return frozenset()
        index = ctx.index
        bindings = [*index.launches_of(fn), *index.helper_calls_to(fn)]
        found = set()
        for name in candidates:
            values = [
                self._constant(ctx, value, binding.host, 0)
                for binding in bindings
                for expr in binding.args.get(name, ())
                for value, _guards in index.host.host_values(expr, binding.host)
            ]
            if values and all(v == -1 for v in values):
                found.add(name)
        return frozenset(found)

    def _constant(self, ctx: RuleContext, node: ast.AST, host, depth: int) -> int | None:
        """An integer a host expression stands for: a literal, a module constant, or the
        default of the launching function's parameter."""
        value = int_literal(node)
        if value is not None or not isinstance(node, ast.Name) or depth > 3:
            return value
        module = ctx.index.hosts[0]
        fdef = getattr(host, "node", None)
        if isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = fdef.args
            positional = [*args.posonlyargs, *args.args]
            defaults = dict(zip([a.arg for a in positional][::-1], args.defaults[::-1]))
            defaults.update(
                {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
            )
            if node.id in defaults:
                return self._constant(ctx, defaults[node.id], module, depth + 1)
        values = module.assignments.get(node.id, [])
        if len(values) == 1:
            return self._constant(ctx, values[0], module, depth + 1)
        return None

    # -- which values count ------------------------------------------------------------
    def _evidence(
        self,
        ctx: RuleContext,
        fn: JitFunction,
        done: dict[int, set[str]],
        stack: tuple[int, ...],
    ) -> set[str]:
        """Lane-varying and loaded values: locals computed from `tl.arange` or `tl.load`,
        and the parameters a calling kernel binds to one of its own."""
        index = ctx.index
        roots = index.sequences.vector_names(fn) | index.assigned_from(fn, _LOAD)
        for binding in index.helper_calls_to(fn):
            caller = binding.caller
            if caller is None or id(caller) in stack or id(caller) == id(fn):
                continue
            theirs = done.get(id(caller))
            if theirs is None:
                theirs = self._evidence(ctx, caller, done, (*stack, id(fn)))
            for param, exprs in binding.args.items():
                if any(names_in(e) & theirs for e in exprs):
                    roots.add(param)
        return pointer_names(fn, roots)

    def _safe(
        self,
        ctx: RuleContext,
        fn: JitFunction,
        bound: _Bound,
        stmt: ast.stmt,
        at: int,
        sentinels: frozenset[str],
    ) -> bool:
        """The value cannot be negative at the access: clamped where it is assigned, or
        the access sits behind a branch or an early exit that tests it."""
        value = bound.value
        if isinstance(value, ast.Name):
            found = _reaching(fn, value.id, at)
            if found is not None:
                assigned = _strip(found[1])
                if (
                    isinstance(assigned, ast.Call)
                    and ctx.index.aliases.resolve(assigned.func) in _CLAMPS
                ):
                    return True
        context = fn.context(stmt)
        guards = [(branch.test, branch.taken) for branch in context.branches]
        outer = {(id(b.node), b.taken) for b in context.branches}
        loops = {id(loop.node) for loop in context.loops}
        for order in range(at):  # `if slot < 0: return` before the access
            guard = fn.statements[order]
            if not (isinstance(guard, ast.If) and guard.body):
                continue
            if not isinstance(guard.body[-1], _EXITS):
                continue
            where = fn.context(guard)
            if all((id(b.node), b.taken) in outer for b in where.branches) and all(
                id(loop.node) in loops for loop in where.loops
            ):
                guards.append((guard.test, False))
        params = frozenset(fn.params)
        for test, holds in guards:
            if _guards(test, holds, value, sentinels):
                return True  # `if slot >= 0:` around it (a branch, not a mask)
            for floor in _floors(test, holds, params):
                if _increasing(fn, value, floor, at):
                    return True  # `elif t0 >= W:` around `t0 + i_w + tl.arange(0, BT)`
        return False

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
                    if qual in _CLAMPS or qual == _LOAD or _is_atomic(qual):
                        continue
                hit = self._match(fn, node, here, bounds)
                if hit is not None:
                    found.append((hit, node))
                    continue
                if isinstance(node, ast.Name):
                    local = _reaching(fn, node.id, here)
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
                    and _reach_index(fn, node.id, here) == bound.reach
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
        table = self._table(ctx, fn, bound, at)
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
    def _table(ctx: RuleContext, fn: JitFunction, bound: _Bound, at: int) -> str | None:
        """The table a tested index is loaded from (`slot_mapping` of
        `slot = tl.load(slot_mapping + i)`), when the test is on that index itself."""
        if bound.shift is not None or not isinstance(bound.value, ast.Name):
            return None
        resolve = ctx.index.aliases.resolve
        name, here = bound.value.id, at
        for _ in range(4):  # `slot = raw.to(tl.int64)`, `raw = tl.load(...)`
            found = _reaching(fn, name, here)
            if found is None:
                return None
            here, value = found
            loads = [
                n
                for n in walk(value)
                if isinstance(n, ast.Call) and n.args and resolve(n.func) == _LOAD
            ]
            if loads:
                base = _base_name(loads[0].args[0])
                for _ in range(4):  # `p = slot_mapping + i; slot = tl.load(p)`
                    local = _reaching(fn, base, here) if base else None
                    if local is None:
                        break
                    here, base = local[0], _base_name(local[1])
                return base
            inner = _strip(value)  # a cast or a copy keeps the entries; arithmetic not
            if not isinstance(inner, ast.Name):
                return None
            name = inner.id
        return None

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
