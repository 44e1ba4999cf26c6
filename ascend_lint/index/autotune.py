"""Autotune config lists that hold the same config more than once.

Knows, per module:
* each element of a list or tuple display of `triton.Config(...)` calls that is written
  the same as an earlier one (same syntax tree, quotes and layout aside), with that
  earlier one;
* each `for` clause of a list comprehension building configs whose variable nothing in
  the comprehension reads (left over when `num_warps=w` was removed), or would read
  once given expressions are removed: it repeats every config once per value. With it:
  how many values the loop takes, whether it provably takes at least one (a non-empty
  literal, a sum of them, `range` of literals, or a name the module binds once to such
  a literal or a conditional between two), without which removing the loop could turn
  an empty list into a full one, and whether its iterable is free of side effects;
* each `for a, b, w in [(...), ...]` clause over a literal list of tuples whose target
  names something reads only in part (`w` left over when `num_warps=w` was removed): the
  configs differ only in the names read, so rows that agree on those repeat a config.
  With it: the positions read and the rows to keep (the first of each).

Autotuning compiles and benchmarks each config: a repeated one costs a compilation and
a benchmark and can only tie with itself.

Depends on: the core's `configs` (and `scopes` to read a name the loop walks):

    core ──> autotune          (names through scopes)

Costs: nothing until asked; only when the module builds configs, one walk of the nodes
whose lines hold one.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass

from ascend_lint.index.scopes import HostNames
from ascend_lint.index.syntax import children, expr_key, free_of_effects, walk


@dataclass(frozen=True)
class RepeatedConfig:
    node: ast.expr  # the element that repeats
    first: ast.expr  # the earlier element it repeats
    display: ast.List | ast.Tuple


@dataclass(frozen=True)
class RepeatingLoop:
    comprehension: ast.ListComp
    clause: ast.comprehension
    values: int | None  # the most values the loop takes, where known
    non_empty: bool  # it provably takes at least one
    pure: bool  # evaluating its iterable has no side effects

    @property
    def removable(self) -> bool:
        """Removing the loop keeps every distinct config and runs nothing less."""
        return self.non_empty and self.pure


@dataclass(frozen=True)
class NarrowableLoop:
    comprehension: ast.ListComp
    clause: ast.comprehension  # target: a tuple of names; iterable: a display of tuples
    kept: tuple[int, ...]  # positions of the target names something reads
    rows: tuple[int, ...]  # the rows to keep: the first of each that the kept names tell apart

    @property
    def dropped(self) -> int:
        """How many rows repeat a config."""
        return len(self.clause.iter.elts) - len(self.rows)


class AutotuneFacts:
    def __init__(self, core) -> None:
        self._core = core
        self._scanned: tuple[list[RepeatedConfig], list[RepeatingLoop]] | None = None
        self._names: HostNames | None = None
        self._comprehension_of: dict[int, ast.ListComp] = {}
        self._repeating_in: dict[int, list[RepeatingLoop]] = {}  # per comprehension
        self._narrowable: list[NarrowableLoop] = []

    def repeated_configs(self) -> list[RepeatedConfig]:
        return self._scan()[0]

    def repeating_loops(self) -> list[RepeatingLoop]:
        return self._scan()[1]

    def narrowable_loops(self) -> list[NarrowableLoop]:
        """Clauses whose tuple rows repeat configs as the comprehension stands."""
        self._scan()
        return self._narrowable

    def loops_narrowed_without(
        self, comp: ast.ListComp, removed: list[ast.AST]
    ) -> list[NarrowableLoop]:
        """The clauses of `comp` whose tuple rows would repeat configs once `removed`
        (option values in its element) are gone, and do not already."""
        self._scan()
        already = {id(lp.clause) for lp in self._narrowable if lp.comprehension is comp}
        gone = frozenset(id(n) for node in removed for n in walk(node))
        return _narrowable_clauses(comp, gone, frozenset(already))

    def comprehension_of(self, config: ast.Call) -> ast.ListComp | None:
        """The list comprehension whose element builds `config`, if any."""
        self._scan()
        return self._comprehension_of.get(id(config))

    def loops_unread_without(
        self, comp: ast.ListComp, removed: list[ast.AST]
    ) -> list[RepeatingLoop]:
        """The loops of `comp` that would repeat its configs once `removed` (option
        values in its element) are gone, and do not already."""
        self._scan()
        already = self._repeating_in.get(id(comp))
        if already is None:
            already = self._repeating_clauses(comp, frozenset())
        gone = frozenset(id(n) for node in removed for n in walk(node))
        return self._repeating_clauses(comp, gone, frozenset(id(lp.clause) for lp in already))

    def _scan(self) -> tuple[list[RepeatedConfig], list[RepeatingLoop]]:
        if self._scanned is not None:
            return self._scanned
        repeated: list[RepeatedConfig] = []
        loops: list[RepeatingLoop] = []
        configs = {id(call) for call in self._core.configs}
        if configs:
            for node in self._toward_configs():
                if isinstance(node, (ast.List, ast.Tuple)):
                    repeated += _repeats_in(node, configs)
                elif isinstance(node, ast.ListComp):
                    inner = [n for n in walk(node.elt) if id(n) in configs]
                    if inner:
                        for call in inner:
                            self._comprehension_of[id(call)] = node
                        found = self._repeating_clauses(node, frozenset())
                        self._repeating_in[id(node)] = found
                        loops += found
                        self._narrowable += _narrowable_clauses(node, frozenset())
        self._scanned = (repeated, loops)
        return self._scanned

    def _toward_configs(self):
        """The nodes of the module whose lines hold a config, but those of kernel bodies,
        where no config is built (kernel bodies are most of a kernel module's nodes): a
        node that spans no config's line holds no display or comprehension of configs,
        and most of a module is skipped without a look inside."""
        kernels = {id(k.node) for k in self._core.kernels}
        rows = sorted({call.lineno for call in self._core.configs})
        todo = [self._core.tree]
        while todo:
            node = todo.pop()
            yield node
            inner = node.decorator_list if id(node) in kernels else children(node)
            todo.extend(child for child in inner if _spans_a_row(child, rows))

    def _repeating_clauses(
        self, comp: ast.ListComp, gone: frozenset[int], skip: frozenset[int] = frozenset()
    ) -> list[RepeatingLoop]:
        """The loops whose variable nothing in `comp` reads, outside the nodes `gone`;
        the clauses in `skip` (by id) are left out unexamined."""
        found = []
        # What the element, the iterables and the conditions read is the same for every
        # clause; each clause adds what the other clauses' targets read (`x[i]`).
        shared: set[str] | None = None
        for clause in comp.generators:
            if clause.is_async or clause.ifs or id(clause) in skip:
                continue
            bound = {n.id for n in walk(clause.target) if isinstance(n, ast.Name)}
            if not bound or not all(
                isinstance(n, (ast.Name, ast.Tuple)) for n in walk(clause.target)
            ):
                continue
            if shared is None:
                readers: list[ast.AST] = [comp.elt]
                for other in comp.generators:
                    readers += [other.iter, *other.ifs]
                shared = _loads(readers, gone)
            targets = [other.target for other in comp.generators if other is not clause]
            if bound & shared or bound & _loads(targets, gone):
                continue
            length = self._length(clause.iter, comp, depth=0)
            if length is not None and length[1] <= 1:
                continue  # it repeats nothing
            values = length[1] if length else None
            non_empty = length is not None and length[0] > 0
            found.append(
                RepeatingLoop(
                    comp,
                    clause,
                    values,
                    non_empty,
                    _literal_range(clause.iter) or free_of_effects(clause.iter),
                )
            )
        return found

    def _length(self, expr: ast.AST, at: ast.AST, depth: int) -> tuple[int, int] | None:
        """The fewest and the most values iterating `expr` takes, where evident."""
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            if any(isinstance(e, ast.Starred) for e in expr.elts):
                return None
            n = (
                len({expr_key(e) for e in expr.elts})
                if isinstance(expr, ast.Set)
                else len(expr.elts)
            )
            return n, n
        if _literal_range(expr):
            try:
                n = len(range(*(a.value for a in expr.args)))
            except ValueError:
                return None
            return n, n
        if isinstance(expr, (ast.IfExp, ast.BinOp)):
            if isinstance(expr, ast.BinOp) and not isinstance(expr.op, ast.Add):
                return None
            a_node, b_node = (
                (expr.body, expr.orelse) if isinstance(expr, ast.IfExp) else (expr.left, expr.right)
            )
            a, b = self._length(a_node, at, depth), self._length(b_node, at, depth)
            if a is None or b is None:
                return None
            if isinstance(expr, ast.IfExp):
                return min(a[0], b[0]), max(a[1], b[1])
            return a[0] + b[0], a[1] + b[1]
        if isinstance(expr, ast.Name) and depth < 4:
            bound = self._host_names().bindings(expr.id, self._host_of(at))
            if bound is None or len(bound[1]) != 1:
                return None
            value, _where = bound[1][0]
            if isinstance(value, ast.expr):
                return self._length(value, value, depth + 1)
        return None

    def _host_names(self) -> HostNames:
        if self._names is None:
            self._names = HostNames(self._core)
        return self._names

    def _host_of(self, node: ast.AST):
        """The innermost host function around `node`, else the module."""
        best = self._core.hosts[0]
        for host in self._core.hosts[1:]:
            fn = host.node
            if (fn.lineno, fn.col_offset) <= (node.lineno, node.col_offset) and (
                node.end_lineno or 0,
                node.end_col_offset or 0,
            ) <= (fn.end_lineno or 0, fn.end_col_offset or 0):
                if best is self._core.hosts[0] or fn.lineno >= best.node.lineno:
                    best = host
        return best


def _repeats_in(display: ast.List | ast.Tuple, configs: set[int]) -> list[RepeatedConfig]:
    seen: dict[str, ast.expr] = {}
    found = []
    for elt in display.elts:
        if id(elt) not in configs:
            continue
        shape = expr_key(elt)
        if shape in seen:
            found.append(RepeatedConfig(elt, seen[shape], display))
        else:
            seen[shape] = elt
    return found


def _narrowable_clauses(
    comp: ast.ListComp, gone: frozenset[int], skip: frozenset[int] = frozenset()
) -> list[NarrowableLoop]:
    """The clauses of `comp` (not in `skip`) that unpack rows of a literal display of
    tuples into names of which some, but not all, are read outside the nodes `gone`,
    where two rows agree on the names read."""
    found = []
    for clause in comp.generators:
        target, rows = clause.target, clause.iter
        if (
            clause.is_async
            or clause.ifs
            or id(clause) in skip
            or not isinstance(target, ast.Tuple)
            or not all(isinstance(e, ast.Name) for e in target.elts)
            or not isinstance(rows, (ast.List, ast.Tuple))
            or not rows.elts
            or not all(
                isinstance(row, ast.Tuple)
                and len(row.elts) == len(target.elts)
                and not any(isinstance(e, ast.Starred) for e in row.elts)
                and free_of_effects(row)
                for row in rows.elts
            )
        ):
            continue
        readers: list[ast.AST] = [comp.elt]
        for other in comp.generators:
            readers += [other.iter, *other.ifs]
            if other is not clause:
                readers.append(other.target)
        read = _loads(readers, gone)
        kept = tuple(i for i, name in enumerate(target.elts) if name.id in read)
        if not kept or len(kept) == len(target.elts):
            continue  # all unread: a repeating loop; all read: nothing repeats
        first: dict[tuple[str, ...], int] = {}
        for i, row in enumerate(rows.elts):
            first.setdefault(tuple(expr_key(row.elts[k]) for k in kept), i)
        if len(first) < len(rows.elts):
            found.append(NarrowableLoop(comp, clause, kept, tuple(sorted(first.values()))))
    return found


def _loads(readers: list[ast.AST], gone: frozenset[int]) -> set[str]:
    """The names read in `readers`, outside the nodes `gone`."""
    return {
        n.id
        for reader in readers
        for n in walk(reader)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in gone
    }


def _spans_a_row(node: ast.AST, rows: list[int]) -> bool:
    """Whether `node` may hold something that starts on one of the sorted `rows`: its
    lines (a definition's decorators included) hold one, or it has no position."""
    start = getattr(node, "lineno", None)
    if start is None:
        return True
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        start = min(start, *(d.lineno for d in decorators))
    first = bisect.bisect_left(rows, start)
    return first < len(rows) and rows[first] <= (node.end_lineno or start)


def _literal_range(expr: ast.AST) -> bool:
    """`range(...)` of integer literals: a known count, and nothing run but the builtin."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "range"
        and not expr.keywords
        and 1 <= len(expr.args) <= 3
        and all(isinstance(a, ast.Constant) and type(a.value) is int for a in expr.args)
    )
