"""Autotune config lists that hold the same config more than once.

Knows, per module:
* each element of a list or tuple display of `triton.Config(...)` calls that is written
  the same as an earlier one (same syntax tree, quotes and layout aside), with that
  earlier one;
* each `for` clause of a list comprehension building configs whose variable nothing in
  the comprehension reads (left over when `num_warps=w` was removed): it repeats every
  config once per value. With it: how many values the loop takes and whether it
  provably takes at least one (a non-empty literal, `range` of literals, or a name the
  module binds once to such a literal or a conditional between two), without which
  removing the loop could turn an empty list into a full one.

Autotuning compiles and benchmarks each config: a repeated one costs a compilation and
a benchmark and can only tie with itself.

Depends on: the core's `configs` (and `scopes` to read a name the loop walks):

    core ──> autotune          (names through scopes)

Costs: nothing until asked; one walk of the module, only when it builds configs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.index.scopes import HostNames
from ascend_lint.index.syntax import walk


@dataclass(frozen=True)
class RepeatedConfig:
    node: ast.expr  # the element that repeats
    first: ast.expr  # the earlier element it repeats
    display: ast.List | ast.Tuple


@dataclass(frozen=True)
class RepeatingLoop:
    comprehension: ast.ListComp
    clause: ast.comprehension
    values: int | None  # how many values the loop takes, where known
    non_empty: bool  # it provably takes at least one


class AutotuneFacts:
    def __init__(self, core) -> None:
        self._core = core
        self._scanned: tuple[list[RepeatedConfig], list[RepeatingLoop]] | None = None
        self._names: HostNames | None = None

    def repeated_configs(self) -> list[RepeatedConfig]:
        return self._scan()[0]

    def repeating_loops(self) -> list[RepeatingLoop]:
        return self._scan()[1]

    def _scan(self) -> tuple[list[RepeatedConfig], list[RepeatingLoop]]:
        if self._scanned is not None:
            return self._scanned
        repeated: list[RepeatedConfig] = []
        loops: list[RepeatingLoop] = []
        configs = {id(call) for call in self._core.configs}
        if configs:
            for node in walk(self._core.tree):
                if isinstance(node, (ast.List, ast.Tuple)):
                    repeated += _repeats_in(node, configs)
                elif isinstance(node, ast.ListComp) and any(
                    id(n) in configs for n in walk(node.elt)
                ):
                    loops += self._repeating_clauses(node)
        self._scanned = (repeated, loops)
        return self._scanned

    def _repeating_clauses(self, comp: ast.ListComp) -> list[RepeatingLoop]:
        found = []
        for clause in comp.generators:
            if clause.is_async or clause.ifs:
                continue
            bound = {n.id for n in walk(clause.target) if isinstance(n, ast.Name)}
            if not bound or not all(
                isinstance(n, (ast.Name, ast.Tuple)) for n in walk(clause.target)
            ):
                continue
            readers: list[ast.AST] = [comp.elt]
            for other in comp.generators:
                readers += [other.iter, *other.ifs]
                if other is not clause:
                    readers.append(other.target)
            read = {
                n.id
                for reader in readers
                for n in walk(reader)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            }
            if bound & read:
                continue
            values = self._length(clause.iter, comp, depth=0)
            if values in (0, 1):
                continue  # it repeats nothing
            found.append(RepeatingLoop(comp, clause, values, values is not None and values > 0))
        return found

    def _length(self, expr: ast.AST, at: ast.AST, depth: int) -> int | None:
        """How many values iterating `expr` takes, where it is evident."""
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            if any(isinstance(e, ast.Starred) for e in expr.elts):
                return None
            return (
                len(expr.elts)
                if not isinstance(expr, ast.Set)
                else len({ast.dump(e) for e in expr.elts})
            )
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "range"
            and not expr.keywords
            and 1 <= len(expr.args) <= 3
            and all(isinstance(a, ast.Constant) and type(a.value) is int for a in expr.args)
        ):
            try:
                return len(range(*(a.value for a in expr.args)))
            except ValueError:
                return None
        if isinstance(expr, ast.IfExp):
            a, b = self._length(expr.body, at, depth), self._length(expr.orelse, at, depth)
            return None if a is None or b is None else min(a, b)
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
        shape = ast.dump(elt)
        if shape in seen:
            found.append(RepeatedConfig(elt, seen[shape], display))
        else:
            seen[shape] = elt
    return found
