"""Lower bounds of index values inside a kernel: which values can be negative where a
statement reads them, and the facts that decide it.

Values are read as linear forms (`linear`, asked as `linear_form(fn, expr, at)`: `x + o - 1`
is the pointer `x` (`offset` drops it) plus `o - 1`, whatever the grouping and the
locals it is built in). Knows, per kernel:

* the lowest and highest value of a form (`interval`), as forms over the kernel's
  arguments (taken as >= 0: sizes, strides, offsets): `tl.arange` lanes, `range` /
  `tl.range` / `tl.static_range` variables, program ids, literals, clamps
  (`tl.maximum`, `tl.where`, `tl.clamp`), integer division and remainder, what callers
  bind to a helper's parameters; a value loaded from memory is a non-negative index
  inside arithmetic and unbounded on its own (a `-1` sentinel), and the difference of
  consecutive entries of an offsets table (`eos - bos`) is a length, >= 0;
* the comparisons that bound a value from below (`lower_bounds`: `o >= 0`, `o > -1`,
  `o >= c`, `o > c - 1`, `slot != -1`, `ti != 0` where `ti >= 0`), each as the form
  that is >= 0 where the comparison holds; the ones every lane a mask keeps passes
  (`mask_bounds`, through `&`, broadcasts and the locals the mask is built in);
* the facts that hold where a statement runs (`facts_at`): the tests of the branches
  around it (the `else` of `if ti == 0:` has `ti >= 1`) and of the early exits before it
  (`if ti == 0: return`);
* the loads whose value only arms of `tl.where` selects use, issued for every lane
  (`arm_loads`: in an arm, or bound to a local only arms read), and the lower bounds a
  select's condition puts on the lanes an arm gives (`select_bounds`: `o == 0` false
  gives `o - 1 >= 0`, through `~`, `|`, `&` and the locals the condition is built in);
* whether a form can be negative where a statement reads it (`can_be_negative`): its
  lowest value, else a decomposition `form = F * fact + R` with `F >= 0` and `R` shown
  non-negative, else, for a kernel the module launches, the values every launch binds
  to its arguments (`BW = W`, `T_CHK = 256` with the launcher's `assert T_CHK >= width`);
  optionally with more facts assumed (a mask's or a select arm's bounds);
* how an address reads a bounded quantity (`factor`, `share`): `(o - 1) * D + d` reads
  `o - 1`, `D` times, and only `(o - 1) * D` of it moves with `o - 1`; where an
  expression spells it (`occurrences`: `o - 1` of `x + o - 1`, for a fix), and the paths
  along which a local set in both sides of an `if` holds each side's value (`paths`);
* which values vary between lanes or come from memory (`varying`, `varies`), the
  parameters every launch and calling kernel binds to -1 (`sentinels`), and the table
  a loaded index comes from (`table_of`).

Depends on: the core (kernels, launches and helper calls bound to their callees), `host`
(what a launch argument holds), `sequences` (index vectors and offsets tables) and the
kernels' reaching definitions through `linear`. Nothing else of the index depends on
it; rules reach it as `index.bounds`.

Costs: nothing until asked. Forms, atom bounds, sentinels, varying values, the facts
at a statement, the arm loads (one walk of the statements that hold a `tl.where`, and
one pass over the statements per local a load binds and an arm reads), the bounds of
each select arm and the verdict of each launch are computed once per kernel and kept;
a bound is one pass over a form's terms, and a decomposition tries at most 64 splits.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ascend_lint.index.aliases import LANGUAGE
from ascend_lint.index.constexpr import Definition
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import CallBinding, HostFunction, TupleElement
from ascend_lint.index.linear import (
    ZERO,
    Atom,
    Form,
    KernelForms,
    Occurrence,
    along,
    is_load_or_atomic,
    shape,
)
from ascend_lint.index.sequences import SequenceFacts, table_read
from ascend_lint.index.syntax import (
    MAX_HELPER_DEPTH,
    children,
    frozen_names,
    int_literal,
    own_nodes,
    show,
    walk,
)
from ascend_lint.index.values import kernel_values, pointer_names, strip_casts

_LOAD = f"{LANGUAGE}.load"
_ARANGE = f"{LANGUAGE}.arange"
_WHERE = f"{LANGUAGE}.where"
_RANGES = frozenset({f"{LANGUAGE}.range", f"{LANGUAGE}.static_range"})
_EXITS = (ast.Return, ast.Continue, ast.Break)
# Calls that reshape or broadcast a mask without changing which lanes it keeps.
_SHAPING = frozenset({f"{LANGUAGE}.broadcast_to", f"{LANGUAGE}.expand_dims", f"{LANGUAGE}.reshape"})
_SHAPING_METHODS = frozenset({"to", "broadcast_to", "expand_dims", "reshape"})
_MAX_SPLITS = 64  # decompositions tried for one `can_be_negative`

Interval = tuple["Form | None", "Form | None"]  # (lowest, highest), over the arguments
_UNKNOWN: Interval = (None, None)
_ONE = Form.constant(1)


def comparison_pairs(test: ast.Compare) -> Iterator[tuple[ast.AST, ast.cmpop, ast.AST]]:
    """`0 <= o < n` -> (0, <=, o), (o, <, n)."""
    left = test.left
    for op, right in zip(test.ops, test.comparators):
        yield left, op, right
        left = right


_NEGATED = {
    ast.Lt: ast.GtE,
    ast.LtE: ast.Gt,
    ast.Gt: ast.LtE,
    ast.GtE: ast.Lt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}


def comparisons(test: ast.AST, holds: bool) -> Iterator[tuple[ast.AST, ast.cmpop, ast.AST]]:
    """The comparisons (left, op, right) that all hold where an `if` test is true
    (`holds`) or false: through `and`/`&` where it holds, `or`/`|` where it does not,
    and `not`; each negated where the test is false (`ti == 0` false: `ti != 0`)."""
    for left, op, right, _at in comparisons_at(test, holds, -1):
        yield left, op, right


# A name in a select's condition: the value it stands for and the statement that
# computes it, or None.
Expand = Callable[[ast.Name, int], "tuple[ast.AST, int] | None"]


def comparisons_at(
    test: ast.AST, holds: bool, at: int, expand: Expand | None = None
) -> Iterator[tuple[ast.AST, ast.cmpop, ast.AST, int]]:
    """`comparisons`, each with the statement that evaluates it (`at`, the test's own).
    With `expand`, the test is a tensor condition (a select's): `~` is a `not` as well,
    broadcasts keep the lanes' values, and a name is read through the value `expand`
    gives it (`first = o == 0; tl.where(first, ...)`), at that value's statement."""
    parts = [(test, holds, at)]
    while parts:
        node, now, here = parts.pop()
        if isinstance(node, ast.UnaryOp) and (
            isinstance(node.op, ast.Not) or (expand and isinstance(node.op, ast.Invert))
        ):
            parts.append((node.operand, not now, here))
            continue
        if expand is not None:
            if isinstance(node, ast.Subscript):
                parts.append((node.value, now, here))
                continue
            if isinstance(node, ast.Name):
                found = expand(node, here)
                if found is not None:
                    parts.append((found[0], now, found[1]))
                continue
        joins = (ast.And, ast.BitAnd) if now else (ast.Or, ast.BitOr)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, joins):
            parts += [(v, now, here) for v in node.values]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, joins):
            parts += [(node.left, now, here), (node.right, now, here)]
        elif isinstance(node, ast.Compare):
            for left, op, right in comparison_pairs(node):
                if not now:
                    negated = _NEGATED.get(type(op))
                    if negated is None:
                        continue
                    op = negated()
                yield left, op, right, here


def plainly_non_negative(form: Form | None) -> bool:
    """>= 0 with every argument >= 0: no negative coefficient."""
    return form is not None and all(c >= 0 for c in form.terms.values())


def _add(a: Form | None, b: Form | None) -> Form | None:
    return None if a is None or b is None else a + b


def _scale(a: Form | None, k: int) -> Form | None:
    return None if a is None else a.scale(k)


def _times(a: Form | None, b: Form | None) -> Form | None:
    return None if a is None or b is None else a.times(b)


def _join(parts: list[Interval]) -> Interval:
    """Either of several values: the bounds that hold for all."""
    if not parts:
        return _UNKNOWN
    lows = [p[0] for p in parts]
    highs = [p[1] for p in parts]
    if lows[0] is not None and all(x == lows[0] for x in lows):
        low = lows[0]
    else:
        low = ZERO if all(plainly_non_negative(x) for x in lows) else None
    high = highs[0] if highs[0] is not None and all(x == highs[0] for x in highs) else None
    return low, high


def _product(a: Interval, b: Interval) -> Interval:
    """The bounds of a product: exact non-negative factors scale the other's bounds;
    two non-negative factors multiply their bounds."""
    for (xl, xh), (yl, yh) in ((a, b), (b, a)):
        if xl is not None and xl == xh and plainly_non_negative(xl):
            return _times(xl, yl), _times(xl, yh)
    if plainly_non_negative(a[0]) and plainly_non_negative(b[0]):
        return _times(a[0], b[0]), _times(a[1], b[1])
    return _UNKNOWN


@dataclass
class MaskBound:
    """A lower bound a mask puts on the lanes it keeps (or a select's condition on the
    lanes an arm gives): `form >= 0` on every one of them; the lanes it keeps out are
    those where `form` is negative."""

    test: ast.Compare  # the comparison as written
    value: ast.expr  # the side it bounds from below: `o` of `o > 0`
    form: Form  # `o - 1`
    shift: Form  # what the test takes from `value`: 1
    via: str | None  # the mask local the test was found through
    # the loaded value it bounds, when it bounds one alone (`slot >= 0`): evidence that
    # the value may be negative, not a non-negative index
    loads: frozenset[Atom] = field(default_factory=frozenset)

    @property
    def text(self) -> str:
        """The bounded quantity as text, for a message: `o - 1`."""
        text = show(self.value)
        if self.shift.terms:
            shifted = _text(self.shift)
            text = f"{text} - ({shifted})" if len(self.shift.terms) > 1 else f"{text} - {shifted}"
        return text

    @property
    def name(self) -> str | None:
        """The name the test bounds, when it bounds a name (`slot` of `slot != -1`, `o`
        of `o[None, :] >= 0`)."""
        value = self.value
        while isinstance(value, ast.Subscript):
            value = value.value
        return value.id if isinstance(value, ast.Name) else None


@dataclass(frozen=True)
class Share:
    """How an address reads a bounded quantity `by`: `factor * by` plus the rest."""

    factor: Form  # a stride: `D` of `(o - 1) * D`
    part: Form  # `factor * by` and the terms of the rest that move with `by`
    value: Form | None  # `part / factor` where it divides: the quantity the address scales


@dataclass(frozen=True)
class SelectArm:
    """One arm of `tl.where(test, a, b)`: `a` (`holds`) gives the lanes where `test`
    holds, `b` the others."""

    select: ast.Call
    test: ast.expr
    holds: bool
    at: int  # the statement that evaluates the select


@dataclass(frozen=True)
class ArmLoad:
    """A load whose value only arms of selects use (see `BoundFacts.arm_loads`)."""

    call: ast.Call
    stmt: ast.stmt  # the statement that issues it
    uses: tuple[tuple[SelectArm, ...], ...]  # per use: the arms around it, outermost first
    via: str | None = None  # the local it is bound to, when it is not in the arm itself


class BoundFacts:
    """Lower bounds, facts at statements, varying values, -1 sentinels and tables of
    every kernel of a module (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts, sequences: SequenceFacts):
        self.core = core
        self.host = host
        self.sequences = sequences
        self.aliases = core.aliases
        self._forms: dict[int, KernelForms] = {}
        self._sentinels_of: dict[int, frozenset[str]] = {}
        self._varying: dict[int, set[str]] = {}
        self._atoms: dict[tuple[int, Atom, bool], Interval] = {}
        self._intervals: dict[tuple[int, Form, frozenset[Atom], bool], Interval] = {}
        self._atom_varies: dict[tuple[int, Atom], bool] = {}
        self._negative: dict[tuple, bool] = {}
        self._busy: set[tuple[int, Atom, bool]] = set()
        self._facts: dict[tuple[int, int], tuple[Form, ...]] = {}
        self._exits: dict[int, list[tuple[int, ast.If, bool]]] = {}
        self._launched: dict[tuple[int, Form], bool] = {}
        self._arguments: dict[tuple[int, str], Form | None] = {}
        self._asserts: dict[int, list[tuple[int, ast.Assert]]] = {}
        self._arm_loads: dict[int, list[ArmLoad]] = {}
        self._select_bounds: dict[tuple[int, bool], list[MaskBound]] = {}

    # -- forms ---------------------------------------------------------------------------
    def forms(self, fn: JitFunction) -> KernelForms:
        found = self._forms.get(id(fn))
        if found is None:
            found = self._forms[id(fn)] = KernelForms(fn, self.aliases)
        return found

    def linear_form(self, fn: JitFunction, expr: ast.AST, at: int) -> Form:
        """`expr` where statement `at` of `fn` reads it, as a linear form (`linear`)."""
        return self.forms(fn).form(expr, at)

    def offset(self, fn: JitFunction, address: Form) -> Form:
        """An address's form without the pointer it starts from (`x` of `x + o - 1`)."""
        pointers = kernel_values(fn, self.aliases).pointers
        base = [
            m
            for m, c in address.monomials()
            if c == 1 and len(m) == 1 and m[0].kind != "load" and m[0].name in pointers
        ]
        if len(base) != 1:
            return address
        return Form({m: c for m, c in address.terms.items() if m != base[0]})

    def paths(
        self, fn: JitFunction, forms: tuple[Form, ...], bringing: set[Atom] | None = None
    ) -> list[dict[Atom, Form]]:
        """The paths to a statement that reads `forms` (see `KernelForms.paths`)."""
        return self.forms(fn).paths(forms, bringing)

    def occurrences(
        self, fn: JitFunction, expr: ast.AST, at: int, value: Form, name: str | None = None
    ) -> list[Occurrence]:
        """Where `expr` (and the locals it is built from) reads `value` (see
        `KernelForms.occurrences`)."""
        return self.forms(fn).occurrences(expr, at, value, name)

    # -- comparisons ---------------------------------------------------------------------
    def lower_bounds(
        self,
        fn: JitFunction,
        left: ast.AST,
        op: ast.cmpop,
        right: ast.AST,
        at: int,
        strict: bool = False,
    ) -> list[tuple[ast.AST, Form]]:
        """What the comparison `left op right` (read at statement `at`) bounds from
        below, each as (the side bounded, the form that is >= 0 where it holds):
        `o >= c` -> (o, o - c); `o > c` -> (o, o - c - 1); `slot != -1` (or a parameter
        every launch binds to -1) -> (slot, slot); `a != b` where `a >= b` -> (a, a - b - 1);
        `a == b` -> both ways. `strict`: only lower bounds of a value that varies
        between lanes or comes from memory by a non-negative one, as a mask writes them
        (`o < n` bounds `n`, a size, not the lanes; `o >= -2` says nothing about a
        negative offset; a float bound is a value test, not an index)."""
        form = self.forms(fn).form
        if isinstance(op, (ast.Lt, ast.LtE)):  # `a < b` is `b > a`
            left, right = right, left
            op = ast.Gt() if isinstance(op, ast.Lt) else ast.GtE()
        if isinstance(op, (ast.Gt, ast.GtE)):
            if strict and not (
                _bounds_an_index(left, right, isinstance(op, ast.Gt))
                and self._mentions_varying(fn, left)
            ):
                return []
            bound = form(left, at) - form(right, at)
            return [(left, bound.plus(-1) if isinstance(op, ast.Gt) else bound)]
        if isinstance(op, ast.NotEq):
            sentinels = self.sentinels(fn)
            if strict and not (
                self._mentions_varying(fn, left) or self._mentions_varying(fn, right)
            ):
                return []
            for value, other in ((left, right), (right, left)):
                if _minus_one(other, sentinels) and not _minus_one(value, sentinels):
                    return [(value, form(value, at))]  # entries are -1 or an index
            difference = form(left, at) - form(right, at)
            for value, diff in ((left, difference), (right, -difference)):
                if (not strict or _bounds_an_index(value, ast.Constant(0), False)) and (
                    plainly_non_negative(self.interval(fn, diff)[0])
                ):
                    return [(value, diff.plus(-1))]  # `ti != 0` with `ti >= 0`: `ti >= 1`
            return []
        if isinstance(op, ast.Eq) and not strict:
            difference = form(left, at) - form(right, at)
            return [(left, difference), (right, -difference)]
        return []

    def mask_bounds(self, fn: JitFunction, mask: ast.AST, at: int) -> list[MaskBound]:
        """The lower bounds every lane `mask` keeps passes, where statement `at` reads
        it: through `&`, `and`, broadcasts, casts and reshapes, and the locals the mask
        is built in (every definition that reaches them: a mask of any path)."""
        resolve = self.aliases.resolve
        values = kernel_values(fn, self.aliases)
        found: list[MaskBound] = []
        pending: list[tuple[ast.AST, int, str | None]] = [(mask, at, None)]
        seen: set[int] = set()
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
                for d in reversed(values.reaching(node.id, here)):
                    if d.order >= 0 and d.value is not None and id(d) not in seen:
                        seen.add(id(d))
                        pending.append((d.value, d.order, via or node.id))
            elif isinstance(node, ast.Compare):
                for left, op, right in comparison_pairs(node):
                    for value, form in self.lower_bounds(fn, left, op, right, here, strict=True):
                        value = strip_casts(value, self.aliases)
                        alone = form.single_atom()
                        loads = frozenset((alone,) if alone and alone.kind == "load" else ())
                        shift = self.forms(fn).form(value, here) - form
                        found.append(MaskBound(node, value, form, shift, via, loads))
        return found

    # -- selects -------------------------------------------------------------------------
    def arm_loads(self, fn: JitFunction) -> list[ArmLoad]:
        """The loads of `fn` whose value only arms of `tl.where` selects use: a load in
        an arm (`tl.where(o == 0, 0, tl.load(p + o - 1))`, also in a select nested in an
        arm), or bound to a local that is read only in arms (`prev = tl.load(p + o - 1)`,
        then only `tl.where(o == 0, 0, prev)`). A select is not control flow: the load is
        issued for every lane, and its value used only on the lanes each arm gives."""
        found = self._arm_loads.get(id(fn))
        if found is None:
            found = self._arm_loads[id(fn)] = self._find_arm_loads(fn)
        return found

    def _find_arm_loads(self, fn: JitFunction) -> list[ArmLoad]:
        selects = self.core.calls_in(fn, _WHERE)
        if not selects:
            return []
        resolve = self.aliases.resolve
        visited: set[int] = set()  # the selects walked, nested ones with their outer arms
        found: list[ArmLoad] = []
        in_arms: dict[int, tuple[ast.Name, int, tuple[SelectArm, ...]]] = {}

        # outer selects first: an outer call starts before the calls nested in it (a
        # worklist, not a recursive closure: that would be a reference cycle per call)
        for call, stmt in sorted(selects, key=lambda cs: (cs[0].lineno, cs[0].col_offset)):
            if id(call) in visited:
                continue
            at = fn.order_of(stmt)
            todo: list[tuple[ast.AST, tuple[SelectArm, ...]]] = [(call, ())]
            while todo:
                node, arms = todo.pop()
                if isinstance(node, ast.Name):
                    if arms:
                        in_arms[id(node)] = (node, at, arms)
                    continue
                if not isinstance(node, ast.Call):
                    todo += [(child, arms) for child in children(node)]
                    continue
                qual = resolve(node.func)
                if qual == _WHERE and len(node.args) == 3 and not node.keywords:
                    visited.add(id(node))
                    test, a, b = node.args
                    todo.append((test, arms))
                    todo.append((a, (*arms, SelectArm(node, test, True, at))))
                    todo.append((b, (*arms, SelectArm(node, test, False, at))))
                    continue
                if qual == _LOAD and arms:
                    found.append(ArmLoad(node, stmt, (arms,)))
                if qual is None and isinstance(node.func, ast.Attribute):
                    todo.append((node.func.value, arms))  # a method: `prev.to(...)`
                todo += [(child, arms) for child in (*node.args, *node.keywords)]
        # loads bound to a local that only arms read
        bound: dict[int, Definition] = {}
        loads_bound: dict[str, bool] = {}
        for name, at, _arms in in_arms.values():
            known = loads_bound.get(name.id)
            if known is None:
                known = loads_bound[name.id] = any(
                    self._is_load(value) for _order, value in fn.definitions.get(name.id, ())
                )
            if not known:
                continue
            for d in fn.reaching(name.id, at):
                if d.order >= 0 and d.value is not None and self._is_load(d.value):
                    bound.setdefault(id(d), d)
        if not bound:
            return found
        names = {d.name for d in bound.values()}
        readers: dict[str, list[int]] = {name: [] for name in names}
        for order, (reads, _assigns) in enumerate(fn.statement_names()):
            for name in names & reads:
                readers[name].append(order)
        for d in bound.values():
            uses = self._arm_uses(fn, d, in_arms, readers[d.name])
            if uses:
                call = strip_casts(d.value, self.aliases)
                found.append(ArmLoad(call, fn.statements[d.order], uses, d.name))
        return found

    def _is_load(self, value: ast.AST) -> bool:
        value = strip_casts(value, self.aliases)
        return isinstance(value, ast.Call) and self.aliases.resolve(value.func) == _LOAD

    def _arm_uses(
        self,
        fn: JitFunction,
        d: Definition,
        in_arms: dict[int, tuple[ast.Name, int, tuple[SelectArm, ...]]],
        readers: list[int],
    ) -> tuple[tuple[SelectArm, ...], ...]:
        """The arms around each read of the value definition `d` gives its local (read
        by the statements `readers`); empty when one read is outside every arm."""
        uses: list[tuple[SelectArm, ...]] = []
        for order in readers:
            if not any(r is d for r in fn.reaching(d.name, order)):
                continue
            stmt = fn.statements[order]
            for node in own_nodes(stmt):
                if not isinstance(node, ast.Name) or node.id != d.name:
                    continue
                if isinstance(node.ctx, ast.Store) and not isinstance(stmt, ast.AugAssign):
                    continue
                arm = in_arms.get(id(node))
                if arm is None:
                    return ()
                uses.append(arm[2])
        return tuple(uses)

    def select_bounds(self, fn: JitFunction, arm: SelectArm) -> list[MaskBound]:
        """The lower bounds every lane an arm of a select gives passes: the comparisons
        of its condition that hold there (`o == 0` false: `o != 0`, so `o - 1 >= 0` for
        `o >= 0`), through `&`, `|`, `~`, `not`, broadcasts and the locals the condition
        is built in (one definition each); each `test` is the comparison as it holds."""
        key = (id(arm.select), arm.holds)
        found = self._select_bounds.get(key)
        if found is not None:
            return found
        values = kernel_values(fn, self.aliases)

        def expand(name: ast.Name, here: int) -> tuple[ast.AST, int] | None:
            d = values.only_definition(name.id, here)
            return (d.value, d.order) if d is not None and d.order >= 0 else None

        found = []
        for left, op, right, here in comparisons_at(arm.test, arm.holds, arm.at, expand):
            for value, form in self.lower_bounds(fn, left, op, right, here):
                value = strip_casts(value, self.aliases)
                alone = form.single_atom()
                loads = frozenset((alone,) if alone and alone.kind == "load" else ())
                shift = self.forms(fn).form(value, here) - form
                test = ast.Compare(left, [op], [right])
                found.append(MaskBound(test, value, form, shift, None, loads))
        self._select_bounds[key] = found
        return found

    # -- facts where a statement runs ----------------------------------------------------
    def facts_at(self, fn: JitFunction, stmt: ast.stmt) -> tuple[Form, ...]:
        """The forms that are >= 0 wherever `stmt` runs: from the tests of the branches
        around it and of the early exits (`return`, `continue`, `break`) before it in
        its own blocks."""
        key = (id(fn), id(stmt))
        found = self._facts.get(key)
        if found is not None:
            return found
        context = fn.context(stmt)
        tests = [(b.test, b.taken, b.node) for b in context.branches]
        outer = {(id(b.node), b.taken) for b in context.branches}
        around = {id(b.node) for b in context.branches}
        loops = {id(loop.node) for loop in context.loops}
        at = fn.order_of(stmt)
        for order, guard, holds in self._early_exits(fn):
            if order >= at:
                break
            where = fn.context(guard)
            if (
                id(guard) not in around
                and all((id(b.node), b.taken) in outer for b in where.branches)
                and all(id(loop.node) in loops for loop in where.loops)
            ):
                tests.append((guard.test, holds, guard))
        facts: list[Form] = []
        for test, holds, node in tests:
            here = fn.order_of(node)
            for left, op, right in comparisons(test, holds):
                facts += [form for _value, form in self.lower_bounds(fn, left, op, right, here)]
        found = self._facts[key] = tuple(dict.fromkeys(facts))
        return found

    def _early_exits(self, fn: JitFunction) -> list[tuple[int, ast.If, bool]]:
        """The `if`s one side of which leaves the block (`return`, `continue`, `break`):
        (order, statement, whether its test holds after it), in source order."""
        found = self._exits.get(id(fn))
        if found is None:
            found = []
            for order, stmt in enumerate(fn.statements):
                if not isinstance(stmt, ast.If):
                    continue
                body = bool(stmt.body) and isinstance(stmt.body[-1], _EXITS)
                orelse = bool(stmt.orelse) and isinstance(stmt.orelse[-1], _EXITS)
                if body != orelse:
                    found.append((order, stmt, orelse))
            self._exits[id(fn)] = found
        return found

    # -- bounds --------------------------------------------------------------------------
    def can_be_negative(
        self,
        fn: JitFunction,
        form: Form,
        stmt: ast.stmt,
        unbounded: frozenset[Atom] = frozenset(),
        path: dict[Atom, Form] | None = None,
        assuming: tuple[Form, ...] = (),
    ) -> bool:
        """Whether nothing shows `form` >= 0 where `stmt` runs: not its lowest value, not
        the facts there (`facts_at`), not the values the launches bind to the kernel's
        arguments. `unbounded`: atoms taken as unbounded (a loaded index that a mask
        tests for -1 is not a non-negative index there). `path`: `form` is read along
        one path (`paths`), and so are the facts. `assuming`: more forms taken as >= 0
        (the lanes a mask keeps, the lanes an arm of a select gives)."""
        key = (id(fn), id(stmt), form, unbounded, tuple(path.items()) if path else (), assuming)
        found = self._negative.get(key)
        if found is None:
            facts = self.facts_at(fn, stmt) + assuming
            if path:
                facts = tuple(f for f in (along(fact, path) for fact in facts) if f is not None)
            found = not self._shown(fn, form, facts, unbounded, [_MAX_SPLITS])
            self._negative[key] = found
        return found

    def _shown(
        self,
        fn: JitFunction,
        form: Form,
        facts: tuple[Form, ...],
        unbounded: frozenset[Atom],
        budget: list[int],
    ) -> bool:
        """`form` >= 0: its lowest value, or `form = F * fact + R` with `F >= 0` and `R`
        shown >= 0 by the other facts."""
        if self.non_negative(fn, self.interval(fn, form, unbounded)[0]):
            return True
        atoms = form.atoms()
        for i, fact in enumerate(facts):
            for pivot, _coefficient in fact.monomials():
                if budget[0] <= 0:
                    return False
                if not atoms.issuperset(pivot):
                    continue  # no term of `form` has this one's atoms
                budget[0] -= 1
                factor = form.quotient(fact, pivot)
                if factor is None or not self.non_negative(
                    fn, self.interval(fn, factor, unbounded)[0]
                ):
                    continue
                split = form.minus_times(factor, fact)
                if split is not None and self._shown(
                    fn, split[1], facts[:i] + facts[i + 1 :], unbounded, budget
                ):
                    return True
        return False

    def factor(self, fn: JitFunction, form: Form, by: Form) -> tuple[Form, Form] | None:
        """(F, R) with `form == F * by + R`, split on a term of `by` that varies between
        lanes or comes from memory, F a non-negative literal or product of kernel
        arguments (a stride), not 0: `form` reads `by` (`(o - 1) * D + d` reads `o - 1`,
        D times). F is made of kernel arguments (`D`, `H * (K // BK)`): `x + i * K + o_k`
        does not read `K - o_k - 1` (`o_k < K`), its `K` is a stride and its lanes go the
        other way; `x + i_b * T + o` does not read `T - o - 1`, `i_b` is an index."""
        atoms = form.atoms()
        for pivot, _coefficient in by.monomials():  # fewest atoms first
            if not atoms.issuperset(pivot) or not any(self._varies(fn, a) for a in pivot):
                continue
            factor = form.quotient(by, pivot)
            if (
                factor is not None
                and all(_argument_arithmetic(a) for a in factor.atoms())
                and self.non_negative(fn, self.interval(fn, factor)[0])
            ):
                return form.minus_times(factor, by)
        return None

    def share(self, fn: JitFunction, form: Form, by: Form) -> Share | None:
        """How `form` reads `by` (None when it does not, see `factor`): the part of
        `form` that moves with `by`, `F * by` plus the terms of the rest that share an
        atom with `by` and its literal. Where `by` is negative, `form` goes below that
        part's value only by terms that do not depend on `by`: `(o - 1) * D + d` has
        `(o - 1) * D`; `x + o` against `o - 1` (`o > 0`) has `o`, which stays >= 0."""
        split = self.factor(fn, form, by)
        if split is None:
            return None
        factor, rest = split
        atoms = by.atoms()
        # Whole strides in the rest move with `by` too: `ar * N` against `ar - 1` is
        # `(ar - 1) * N + N`, whose part is `ar * N`, never negative.
        whole = factor.scale(_multiple(rest, factor))
        others = rest - whole
        moving = whole + Form(
            {m: c for m, c in others.terms.items() if not m or atoms.intersection(m)}
        )
        product = factor.times(by)
        if product is None:
            return None
        value = by if not moving.terms else (product + moving).over(factor)
        return Share(factor, product + moving, value)

    def reads_kept_out(
        self, fn: JitFunction, offset: Form, bound: MaskBound, stmt: ast.stmt
    ) -> list[Share]:
        """How an address offset read at `stmt` reaches below its start on the lanes a
        mask bound keeps out: it reads the bounded quantity (`share`), which varies and
        can be negative there, and the part of it that moves with the quantity can be
        negative. Asked of the values any path brings first, then of each path apart
        where a local set in both sides of an `if` brings the quantity (`block_id` is
        `... + b_i` on one side only). Empty: no lane the mask keeps out is below the
        start."""
        found = self._reads_kept_out(fn, offset, bound, stmt, {})
        if found is not None:
            return [found]
        # the lanes and loaded values the quantity is made of, which a local of the
        # address may bring on one side of an `if`
        made_of = {a for a in self.varying_atoms(fn, bound.form) if a.kind != "merge"}
        if not self._may_read(fn, offset, bound.form, made_of):
            return []
        return [
            share
            for path in self.paths(fn, (offset,), bringing=made_of)
            if path and (share := self._reads_kept_out(fn, offset, bound, stmt, path))
        ]

    def may_read_kept_out(self, fn: JitFunction, offset: Form, bound: MaskBound) -> bool:
        """Whether `reads_kept_out` can find anything for this offset and bound, before
        asking whether the bounded quantity can be negative at all (dearer, and true of
        most bounds: `o < T` keeps out the lanes past `T`): the offset reads the
        quantity (`share`), or a local of it set in both sides of an `if` may bring it."""
        if self.share(fn, offset, bound.form) is not None:
            return True
        made_of = {a for a in self.varying_atoms(fn, bound.form) if a.kind != "merge"}
        return self._may_read(fn, offset, bound.form, made_of)

    def _may_read(self, fn: JitFunction, offset: Form, by: Form, made_of: set[Atom]) -> bool:
        """Whether a path could make `offset` read `by`: a local of `offset` set in
        both sides of an `if` brings one of the atoms `by` is made of with the sign it
        has in `by` (`o < n` is `n - o - 1 >= 0`: an address that adds `o` on every path
        never reads it)."""
        merges = [(m, c) for m, c in offset.terms.items() if any(a.kind == "merge" for a in m)]
        if not merges or not made_of:
            return False
        forms = self.forms(fn)
        for atom in made_of:
            wanted = {c > 0 for m, c in by.terms.items() if atom in m}
            for mono, c in merges:
                for merge in mono:
                    if merge.kind != "merge":
                        continue
                    for d in merge.definitions:
                        brought = forms.binding(d)
                        if any(
                            ((c > 0) == (k > 0)) in wanted
                            for m, k in brought.terms.items()
                            if atom in m
                        ):
                            return True
        return False

    def _reads_kept_out(
        self,
        fn: JitFunction,
        offset: Form,
        bound: MaskBound,
        stmt: ast.stmt,
        path: dict[Atom, Form],
    ) -> Share | None:
        kept, reads = along(bound.form, path), along(offset, path)
        if kept is None or reads is None or not self.varies(fn, kept):
            return None
        share = self.share(fn, reads, kept)
        if (
            share is None
            or not self.can_be_negative(fn, kept, stmt, path=path)
            or not self.can_be_negative(fn, share.part, stmt, unbounded=bound.loads, path=path)
        ):
            return None
        return share

    def non_negative(self, fn: JitFunction, low: Form | None) -> bool:
        """Whether a lowest value over `fn`'s arguments is >= 0: with every argument
        >= 0 and every `tl.arange` extent >= 1 (`BT - 1`), or with the values every
        launch of `fn` binds to them."""
        if low is None:
            return False
        if plainly_non_negative(low):
            return True
        if low.is_constant:
            return False  # a negative literal, whatever the launches bind
        key = (id(fn), low)
        found = self._launched.get(key)
        if found is None:
            found = self._launched[key] = plainly_non_negative(
                self._above_one(fn, low)
            ) or self._at_every_launch(fn, low)
        return found

    def _above_one(self, fn: JitFunction, low: Form) -> Form | None:
        """`low` with each `tl.arange` extent `P` written `1 + P'` (`P' >= 0`): an arange
        has at least one lane."""
        extents = self.core.arange_extents(fn)
        for atom in low.atoms():
            if atom.kind == "arg" and atom.name in extents:
                shifted = low.substitute(atom, Form.of(atom).plus(1))
                if shifted is None:
                    return None
                low = shifted
        return low

    def interval(
        self,
        fn: JitFunction,
        form: Form,
        unbounded: frozenset[Atom] = frozenset(),
        whole: bool | None = None,
    ) -> Interval:
        """The lowest and highest value of `form` (a form of `fn`), as forms over `fn`'s
        arguments; None where not known. `whole`: the form is a value on its own (a
        loaded value alone may be a -1 sentinel); by default, when it is one atom."""
        if whole is None:
            whole = form.single_atom() is not None
        key = (id(fn), form, unbounded, whole)
        found = self._intervals.get(key)
        if found is None:
            found = self._intervals[key] = self._interval(fn, form, unbounded, whole)
        return found

    def _interval(
        self, fn: JitFunction, form: Form, unbounded: frozenset[Atom], whole: bool
    ) -> Interval:
        literal = Form.constant(form.literal)
        low: Form | None = literal
        high: Form | None = literal
        terms = self._pair_spans(fn, form.monomials())
        for mono, c in terms:
            if mono is None:  # `eos - bos` of an offsets table
                part: Interval = (ZERO, None)
            else:
                part = self._monomial(fn, mono, whole, unbounded)
            if c < 0:
                part = (part[1], part[0])
            low = _add(low, _scale(part[0], c))
            high = _add(high, _scale(part[1], c))
            if low is None and high is None:
                break
        return low, high

    def _pair_spans(
        self, fn: JitFunction, terms: list[tuple[tuple[Atom, ...], int]]
    ) -> list[tuple[tuple[Atom, ...] | None, int]]:
        """`eos - bos`, two consecutive entries of an offsets table, as one term (None):
        a sequence length, >= 0."""
        ends = [m[0] for m, c in terms if c == 1 and len(m) == 1 and m[0].kind == "load"]
        starts = [m[0] for m, c in terms if c == -1 and len(m) == 1 and m[0].kind == "load"]
        if not ends or not starts:
            return list(terms)
        paired: set[Atom] = set()
        spans = 0
        for end in ends:
            for start in starts:
                if start not in paired and self._consecutive(fn, start, end):
                    paired |= {start, end}
                    spans += 1
                    break
        out: list[tuple[tuple[Atom, ...] | None, int]] = [
            (m, c) for m, c in terms if not (len(m) == 1 and m[0] in paired)
        ]
        return out + [(None, 1)] * spans

    def _consecutive(self, fn: JitFunction, start: Atom, end: Atom) -> bool:
        params = set(fn.params)
        first = table_read(start.node, self.aliases, params) if start.node else None
        second = table_read(end.node, self.aliases, params) if end.node else None
        return (
            first is not None
            and second is not None
            and first.table == second.table
            and second.literal == first.literal + 1
            and first.index == second.index
            and first.table in self.sequences.of(fn).offsets_tables
        )

    def _monomial(
        self, fn: JitFunction, mono: tuple[Atom, ...], whole: bool, unbounded: frozenset[Atom]
    ) -> Interval:
        if len(mono) == 1:
            return _UNKNOWN if mono[0] in unbounded else self._atom(fn, mono[0], whole)
        result: Interval = (_ONE, _ONE)
        for atom in mono:
            result = _product(
                result, _UNKNOWN if atom in unbounded else self._atom(fn, atom, False)
            )
        return result

    def _atom(self, fn: JitFunction, atom: Atom, whole: bool) -> Interval:
        key = (id(fn), atom, whole)
        found = self._atoms.get(key)
        if found is not None:
            return found
        if key in self._busy:  # a value rebuilt from itself: `o = o - 1` in a loop
            return _UNKNOWN
        self._busy.add(key)
        try:
            found = self._atom_interval(fn, atom, whole)
        finally:
            self._busy.discard(key)
        self._atoms[key] = found
        return found

    def _atom_interval(self, fn: JitFunction, atom: Atom, whole: bool) -> Interval:
        kind = atom.kind
        if kind == "arg":
            return self._argument(fn, atom)
        if kind == "lane":
            high = self.interval(fn, atom.extent)[1] if atom.extent is not None else None
            return ZERO, None if high is None else high.plus(-1)
        if kind in ("pid", "programs"):
            return ZERO, None
        if kind == "load":
            return (None if whole else ZERO), None
        if kind == "loop":
            return self._loop(fn, fn.statements[atom.order])
        if kind == "merge":
            return self._merge(fn, atom, whole)
        if kind == "global":
            constant = self.host.constant_in_kernel(fn, ast.Name(atom.name, ast.Load()))
            value = int_literal(constant) if constant is not None else None
            if value is not None and not isinstance(constant.value, bool):
                exact = Form.constant(value)
                return exact, exact
            return _UNKNOWN
        if kind == "opaque" and atom.node is not None:
            return self._opaque(fn, atom.node, atom.order, whole)
        return _UNKNOWN

    def _argument(self, fn: JitFunction, atom: Atom) -> Interval:
        """A parameter: itself; -1 for a sentinel; for a helper, >= 0 where every
        caller binds a non-negative value."""
        name = atom.name
        if name in self.sentinels(fn):
            return Form.constant(-1), Form.constant(-1)
        bindings = [b for b in self.core.helper_calls_to(fn) if b.caller is not None]
        if not bindings:
            exact = Form.of(Atom("arg", (name,), name))
            return exact, exact
        for binding in bindings:  # a helper's parameter: what its callers bind to it
            caller = binding.caller
            where = next((s for c, s in caller.calls if c is binding.call), None)
            here = caller.order_of(where) if where is not None else len(caller.statements) - 1
            for value in binding.args.get(name, ()):
                low = self.interval(caller, self.linear_form(caller, value, here))[0]
                if not self.non_negative(caller, low):
                    return _UNKNOWN
        return ZERO, None

    def _loop(self, fn: JitFunction, loop: ast.stmt) -> Interval:
        """A `range`/`tl.range`/`tl.static_range` loop variable: from the start to below
        the end (the other way round for a literal negative step)."""
        it = getattr(loop, "iter", None)
        if not isinstance(it, ast.Call) or not it.args or len(it.args) > 3:
            return _UNKNOWN
        if not (
            (isinstance(it.func, ast.Name) and it.func.id == "range")
            or self.aliases.resolve(it.func) in _RANGES
        ):
            return _UNKNOWN
        at = fn.order_of(loop)

        def bound(node: ast.AST) -> Interval:
            return self.interval(fn, self.linear_form(fn, node, at), whole=False)

        if len(it.args) == 1:
            high = bound(it.args[0])[1]
            return ZERO, None if high is None else high.plus(-1)
        step = int_literal(it.args[2]) if len(it.args) == 3 else 1
        start, end = bound(it.args[0]), bound(it.args[1])
        if step is not None and step < 0:
            return (None if end[0] is None else end[0].plus(1)), start[1]
        return start[0], None if end[1] is None else end[1].plus(-1)

    def _merge(self, fn: JitFunction, atom: Atom, whole: bool) -> Interval:
        """A name several definitions reach: the bounds every one of them keeps."""
        forms = self.forms(fn)
        parts: list[Interval] = []
        for d in atom.definitions:
            if d.order < 0:
                parts.append(self._argument(fn, Atom("arg", (d.name,), d.name)))
            elif d.value is None:
                parts.append(self._loop(fn, fn.statements[d.order]))
            else:
                parts.append(self.interval(fn, forms.definition(d), whole=whole))
        return _join(parts)

    def _opaque(self, fn: JitFunction, node: ast.AST, at: int, whole: bool) -> Interval:
        """Clamps, selects, integer division and remainder, conditional values."""

        def part(e: ast.AST, keep: bool = False) -> Interval:
            return self.interval(fn, self.linear_form(fn, e, at), whole=whole and keep)

        if isinstance(node, ast.IfExp):
            return _join([part(node.body, True), part(node.orelse, True)])
        if isinstance(node, ast.BinOp):
            op = node.op
            if isinstance(op, (ast.FloorDiv, ast.Mod, ast.RShift, ast.BitAnd, ast.Mult)):
                (l_low, _), (r_low, r_high) = part(node.left), part(node.right)
                low = ZERO if plainly_non_negative(l_low) and plainly_non_negative(r_low) else None
                high = r_high.plus(-1) if isinstance(op, ast.Mod) and low and r_high else None
                return low, high
            return _UNKNOWN
        if not isinstance(node, ast.Call):
            return _UNKNOWN
        qual = self.aliases.resolve(node.func)
        args = node.args
        if qual == f"{LANGUAGE}.maximum" and len(args) == 2:
            (a_low, _), (b_low, _) = part(args[0]), part(args[1])
            if plainly_non_negative(a_low) or plainly_non_negative(b_low):
                return ZERO, None
            return a_low or b_low, None
        if qual == f"{LANGUAGE}.clamp" and len(args) == 3:
            return part(args[1])[0], part(args[2])[1]
        if qual == f"{LANGUAGE}.where" and len(args) == 3:
            return _join([part(args[1], True), part(args[2], True)])
        if qual in (f"{LANGUAGE}.minimum", f"{LANGUAGE}.cdiv") and len(args) == 2:
            lows = [part(a)[0] for a in args]
            return (ZERO if all(plainly_non_negative(x) for x in lows) else None), None
        if qual == f"{LANGUAGE}.full" and len(args) >= 2:
            return part(args[1], True)
        if qual in (f"{LANGUAGE}.zeros", f"{LANGUAGE}.zeros_like"):
            return ZERO, ZERO
        return _UNKNOWN

    # -- launches ------------------------------------------------------------------------
    def _at_every_launch(self, fn: JitFunction, low: Form) -> bool:
        """`low` (over `fn`'s arguments) >= 0 with the values each launch binds, and the
        launcher's own `assert`s before the launch: every launch, and at least one."""
        launches = self.core.launches_of(fn)
        if not launches or self.core.helper_calls_to(fn):
            return False
        return all(self._at_launch(binding, low) for binding in launches)

    def _at_launch(self, binding: CallBinding, low: Form) -> bool:
        total = Form.constant(low.literal)
        for mono, c in low.monomials():
            term: Form | None = Form.constant(c)
            for atom in mono:
                value = self._argument_value(binding, atom.name) if atom.kind == "arg" else None
                term = _times(term, value)
                if term is None:
                    return False
            total = total + term
        if plainly_non_negative(total):
            return True
        return _shown_on_host(total, self._host_facts(binding))

    def _argument_value(self, binding: CallBinding, name: str) -> Form | None:
        """What one launch binds to a parameter, as a form over host values."""
        key = (id(binding.call), name)
        if key not in self._arguments:
            exprs = binding.args.get(name, ())
            self._arguments[key] = (
                self._host_form(exprs[0], binding.host, 0)
                if len(exprs) == 1 and binding.host is not None
                else None
            )
        return self._arguments[key]

    def _host_form(self, expr: ast.AST, host: HostFunction, depth: int) -> Form:
        """A host expression as a form over host values (each >= 0: sizes, counts):
        literals, sums, products, `int(...)`, names through what they hold."""
        value = int_literal(expr)
        if value is not None and not isinstance(getattr(expr, "value", None), bool):
            return Form.constant(value)
        if depth <= MAX_HELPER_DEPTH:
            if (
                isinstance(expr, ast.Call)
                and isinstance(expr.func, ast.Name)
                and expr.func.id == "int"
                and len(expr.args) == 1
            ):
                return self._host_form(expr.args[0], host, depth + 1)
            if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult)):
                left = self._host_form(expr.left, host, depth + 1)
                right = self._host_form(expr.right, host, depth + 1)
                if isinstance(expr.op, ast.Add):
                    return left + right
                if isinstance(expr.op, ast.Sub):
                    return left - right
                product = left.times(right)
                if product is not None:
                    return product
            if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
                return -self._host_form(expr.operand, host, depth + 1)
            if isinstance(expr, ast.Name):
                values = self.host.host_values(expr, host)
                if len(values) == 1 and values[0][0] is not expr:
                    return self._host_form(values[0][0], host, depth + 1)
                literals = {int_literal(v) for v, _guards in values}
                if len(literals) == 1 and None not in literals:
                    return Form.constant(literals.pop())
        if isinstance(expr, TupleElement):
            key: tuple = ("element", shape(expr.value), expr.index)
        else:
            key = (shape(expr),)
        return Form.of(Atom("host", key, getattr(expr, "id", "")))

    def _host_facts(self, binding: CallBinding) -> tuple[Form, ...]:
        """The launcher's `assert a >= b` (and `>`, `<`, `<=`, `==`) before the launch,
        in the launching function's own body: each as a form >= 0 over host values."""
        host = binding.host
        if host is None:
            return ()
        asserts = self._asserts.get(id(host))
        if asserts is None:
            body = getattr(host.node, "body", [])
            asserts = self._asserts[id(host)] = [
                (s.lineno, s) for s in body if isinstance(s, ast.Assert)
            ]
        facts: list[Form] = []
        for line, stmt in asserts:
            if line >= binding.call.lineno:
                break
            for left, op, right in comparisons(stmt.test, True):
                if isinstance(op, (ast.Lt, ast.LtE)):
                    left, right = right, left
                    op = ast.Gt() if isinstance(op, ast.Lt) else ast.GtE()
                if not isinstance(op, (ast.Gt, ast.GtE, ast.Eq)):
                    continue
                diff = self._host_form(left, host, 0) - self._host_form(right, host, 0)
                facts.append(diff.plus(-1) if isinstance(op, ast.Gt) else diff)
                if isinstance(op, ast.Eq):
                    facts.append(-diff)
        return tuple(facts)

    # -- what varies, sentinels, tables --------------------------------------------------
    def varies(self, fn: JitFunction, form: Form) -> bool:
        """Whether `form` differs between lanes or comes from memory: a `tl.arange`
        lane, a loaded value, or a local or parameter computed from one (not
        program-id arithmetic)."""
        return any(self._varies(fn, atom) for atom in form.atoms())

    def _mentions_varying(self, fn: JitFunction, node: ast.AST) -> bool:
        """Whether an expression reads a lane-varying or loaded value (`varying`) or
        makes one: what a mask test bounds, before its form is built."""
        if frozen_names(node) & self.varying(fn):
            return True
        resolve = self.aliases.resolve
        return any(
            isinstance(n, ast.Call)
            and (resolve(n.func) == _ARANGE or is_load_or_atomic(resolve(n.func)))
            for n in walk(node)
        )

    def varying_atoms(self, fn: JitFunction, form: Form) -> set[Atom]:
        """The atoms of `form` that vary (see `varies`)."""
        return {atom for atom in form.atoms() if self._varies(fn, atom)}

    def _varies(self, fn: JitFunction, atom: Atom) -> bool:
        if atom.kind in ("lane", "load"):
            return True
        key = (id(fn), atom)
        found = self._atom_varies.get(key)
        if found is None:
            found = self._atom_varies[key] = self._atom_from_varying(fn, atom)
        return found

    def _atom_from_varying(self, fn: JitFunction, atom: Atom) -> bool:
        varying = self.varying(fn)
        if atom.kind == "opaque" and atom.node is not None:
            return bool(frozen_names(atom.node) & varying) or any(
                isinstance(n, ast.Call)
                and (
                    self.aliases.resolve(n.func) == _ARANGE
                    or is_load_or_atomic(self.aliases.resolve(n.func))
                )
                for n in walk(atom.node)
            )
        return atom.kind != "pid" and atom.kind != "programs" and atom.name in varying

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
                if any(frozen_names(e) & theirs for e in exprs):
                    roots.add(param)
        return pointer_names(fn, roots)

    def table_of(self, fn: JitFunction, form: Form) -> str | None:
        """The table a loaded value comes from (`slot_mapping` of
        `slot = tl.load(slot_mapping + i)`), where `form` is that value alone."""
        atom = form.single_atom()
        if atom is None or atom.kind != "load" or not isinstance(atom.node, ast.Call):
            return None
        if not atom.node.args:
            return None
        pointer = self.linear_form(fn, atom.node.args[0], atom.order)
        pointers = kernel_values(fn, self.aliases).pointers
        for mono, c in pointer.monomials():
            if c == 1 and len(mono) == 1 and mono[0].kind != "load" and mono[0].name in pointers:
                return mono[0].name
        return None


def _multiple(rest: Form, factor: Form) -> int:
    """The literal `q` with `q * factor` among the terms of `rest` (the non-literal
    terms of `factor` each `q` times in `rest`: `N + d` holds `N` once), else 0."""
    terms = factor.monomials()
    if not terms:
        return 0  # a literal factor: the rest's literal moves with `by` already
    first, f = terms[0]
    r = rest.terms.get(first, 0)
    if r % f:
        return 0
    q = r // f
    return q if all(rest.terms.get(m, 0) == q * c for m, c in terms) else 0


def _shown_on_host(form: Form, facts: tuple[Form, ...], depth: int = 0) -> bool:
    """`form` (over host values, each >= 0) >= 0: no negative coefficient, or
    `form = F * fact + R` with F and R so."""
    if plainly_non_negative(form):
        return True
    if depth >= 4:
        return False
    for i, fact in enumerate(facts):
        for pivot, _coefficient in fact.monomials():
            split = form.divide(fact, pivot)
            if split is not None and plainly_non_negative(split[0]):
                if _shown_on_host(split[1], facts[:i] + facts[i + 1 :], depth + 1):
                    return True
    return False


def _argument_arithmetic(atom: Atom) -> bool:
    """A kernel argument, or arithmetic of arguments only (`K // BK`): a stride or a
    size, the same in every lane and program."""
    if atom.kind == "arg":
        return True
    if atom.kind != "opaque" or not isinstance(atom.node, ast.BinOp):
        return False
    reads = atom.key[1]
    return bool(reads) and all(orders == (-1,) for _name, orders in reads)


def _minus_one(node: ast.AST, sentinels: frozenset[str]) -> bool:
    """`-1`, or a kernel argument every launch binds to -1 (`pad_slot_id`)."""
    return int_literal(node) == -1 or (isinstance(node, ast.Name) and node.id in sentinels)


def _bounds_an_index(value: ast.AST, other: ast.AST, above: bool) -> bool:
    """`value >= other` (`value > other` if `above`) as a mask bounds an index: `value`
    is not a literal, and the least value it keeps is not negative (`o >= -2` says
    nothing about a negative offset; `o > -1` does) nor a literal of another type (a
    float bound is a value test, not an index)."""
    if isinstance(value, ast.Constant) or int_literal(value) is not None:
        return False
    n = int_literal(other)
    if n is not None:
        return n + above >= 0 and not isinstance(getattr(other, "value", None), bool)
    return not isinstance(other, ast.Constant)


def _atom_text(atom: Atom) -> str:
    if atom.kind == "lane" and atom.extent is not None:
        return f"tl.arange(0, {_text(atom.extent)})"
    if atom.node is not None and atom.kind in ("load", "opaque", "pid", "programs"):
        return show(atom.node)
    return atom.name or "..."


def _text(form: Form) -> str:
    """A form as text, for a message: `K`, `2`, `K + 1`, `BT * i`."""
    parts = []
    for mono, c in [*form.monomials(), ((), form.literal)]:
        if not c:
            continue
        names = " * ".join(_atom_text(a) for a in mono)
        magnitude = (
            names if abs(c) == 1 and names else f"{abs(c)} * {names}" if names else str(abs(c))
        )
        sign = "-" if c < 0 else "+"
        parts.append(f"{sign} {magnitude}" if parts else (f"-{magnitude}" if c < 0 else magnitude))
    return " ".join(parts) or "0"
