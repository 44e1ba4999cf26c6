"""A module as a sequence of top-level statements ("units") and the groups of them a
rule's findings can depend on ("components").

Definitions (`def`, `class`) are linked when one names another, directly or through a
module-level statement that names one of them (`alias = kernel`); each linked group (a
launcher, its kernels, their helpers) is a component. Everything else at module level
(imports, constants, platform checks) is context that every lint of a component sees.

Two lints start here: an edit in the editor lints again only the components it touched
(`incremental`), and a big module is linted one group of components at a time, so that
its whole syntax tree is never held at once (`engine`).
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
import sys
from dataclasses import dataclass

from ascend_lint.diagnostics import Diagnostic

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_GLOBAL = re.compile(r"\bglobal\s+([\w\s,]+)")
# What a top-level statement is, for what an edit of it can change.
DEFINITION, IMPORT, INERT, BINDING, CONTEXT = "definition", "import", "inert", "binding", "context"


@dataclass(frozen=True)
class Unit:
    """One top-level statement: its rows (from its first decorator), what it is, and
    the module-level names it binds and reads."""

    first: int
    last: int
    kind: str  # DEFINITION, IMPORT, INERT, BINDING or CONTEXT
    binds: frozenset[str]
    reads: frozenset[str]

    @property
    def definition(self) -> bool:
        """A `def` or `class`; anything else is context every lint sees."""
        return self.kind == DEFINITION

    def moved(self, rows: int) -> Unit:
        return dataclasses.replace(self, first=self.first + rows, last=self.last + rows)


def unit_of(stmt: ast.stmt, lines: list[str]) -> Unit:
    """The unit of a top-level statement of the module whose lines are `lines`."""
    first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
    last = stmt.end_lineno or stmt.lineno
    # What it reads: every identifier in its text (attributes, strings and comments
    # too), a superset that only links more than needed; a walk of the tree would
    # cost a third of the lint of a big module.
    text = "\n".join(lines[first - 1 : last])
    reads = set(map(sys.intern, _IDENTIFIER.findall(text)))  # one string per name
    if isinstance(stmt, _DEFINITIONS):
        binds = {stmt.name}
        if "global" in reads:  # assigns module names from inside a function
            binds.update(n for m in _GLOBAL.finditer(text) for n in _IDENTIFIER.findall(m[1]))
    else:
        binds = set()
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                binds.add(node.id)
            elif isinstance(node, _DEFINITIONS):
                binds.add(node.name)  # in a module-level `if` or `try`
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                binds.update((a.asname or a.name).split(".")[0] for a in node.names)
    return Unit(first, last, _kind(stmt), frozenset(binds), frozenset(reads))


def _kind(stmt: ast.stmt) -> str:
    if isinstance(stmt, _DEFINITIONS):
        return DEFINITION
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return IMPORT
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return INERT  # a docstring: nothing reads it
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and all(
        isinstance(t, ast.Name)
        for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
    ):
        return BINDING  # `BLOCK = 64`: only the statements that read the name depend on it
    return CONTEXT  # platform checks, module-level `if`/`try`, calls: anything may


def components(units: list[Unit]) -> list[int]:
    """For each unit, the index of its component's representative. Definitions are
    linked through every name one binds and another reads; a module-level statement
    links the definitions it reads with those that read what it binds (`alias =
    kernel`), and imports link nothing (every lint sees them anyway)."""
    parent = list(range(len(units)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    defined = set()
    for u in units:
        if u.definition:
            defined |= u.binds
    binders: dict[str, list[int]] = {}
    readers: dict[str, list[int]] = {}
    for i, u in enumerate(units):
        if u.kind in (IMPORT, INERT):
            continue
        if not u.definition and not (u.reads & defined):
            continue  # context that depends on no definition: links nothing
        for name in u.binds:
            binders.setdefault(name, []).append(i)
        for name in u.reads:
            readers.setdefault(name, []).append(i)
    for name, at in binders.items():
        for j in at[1:]:
            union(at[0], j)
        for j in readers.get(name, ()):
            union(at[0], j)
    return [find(i) for i in range(len(units))]


def by_unit(
    units: list[Unit], component: list[int], found: list[Diagnostic]
) -> list[list[Diagnostic]] | None:
    """The findings per definition, or None when one lies outside every definition or
    its fix reaches beyond its component (it may then depend on the whole module)."""
    firsts = [u.first for u in units]
    rows: dict[int, list[tuple[int, int]]] = {}
    for i, u in enumerate(units):
        rows.setdefault(component[i], []).append((u.first, u.last))
    per_unit: list[list[Diagnostic]] = [[] for _ in units]
    for d in found:
        i = bisect.bisect_right(firsts, d.start.row) - 1
        if i < 0 or not units[i].definition or not units[i].first <= d.end.row <= units[i].last:
            return None
        spans = rows[component[i]]
        edits = d.fix.edits if d.fix is not None else ()
        together = d.fix.together.edits if d.fix is not None and d.fix.together else ()
        for e in (*edits, *together):
            if not any(a <= e.start.row and e.end.row <= b for a, b in spans):
                return None
        per_unit[i].append(d)
    return per_unit


def blank(lines: list[str], unit: Unit) -> None:
    """Leave the lines of `unit` empty in `lines` (a copy of the module's lines): the
    other rows keep their numbers, so every node a part parses is where it is in the
    whole text."""
    lines[unit.first - 1 : unit.last] = [""] * (unit.last - unit.first + 1)
