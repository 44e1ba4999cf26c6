"""What removing `num_warps=` / `num_stages=` leaves behind, for ASC004's fix.

A launch option is often computed first (`num_warps = 4 if BK == 64 else 8`) or read
through a helper imported for nothing else (`num_stages=2 if check_shared_mem() else
1`). Deleting the option alone leaves a local assigned and never read and an import
never used: the project's own linters (pyflakes' F841 and F401) reject what the fix
wrote. This module finds, for the options a fix removes, the assignments and imports
that only they read, and the edits that remove those too:

* a local of a host function whose every binding is a plain assignment (a name, or an
  element of a tuple unpacking) and whose every read is inside a removed option (or
  inside another such assignment's value, to a fixpoint): the assignment is deleted
  when its value is free of side effects (literals, names, attributes, comparisons,
  conditionals, arithmetic on literals: the model of Ruff's F841 fix); otherwise the
  value is kept as an expression statement, so whatever it does still happens, and the
  fix message says so. Unpacked from a value that is no same-shape tuple
  (`BM, num_warps = launch_arg(...)`), the name becomes `_` (Ruff's RUF059 asks for
  that). An `if` whose every branch loses all its statements, with tests free of side
  effects, goes whole rather than as branches of `pass`;
* an imported name read only there: removed from its import when the statement keeps
  importing the module (other names, or another import of the same module in the file);
  removing the only import of a module can skip its import-time code, so that fix is
  unsafe and says why. Nothing is removed from an `__init__.py` or a name in `__all__`,
  nor from a scope that calls `locals()`, `vars()`, `eval` or `exec`.

Options whose finding is silenced with `# noqa` stay in the code, so what they read is
kept. The removals of options that read a common name must land together: the rule
gives those findings one shared fix (`groups`).
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field
from pathlib import Path

from ascend_lint.codemods import (
    node_offsets,
    node_text,
    remove_list_elements,
    remove_statement,
    replace_node,
    text_edit,
)
from ascend_lint.diagnostics import Edit
from ascend_lint.index.scopes import Scope
from ascend_lint.index.syntax import child_bodies, free_of_effects, walk
from ascend_lint.source import SourceFile

_DYNAMIC_SCOPE = frozenset({"locals", "vars", "eval", "exec"})


@dataclass
class Cleanup:
    """The edits that go with removing one group of options."""

    edits: list[Edit] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # names whose binding goes
    kept: list[str] = field(default_factory=list)  # values kept for their effects
    unsafe_imports: list[str] = field(default_factory=list)  # a module's only import
    # statements removed whole, by id, with their edit and the scope that holds them:
    # an `if` all of whose branches lose every statement goes whole instead
    removed_statements: dict[int, tuple[ast.stmt, Edit, ast.AST]] = field(default_factory=dict)

    def describe(self) -> str:
        parts = []
        if self.removed:
            names = ", ".join(f"`{n}`" for n in dict.fromkeys(self.removed))
            parts.append(f"and the now unused {names}")
        if self.kept:
            kept = list(dict.fromkeys(self.kept))
            shown = ", ".join(f"`{n}`" for n in kept)
            values, them = ("values", "they") if len(kept) > 1 else ("value", "it")
            parts.append(
                f"(the {values} assigned to {shown} stay as statements: {them} may have side "
                "effects)"
            )
        if self.unsafe_imports:
            shown = ", ".join(f"`{m}`" for m in self.unsafe_imports)
            parts.append(
                f"(unsafe: no other import of {shown} is left to run its import-time code)"
            )
        return " ".join(parts)


class _Unit:
    """A name binding this module may remove: a local of one function, or an import."""

    def __init__(self, scope_node: ast.AST, name: str, bindings, loads: list[ast.Name]):
        self.scope_node = scope_node
        self.name = name
        self.bindings = bindings  # [(value, stmt)]
        self.loads = loads


def knob_cleanups(
    tree: ast.Module,
    source: SourceFile,
    hosts,
    removed_values: dict[int, list[ast.AST]],
) -> tuple[dict[int, int], dict[int, Cleanup]]:
    """`removed_values`: per group key (a container's id), the option values its fix
    deletes. Returns which group each key joins (keys whose options read a common
    orphan join one group) and, per group, the cleanup that goes with it."""
    removed_names: dict[int, int] = {}  # id(Name node) -> group key that removes it
    for key, values in removed_values.items():
        for value in values:
            for node in walk(value):
                if isinstance(node, ast.Name):
                    removed_names[id(node)] = key
    parent = {key: key for key in removed_values}

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    if not removed_names:
        return {k: k for k in removed_values}, {}

    removed = [v for values in removed_values.values() for v in values]
    rows = sorted({v.lineno for v in removed})
    functions = _functions_holding(hosts, rows)
    # The first orphan is a name a removed value reads (every later one is read by an
    # orphan's value): where no such name is assigned or imported, nothing is orphaned,
    # and the scans of the functions' loads and bindings can be skipped.
    read_by_removed = {n.id for node in removed for n in walk(node) if isinstance(n, ast.Name)}
    if read_by_removed.isdisjoint(_imported_names(tree)) and not any(
        read_by_removed & _assigned_or_imported(host.node) for host in functions
    ):
        return {k: k for k in removed_values}, {}
    units = _units(tree, source, hosts, functions, removed)
    orphans: list[tuple[_Unit, set[int]]] = []  # each with the groups whose removal reads it
    orphan_keys: dict[int, set[int]] = {}
    changed = True
    taken: set[int] = set()
    while changed:
        changed = False
        for i, unit in enumerate(units):
            if i in taken or not unit.loads:
                continue
            if all(id(load) in removed_names for load in unit.loads):
                keys = {removed_names[id(load)] for load in unit.loads}
                taken.add(i)
                orphans.append((unit, keys))
                orphan_keys[id(unit)] = keys
                changed = True
                first = next(iter(keys))
                for value, _stmt in unit.bindings:
                    if isinstance(value, ast.expr) and free_of_effects(value):
                        for node in walk(value):
                            if isinstance(node, ast.Name):
                                removed_names[id(node)] = first
    # One group per set of options whose removals share an orphan, or a statement that
    # binds orphans of several (one edit rewrites it).
    by_stmt: dict[int, tuple[ast.stmt, list[tuple[_Unit, object]]]] = {}
    for unit, _keys in orphans:
        for value, stmt in unit.bindings:
            by_stmt.setdefault(id(stmt), (stmt, []))[1].append((unit, value))
    linked = [list(keys) for _unit, keys in orphans]
    for _stmt, entries in by_stmt.values():
        linked.append([k for unit, _v in entries for k in orphan_keys[id(unit)]])
    for keys in linked:
        for other in keys[1:]:
            parent[find(other)] = find(keys[0])
    group_of = {k: find(k) for k in removed_values}
    cleanups: dict[int, Cleanup] = {}
    for stmt, entries in by_stmt.values():
        group = group_of[next(iter(orphan_keys[id(entries[0][0])]))]
        _statement_edits(source, tree, stmt, entries, cleanups.setdefault(group, Cleanup()))
    for cleanup in cleanups.values():
        _remove_emptied_ifs(source, cleanup)
        _merge_same_arms(source, cleanup, removed)
    return group_of, cleanups


def _merge_same_arms(source: SourceFile, cleanup: Cleanup, removed: list[ast.AST]) -> None:
    """Consecutive `if`/`elif` arms that the removals leave the same
    (`elif major == 8: BLOCK = 32; stages = 2` / `elif major == 7: BLOCK = 32; stages = 1`)
    become one arm whose test joins theirs with `or`, as Ruff's SIM114 fix writes them:
    the tests run in the same order and the same body runs."""
    gone = cleanup.removed_statements
    if not gone:
        return
    edited = {id(n) for value in removed for n in walk(value)}  # options removed elsewhere
    text = source.text
    seen: set[int] = set()
    for stmt, _edit, scope in list(gone.values()):
        for chain in _if_chains(scope, stmt):
            if id(chain[0]) in seen:
                continue
            seen.add(id(chain[0]))
            bodies = []
            for arm in chain:
                rest = [s for s in arm.body if id(s) not in gone]
                clean = rest and not any(
                    id(n) in edited or id(n) in gone for s in rest for n in walk(s)
                )
                bodies.append([ast.unparse(s) for s in rest] if clean else None)
            i = 0
            while i < len(chain):
                j = i
                while (
                    j + 1 < len(chain)
                    and bodies[i] is not None
                    and bodies[j + 1] == bodies[i]
                    and any(id(s) in gone for arm in chain[i : j + 2] for s in arm.body)
                ):
                    j += 1
                if j > i:
                    tests = " or ".join(_or_operand(source, arm.test) for arm in chain[i : j + 1])
                    cleanup.edits.append(replace_node(source, chain[i].test, tests))
                    start = source.offset(chain[i + 1].lineno, 0)
                    last = chain[j].body[-1]
                    end = text.find("\n", node_offsets(source, last)[1])
                    end = len(text) if end < 0 else end + 1
                    cleanup.edits.append(text_edit(source, start, end, ""))
                    inside = {id(s) for arm in chain[i + 1 : j + 1] for s in arm.body}
                    dropped = {id(gone[k][1]) for k in inside if k in gone}
                    cleanup.edits = [e for e in cleanup.edits if id(e) not in dropped]
                i = j + 1


def _if_chains(scope: ast.AST, stmt: ast.stmt) -> list[list[ast.If]]:
    """The `if`/`elif` chains (each arm an `ast.If`) one of whose arms holds `stmt`
    directly in its body."""
    found = []
    todo = [scope.body]
    while todo:
        block = todo.pop()
        for node in block:
            if isinstance(node, ast.If):
                chain = [node]
                while (
                    len(chain[-1].orelse) == 1
                    and isinstance(chain[-1].orelse[0], ast.If)
                    and chain[-1].orelse[0].col_offset == node.col_offset
                    and chain[-1].orelse[0].lineno > chain[-1].body[-1].end_lineno
                ):
                    chain.append(chain[-1].orelse[0])  # `elif`, not `else:` with an `if`
                if any(s is stmt for arm in chain for s in arm.body):
                    found.append(chain)
                for arm in chain:
                    todo.append(arm.body)
                todo.append(chain[-1].orelse)
            else:
                todo.extend(child_bodies(node))
    return found


def _or_operand(source: SourceFile, test: ast.expr) -> str:
    shown = node_text(source, test)
    weak = isinstance(test, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr))
    return f"({shown})" if weak else shown


def _remove_emptied_ifs(source: SourceFile, cleanup: Cleanup) -> None:
    """An `if` (with its `elif`s and `else`) every branch of which loses all its
    statements, and whose tests do nothing but compare, goes as one statement: its
    branches left as `pass` would be the same arm written again (Ruff's SIM114)."""
    removed = cleanup.removed_statements
    if not removed:
        return
    scopes = {id(scope): scope for _stmt, _edit, scope in removed.values()}

    def emptied(stmt: ast.stmt) -> bool:
        if id(stmt) in removed:
            return True
        if not isinstance(stmt, ast.If) or not free_of_effects(stmt.test):
            return False
        return all(emptied(s) for s in stmt.body) and all(emptied(s) for s in stmt.orelse)

    drop: set[int] = set()
    for scope in scopes.values():
        todo = [scope.body]
        while todo:
            block = todo.pop()
            for stmt in block:
                if isinstance(stmt, ast.If) and emptied(stmt):
                    inner = [n for n in walk(stmt) if id(n) in removed]
                    drop.update(id(n) for n in inner)
                    edit = remove_statement(source, stmt, _alone_in_block(scope, stmt))
                    cleanup.edits.append(edit)
                else:
                    todo.extend(child_bodies(stmt))
    if drop:
        gone = {id(removed[key][1]) for key in drop}
        cleanup.edits = [e for e in cleanup.edits if id(e) not in gone]


def _functions_holding(hosts, rows: list[int]) -> list:
    """The host functions that hold a removed value (`rows`: where those values start)."""
    functions = []
    for host in hosts[1:]:
        node = host.node
        first = bisect.bisect_left(rows, node.lineno)
        if first < len(rows) and rows[first] <= (node.end_lineno or node.lineno):
            functions.append(host)
    return functions


def _imported_names(tree: ast.Module) -> set[str]:
    """The names the module's top-level imports bind."""
    return {
        (alias.asname or alias.name).split(".")[0]
        for stmt in tree.body
        if _is_import(stmt)
        for alias in stmt.names
    }


def _assigned_or_imported(function: ast.AST) -> set[str]:
    """Every name an assignment or an import statement in `function` (nested blocks
    and functions included) binds: a superset of the locals `_scope_units` may offer,
    found from the statements alone, without walking every expression."""
    names: set[str] = set()
    todo = list(function.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(n.id for t in targets for n in walk(t) if isinstance(n, ast.Name))
        elif _is_import(stmt):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            for inner in getattr(stmt, block, ()):
                if isinstance(inner, ast.stmt):
                    todo.append(inner)
                else:  # an `except` handler or a `case`: its body holds the statements
                    todo.extend(inner.body)
    return names


def _units(
    tree: ast.Module, source: SourceFile, hosts, functions: list, removed: list[ast.AST]
) -> list[_Unit]:
    """The bindings that could be orphaned: the imports of the module, and the locals of
    `functions` (those that hold a removed value); only what a removed value reads,
    directly or through another orphan, can be orphaned."""
    units: list[_Unit] = []
    is_package_init = Path(source.path).name == "__init__.py"
    exported = _all_names(tree)
    imported = _imported_names(tree)
    read = {n.id for node in removed for n in walk(node) if isinstance(n, ast.Name)}
    for host in functions:
        units += _scope_units(host, False, is_package_init, exported, read)
    # The module's imports only when something removed may read one, directly or
    # through the locals it reads (scanning them walks the whole module).
    if read & imported and _read_through(removed, units) & imported:
        units += _scope_units(hosts[0], True, is_package_init, exported, set())
    return units


def _read_through(removed: list[ast.AST], units: list[_Unit]) -> set[str]:
    """The names the removed values read, and those read by the values assigned to the
    locals among them, and so on: every name that could be orphaned."""
    by_name: dict[str, list[_Unit]] = {}
    for unit in units:
        by_name.setdefault(unit.name, []).append(unit)
    names = {n.id for node in removed for n in walk(node) if isinstance(n, ast.Name)}
    todo = list(names)
    while todo:
        for unit in by_name.get(todo.pop(), ()):
            for value, _stmt in unit.bindings:
                if not isinstance(value, ast.expr):
                    continue
                for n in walk(value):
                    if isinstance(n, ast.Name) and n.id not in names:
                        names.add(n.id)
                        todo.append(n.id)
    return names


def _scope_units(host, module: bool, is_package_init: bool, exported, read: set[str]):
    """The removable bindings of one function (or the module); `read` collects the names
    the function reads."""
    node = host.node
    loads: dict[str, list[ast.Name]] = {}
    dynamic = False
    declared: set[str] = set()
    for sub in walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            loads.setdefault(sub.id, []).append(sub)
            dynamic = dynamic or sub.id in _DYNAMIC_SCOPE
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            declared.update(sub.names)
    read.update(loads)
    if dynamic:
        return []
    units = []
    scope = Scope.scan(host)
    for name, bindings in scope.bindings.items():
        if name in declared or name in scope.declared_global:
            continue
        if all(_is_import(stmt) for _v, stmt in bindings):
            if is_package_init or name in exported:
                continue
            if not all(_top_level(node, stmt) for _v, stmt in bindings):
                continue  # `try: import x` / `if TYPE_CHECKING:`: not touched
        elif module:
            continue  # a module global may be imported by other modules
        elif not all(_plain_assignment(value, stmt) for value, stmt in bindings):
            continue
        units.append(_Unit(node, name, bindings, loads.get(name, [])))
    return units


def _all_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            for node in walk(stmt):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    names.add(node.value)
    return names


def _is_import(stmt: ast.AST) -> bool:
    return isinstance(stmt, (ast.Import, ast.ImportFrom))


def _top_level(scope_node: ast.AST, stmt: ast.AST) -> bool:
    return any(s is stmt for s in scope_node.body)


def _plain_assignment(value, stmt: ast.AST) -> bool:
    if value is None and _unpacked(stmt):
        return True  # an element of `a, b = f()`: renamed `_` when orphaned
    if not isinstance(value, ast.expr):
        return False
    if isinstance(stmt, ast.AnnAssign):
        return stmt.value is value and isinstance(stmt.target, ast.Name)
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    target = stmt.targets[0]
    if isinstance(target, ast.Name):
        return stmt.value is value
    return isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple)


def _unpacked(stmt: ast.AST) -> bool:
    """`a, b = value` with names only and a value that is no same-shape tuple."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return False
    target = stmt.targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)):
        return False
    if not all(isinstance(e, ast.Name) for e in target.elts):
        return False
    value = stmt.value
    return not (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts))


def _statement_edits(
    source: SourceFile, tree: ast.Module, stmt: ast.stmt, entries, cleanup: Cleanup
) -> None:
    """The edit for one statement that binds orphaned names, added to `cleanup`."""
    names = [unit.name for unit, _v in entries]
    gone = set(names)
    scope = entries[0][0].scope_node
    if _is_import(stmt):
        aliases = stmt.names
        drop = [i for i, a in enumerate(aliases) if (a.asname or a.name.split(".")[0]) in gone]
        if len(drop) < len(aliases):
            edit = remove_list_elements(source, aliases, drop)
        else:
            edit = remove_statement(source, stmt, _alone_in_block(tree, stmt))
            if not _imported_elsewhere(tree, stmt):
                cleanup.unsafe_imports.append(_module_name(stmt))
        cleanup.edits.append(edit)
        cleanup.removed.extend(names)
        return
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
    if _unpacked(stmt):
        # `BM, num_warps = launch_arg(...)`: the value still runs; the name becomes `_`
        # (`_num_warps` where the function reads a `_` of its own, such as gettext's)
        reads_underscore = any(
            isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Load)
            for n in walk(scope)
        )
        for elt in target.elts:
            if isinstance(elt, ast.Name) and elt.id in gone:
                dummy = f"_{elt.id}" if reads_underscore else "_"
                cleanup.edits.append(replace_node(source, elt, dummy))
        cleanup.removed.extend(names)
        return
    if isinstance(target, ast.Name):
        value = stmt.value
        if free_of_effects(value):
            edit = remove_statement(source, stmt, _alone_in_block(scope, stmt))
            cleanup.edits.append(edit)
            cleanup.removed_statements[id(stmt)] = (stmt, edit, scope)
            cleanup.removed.extend(names)
        else:
            cleanup.edits.append(replace_node(source, stmt, node_text(source, value)))
            cleanup.kept.extend(names)
        return
    # `BS, num_warps, num_stages = 64, 4, 2`: drop the orphaned pairs whose values are
    # free of effects; a single pair left is written without the tuple.
    pairs = list(zip(target.elts, stmt.value.elts))
    drop = [
        i
        for i, (t, v) in enumerate(pairs)
        if isinstance(t, ast.Name) and t.id in gone and free_of_effects(v)
    ]
    cleanup.kept.extend(
        t.id
        for i, (t, _v) in enumerate(pairs)
        if isinstance(t, ast.Name) and t.id in gone and i not in drop
    )
    if not drop:
        return
    cleanup.removed.extend(pairs[i][0].id for i in drop)
    if len(drop) == len(pairs):
        edit = remove_statement(source, stmt, _alone_in_block(scope, stmt))
        cleanup.edits.append(edit)
        cleanup.removed_statements[id(stmt)] = (stmt, edit, scope)
        return
    rest = [p for i, p in enumerate(pairs) if i not in drop]
    left = ", ".join(node_text(source, t) for t, _v in rest)
    right = ", ".join(node_text(source, v) for _t, v in rest)
    start = replace_node(source, target, "").start
    end = replace_node(source, stmt.value, "").end
    cleanup.edits.append(Edit(start, end, f"{left} = {right}"))


def _alone_in_block(root: ast.AST, stmt: ast.stmt) -> bool | None:
    """Whether `stmt` is the only statement of its block, found from the function (or
    module) that holds it; None where it is not in a block this walk reaches."""
    todo = [root.body]
    while todo:
        block = todo.pop()
        for other in block:
            if other is stmt:
                return len(block) == 1
            todo.extend(child_bodies(other))
    return None


def _module_name(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.ImportFrom):
        return "." * stmt.level + (stmt.module or "")
    return ", ".join(a.name for a in stmt.names)


def _imported_elsewhere(tree: ast.Module, stmt: ast.stmt) -> bool:
    """Whether another unconditional import in the module imports what `stmt` does, so
    removing `stmt` cannot skip the module's import-time code."""
    wanted = {_module_name(stmt)} if isinstance(stmt, ast.ImportFrom) else None
    for other in tree.body:
        if other is stmt or not _is_import(other):
            continue
        if isinstance(stmt, ast.ImportFrom):
            if isinstance(other, ast.ImportFrom) and _module_name(other) in wanted:
                return True
            if isinstance(other, ast.Import) and stmt.level == 0:
                if any(a.name == stmt.module for a in other.names):
                    return True
        elif isinstance(other, ast.Import):
            if {a.name for a in stmt.names} <= {a.name for a in other.names}:
                return True
    return False
