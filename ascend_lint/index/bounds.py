"""Lower bounds of index values inside a kernel: which values can be negative where a
statement reads them, and the facts that decide it.

Knows, per kernel:

* the lowest and highest value of an index expression, as linear forms over the
  kernel's arguments, along its straight-line data flow (`can_be_negative`):
  `tl.arange`, `range`/`tl.range`/`tl.static_range` variables, program ids, literals,
  arithmetic, clamps, what callers bind to a helper's parameters; a value loaded from
  memory is a non-negative index inside arithmetic and unbounded on its own;
* which values vary between lanes or come from memory (`varying`): locals computed from
  `tl.arange` or `tl.load`, and the parameters a calling kernel binds to one of those;
* the parameters every launch and every calling kernel binds to -1 (`sentinels`:
  `pad_slot_id=PAD_SLOT_ID` with `PAD_SLOT_ID = -1` in the module);
* whether a value is kept non-negative at an access by its own assignment (a clamp) or
  by a branch around it or an early exit before it that tests it (`guarded`);
* the table an index is loaded from (`table_of`: `slot_mapping` of
  `slot = tl.load(slot_mapping + i)`);
* the comparisons that bound a value from below (`lower_bound`: `o >= 0`, `o > -1`,
  `slot != -1`, `o >= c`, `o > c - 1`), for rules that read masks.

Depends on: the core (aliases, calls, launches and helper calls bound to their callees,
the module's host code), `host` (what a launch argument holds) and `sequences` (the
index vectors of a kernel). Nothing else of the index depends on it; rules reach it as
`index.bounds`.

Costs: nothing until asked. Sentinels and varying values are computed once per kernel
and kept; an interval is computed per query, following at most 32 levels of the data
flow (a loop-carried update stops it), and the guards of an access scan the statements
before it once.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ascend_lint.index.aliases import LANGUAGE
from ascend_lint.index.syntax import expr_key, int_literal, names_in, walk
from ascend_lint.index.values import is_program_count_call, is_program_id_call, pointer_names

if TYPE_CHECKING:
    from ascend_lint.index.core import CoreFacts
    from ascend_lint.index.host import HostFacts
    from ascend_lint.index.kernels import JitFunction
    from ascend_lint.index.sequences import SequenceFacts

_LOAD = f"{LANGUAGE}.load"
CLAMPS = frozenset({f"{LANGUAGE}.maximum", f"{LANGUAGE}.where", f"{LANGUAGE}.clamp"})
_EXITS = (ast.Return, ast.Continue, ast.Break)
_MAX_LOCALS = 64  # locals followed from one value


def last_assignment(fn: JitFunction, name: str, at: int) -> tuple[int, ast.AST] | None:
    """The last assignment to `name` before statement `at` in source order (loops and
    branches are not followed: the index's straight-line approximation)."""
    best = None
    for order, value in fn.definitions.get(name, ()):
        if order >= at:
            break
        best = (order, value)
    return best


def last_assignment_order(fn: JitFunction, name: str, at: int) -> int | None:
    found = last_assignment(fn, name, at)
    return None if found is None else found[0]


def strip_casts(expr: ast.AST) -> ast.AST:
    """`o.to(tl.int64)` -> `o`: a cast keeps the sign."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "to"
    ):
        expr = expr.func.value
    return expr


def comparison_pairs(test: ast.Compare) -> Iterator[tuple[ast.AST, ast.cmpop, ast.AST]]:
    """`0 <= o < n` -> (0, <=, o), (o, <, n)."""
    left = test.left
    for op, right in zip(test.ops, test.comparators):
        yield left, op, right
        left = right


def _minus_one(node: ast.AST, sentinels: frozenset[str]) -> bool:
    """`-1`, or a kernel argument every launch binds to -1 (`pad_slot_id`)."""
    return int_literal(node) == -1 or (isinstance(node, ast.Name) and node.id in sentinels)


def lower_bound(
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
    a, b = strip_casts(a), strip_casts(b)
    if isinstance(a, ast.Name) or isinstance(b, ast.Name):
        return isinstance(a, ast.Name) and isinstance(b, ast.Name) and a.id == b.id
    return type(a) is type(b) and expr_key(a) == expr_key(b)


def _comparisons(test: ast.AST, holds: bool) -> Iterator[tuple[ast.Compare, bool]]:
    """The comparisons that must all be true (`holds`) or all false (not `holds`) where
    an `if` test is true or false: through `and`/`&` (where it holds), `or`/`|` (where
    it does not) and `not`, which flips it."""
    parts = [(test, holds)]
    while parts:
        node, now = parts.pop()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            parts.append((node.operand, not now))
            continue
        joins = (ast.And, ast.BitAnd) if now else (ast.Or, ast.BitOr)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, joins):
            parts += [(v, now) for v in node.values]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, joins):
            parts += [(node.left, now), (node.right, now)]
        elif isinstance(node, ast.Compare):
            yield node, now


def _guards(
    test: ast.AST, holds: bool, value: ast.AST, sentinels: frozenset[str] = frozenset()
) -> bool:
    """Whether an `if` test bounds `value` from below where it `holds` (is true) or not:
    `if slot >= 0:` around the access, `if slot < 0: return` or `if slot == -1: return`
    before it, `else` of `if o < 0:`."""
    for node, now in _comparisons(test, holds):
        for left, op, right in comparison_pairs(node):
            if not now:
                op = _NEGATED[type(op)]() if type(op) in _NEGATED else None
            found = lower_bound(left, op, right, sentinels) if op is not None else None
            if found is not None and _same(found[0], value):
                return True
    return False


class _Uncast(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        inner = strip_casts(node)
        return self.visit(inner) if inner is not node else self.generic_visit(node)


def _norm(expr: ast.AST) -> str:
    """A structural key that ignores casts: `i_t.to(tl.int64) * BT` is `i_t * BT`."""
    return expr_key(_Uncast().visit(copy.deepcopy(expr)))


def _floors(test: ast.AST, holds: bool, params: frozenset[str]) -> list[ast.AST]:
    """What an `if` test bounds from below where it `holds` (is true) or not: `t0` of
    `t0 >= W` true, `t_off` of `t_off < -(width - 1)` false, `i_t * BT` of
    `i_t * BT >= W`. The bound must be made of kernel arguments only (`i_t * BT >= T`
    says nothing about how large `T` is)."""
    found = []
    for node, now in _comparisons(test, holds):
        above = (ast.GtE, ast.Gt) if now else (ast.Lt, ast.LtE)
        below = (ast.LtE, ast.Lt) if now else (ast.Gt, ast.GtE)
        for left, op, right in comparison_pairs(node):
            for bounded, other, ops in ((left, right, above), (right, left, below)):
                bounded = strip_casts(bounded)
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
        node = strip_casts(node)
        if (name is not None and isinstance(node, ast.Name) and node.id == name) or (
            key is not None and type(node) is type(floor) and _norm(node) == key
        ):
            if sign < 0:
                return False
            occurs = True
        elif isinstance(node, ast.Name):
            found = last_assignment(fn, node.id, here)
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
        expr = strip_casts(expr)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            expr = expr.left
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        else:
            break
    return expr.id if isinstance(expr, ast.Name) else None


def is_atomic(qual: str | None) -> bool:
    """`tl.atomic_add(p, v)` returns the old value at `p`, not an offset."""
    return qual is not None and qual.startswith(f"{LANGUAGE}.atomic_")


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

    def __init__(self, core: CoreFacts):
        self.core = core
        self.active: set[tuple[int, str, int]] = set()

    def can_be_negative(self, fn: JitFunction, expr: ast.AST, at: int) -> bool:
        return not _non_negative(self.interval(fn, expr, at, True, 0)[0])

    def interval(
        self, fn: JitFunction, expr: ast.AST, at: int, whole: bool, depth: int
    ) -> _Interval:
        if depth > self._DEPTH:
            return _UNKNOWN
        deeper = depth + 1
        expr = strip_casts(expr)

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
        qual = self.core.aliases.resolve(expr.func)
        args = expr.args
        if qual == _LOAD or is_atomic(qual):
            return (None if whole else _ZERO), None
        if is_program_id_call(expr, self.core.aliases) or is_program_count_call(
            expr, self.core.aliases
        ):
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
        found = last_assignment(fn, name, at)
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
        bindings = [b for b in self.core.helper_calls_to(fn) if b.caller is not None]
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


class BoundFacts:
    """Lower bounds, varying values, -1 sentinels, guards and tables of every kernel of a
    module (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts, sequences: SequenceFacts):
        self.core = core
        self.host = host
        self.sequences = sequences
        self._ranges = _Ranges(core)
        self._sentinels_of: dict[int, frozenset[str]] = {}
        self._varying: dict[int, set[str]] = {}

    def can_be_negative(self, fn: JitFunction, expr: ast.AST, at: int) -> bool:
        """Whether nothing proves `expr` >= 0 where statement `at` reads it (kernel
        arguments taken as >= 0)."""
        return self._ranges.can_be_negative(fn, expr, at)

    def sentinels(self, fn: JitFunction) -> frozenset[str]:
        """Parameters of `fn` that every launch and calling kernel binds to -1."""
        found = self._sentinels_of.get(id(fn))
        if found is None:
            found = self._sentinels_of[id(fn)] = self._sentinels(fn)
        return found

    def varying(self, fn: JitFunction) -> set[str]:
        """Lane-varying and loaded values of `fn`: locals computed from `tl.arange` or
        `tl.load`, and the parameters a calling kernel binds to one of its own."""
        if id(fn) not in self._varying:
            self._varying[id(fn)] = self._evidence(fn, self._varying, ())
        return self._varying[id(fn)]

    def _sentinels(self, fn: JitFunction) -> frozenset[str]:
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
        core = self.core
        bindings = [*core.launches_of(fn), *core.helper_calls_to(fn)]
        found = set()
        for name in candidates:
            values = [
                self._constant(value, binding.host, 0)
                for binding in bindings
                for expr in binding.args.get(name, ())
                for value, _guards in self.host.host_values(expr, binding.host)
            ]
            if values and all(v == -1 for v in values):
                found.add(name)
        return frozenset(found)

    def _constant(self, node: ast.AST, host, depth: int) -> int | None:
        """An integer a host expression stands for: a literal, a module constant, or the
        default of the launching function's parameter."""
        value = int_literal(node)
        if value is not None or not isinstance(node, ast.Name) or depth > 3:
            return value
        module = self.core.hosts[0]
        fdef = getattr(host, "node", None)
        if isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = fdef.args
            positional = [*args.posonlyargs, *args.args]
            defaults = dict(zip([a.arg for a in positional][::-1], args.defaults[::-1]))
            defaults.update(
                {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
            )
            if node.id in defaults:
                return self._constant(defaults[node.id], module, depth + 1)
        values = module.assignments.get(node.id, [])
        if len(values) == 1:
            return self._constant(values[0], module, depth + 1)
        return None

    def _evidence(
        self,
        fn: JitFunction,
        done: dict[int, set[str]],
        stack: tuple[int, ...],
    ) -> set[str]:
        """Lane-varying and loaded values: locals computed from `tl.arange` or `tl.load`,
        and the parameters a calling kernel binds to one of its own."""
        roots = self.sequences.vector_names(fn) | self.core.assigned_from(fn, _LOAD)
        for binding in self.core.helper_calls_to(fn):
            caller = binding.caller
            if caller is None or id(caller) in stack or id(caller) == id(fn):
                continue
            theirs = done.get(id(caller))
            if theirs is None:
                theirs = self._evidence(caller, done, (*stack, id(fn)))
            for param, exprs in binding.args.items():
                if any(names_in(e) & theirs for e in exprs):
                    roots.add(param)
        return pointer_names(fn, roots)

    def guarded(self, fn: JitFunction, value: ast.AST, stmt: ast.stmt, at: int) -> bool:
        """`value` cannot be negative at statement `stmt` (order `at`): clamped where it
        is assigned, or `stmt` sits behind a branch or an early exit that tests it."""
        if isinstance(value, ast.Name):
            found = last_assignment(fn, value.id, at)
            if found is not None:
                assigned = strip_casts(found[1])
                if (
                    isinstance(assigned, ast.Call)
                    and self.core.aliases.resolve(assigned.func) in CLAMPS
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
        sentinels = self.sentinels(fn)
        params = frozenset(fn.params)
        for test, holds in guards:
            if _guards(test, holds, value, sentinels):
                return True  # `if slot >= 0:` around it (a branch, not a mask)
            for floor in _floors(test, holds, params):
                if _increasing(fn, value, floor, at):
                    return True  # `elif t0 >= W:` around `t0 + i_w + tl.arange(0, BT)`
        return False

    def table_of(self, fn: JitFunction, name: str, at: int) -> str | None:
        """The table the value `name` holds at statement `at` is loaded from
        (`slot_mapping` of `slot = tl.load(slot_mapping + i)`), through casts and copies."""
        resolve = self.core.aliases.resolve
        here = at
        for _ in range(4):  # `slot = raw.to(tl.int64)`, `raw = tl.load(...)`
            found = last_assignment(fn, name, here)
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
                    local = last_assignment(fn, base, here) if base else None
                    if local is None:
                        break
                    here, base = local[0], _base_name(local[1])
                return base
            inner = strip_casts(value)  # a cast or a copy keeps the entries; arithmetic not
            if not isinstance(inner, ast.Name):
                return None
            name = inner.id
        return None
