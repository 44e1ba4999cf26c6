"""Linting an edited buffer again from its previous lint, redoing only what the edit can
change: an editor sends the whole text on every keystroke, and parsing a 60 KB module
alone takes longer than a keystroke's budget.

A module is split into top-level statements and the components they link
(`units`): each component is what a rule's findings can depend on.

After an edit, only the top-level statements around the changed lines are parsed again.
If they are definitions, the components holding them (before or after the edit) are
linted again on a copy of the module with the other definitions' lines left blank, so
every node keeps its row and column; the other components keep their findings, moved
by the rows inserted or removed above them. The noqa comments and the supersession of
findings are then applied to the whole module, as for any lint.

The result equals a lint of the whole text (tests/test_incremental.py edits real
modules at random and compares). Where that cannot be shown from the units alone the
whole text is linted: an edit of module-level code, a syntax error, a finding or a fix
outside its component's definitions, a rule's internal error, a file-level noqa comment
inside a definition, a non-UTF-8 buffer or CRLF line breaks.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from ascend_lint.diagnostics import Diagnostic, Edit, Fix, FixGroup, Position
from ascend_lint.engine import (
    RULE_TOKENS,
    FileResult,
    Linted,
    finish_findings,
    may_contain_kernels,
    rule_findings,
)
from ascend_lint.forks import shared
from ascend_lint.options import LintOptions
from ascend_lint.session import lint_file
from ascend_lint.source import (
    SourceDecodeError,
    SourceFile,
    collector_paused,
    common_ends,
    parse_python,
)
from ascend_lint.suppression import file_exemption
from ascend_lint.units import BINDING, DEFINITION, INERT, Unit, blank, by_unit, components, unit_of


@dataclass
class ModuleMemo:
    """What an incremental lint of the next version starts from."""

    path: str
    options: LintOptions  # what the lint it records ran with (never fixing)
    lines: list[str]
    units: list[Unit]
    findings: list[list[Diagnostic]]  # per unit, as the rules reported them
    exemption: frozenset[str] | None  # what the file-level noqa comments silence
    from_previous: bool = False  # this lint started from the previous one's memo


class _Fallback(Exception):
    """This edit is linted as a whole text (the reason, for tests and logs)."""


def lint_text(
    path: str, raw: bytes, options: LintOptions, previous: ModuleMemo | None = None
) -> tuple[FileResult, ModuleMemo | None]:
    """The lint of `raw` as the file `path` (what `session.lint_file` returns, without
    fixing), from `previous` where it applies, and the memo for the next edit (None when
    this text cannot start one)."""
    if previous is not None:
        relinted = relint(previous, path, raw, options)
        if relinted is not None:
            return relinted
    return lint_whole(path, raw, options)


def relint(
    memo: ModuleMemo,
    path: str,
    raw: bytes,
    options: LintOptions,
    workers: int = 1,
    tree: ast.Module | None = None,
) -> tuple[FileResult, ModuleMemo] | None:
    """`lint_text` from `memo`, or None where the text must be linted whole. `workers`:
    how many processes may share a big lint again (this one and forks of it; only a
    process that may fork, one thread and no open editor pipes, passes more than 1).
    `tree`: `ast`'s whole tree of `raw`, where the caller has parsed it already."""
    if memo.path != path or memo.options != _not_fixing(options):
        return None
    # As in a whole lint: the trees are acyclic, the cycle collector would only re-scan
    # them (and the memos it finds on its way) in the middle of a keystroke's lint.
    try:
        with collector_paused():
            return _relint(memo, raw, workers, tree)
    except _Fallback:
        return None


def lint_whole(
    path: str, raw: bytes, options: LintOptions, workers: int = 1
) -> tuple[FileResult, ModuleMemo | None]:
    """A lint of the whole text, and the memo an edit of it starts from. `workers`: as
    for `relint` (a big text's definitions are then shared among forks, in groups of
    whole components, as a lint again of all of them)."""
    options = _not_fixing(options)
    if workers > 1 and len(raw) >= SPLIT_ABOVE_CHARS:
        try:
            with collector_paused():
                return _lint_whole_in_groups(path, raw, options, workers)
        except _Fallback:
            pass  # linted whole below
    seen: dict = {}

    def keep(linted: Linted) -> None:
        found = [dataclasses.replace(d) for d in linted.findings]
        seen.update(source=linted.source, tree=linted.tree, found=found)

    result = lint_file(path, raw, options, observe=keep)
    if result.error or not seen or not _memo_ready(seen["source"]):
        return result, None
    source = seen["source"]
    units = [unit_of(stmt, source.lines) for stmt in seen["tree"].body]
    del seen["tree"]
    findings = by_unit(units, components(units), seen["found"])
    if findings is None:
        return result, None
    memo = ModuleMemo(path, options, source.lines, units, findings, file_exemption(source))
    return result, memo


def lint_again(
    path: str, options: LintOptions, memo: ModuleMemo | None, workers: int = 1
) -> Callable[[bytes, ast.Module | None], FileResult]:
    """How the rounds of an editor's fix-all lint their fixed text again
    (`fixes.fix_source`): from `memo`, the lint of the text before, then from each
    round's (only the definitions the fixes changed, and those linked to them, are
    linted again; the result equals a whole lint). A round that cannot start from the
    one before is linted whole. `workers`: as for `relint`."""

    def lint(data: bytes, tree: ast.Module | None = None) -> FileResult:
        nonlocal memo
        if memo is not None:
            again = relint(memo, path, data, options, workers, tree)
            if again is not None:
                result, memo = again
                return result
        result, memo = lint_whole(path, data, options, workers)
        return result

    return lint


def _memo_ready(source: SourceFile) -> bool:
    return source.encoding == "utf-8" and not source.has_bom and "\r" not in source.text


def _not_fixing(options: LintOptions) -> LintOptions:
    """An edit is linted, never fixed: fixing is a request of its own."""
    return dataclasses.replace(options, fix=False) if options.fix else options


def _relint(
    memo: ModuleMemo, raw: bytes, workers: int = 1, tree: ast.Module | None = None
) -> tuple[FileResult, ModuleMemo | None]:
    options = memo.options
    source = _source_in_pieces(memo.path, raw)
    if file_exemption(source) != memo.exemption:
        # Rules read them too (a fix leaves silenced code alone): every finding may change.
        raise _Fallback("the file-level noqa comments changed")
    old, new = memo.lines, source.lines
    if old == new:
        raise _Fallback("same text")  # the caller's own cache answers this
    # The changed rows: old[a-1:b] became new[a-1:b+delta] (b < a: lines inserted).
    prefix, suffix = common_ends(old, new)
    a, b, delta = prefix + 1, len(old) - suffix, len(new) - len(old)

    units = memo.units
    before = [i for i, u in enumerate(units) if u.last < a]
    after = [i for i, u in enumerate(units) if u.first > b]
    # The statement just before the change is parsed again with it: indented lines
    # typed after a definition belong to that definition.
    keep_before = before[:-1]
    start = (units[keep_before[-1]].last + 1) if keep_before else 1
    stop = (units[after[0]].first + delta - 1) if after else len(new)
    redone = range(keep_before[-1] + 1 if keep_before else 0, after[0] if after else len(units))

    if tree is not None:
        body = _statements_within(tree, start, stop)
    else:
        piece = "\n" * (start - 1) + "\n".join(new[start - 1 : stop])
        try:
            body = parse_python(piece, filename=memo.path).body
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise _Fallback("the edited statements do not parse alone") from exc
    parsed = [unit_of(stmt, new) for stmt in body]

    # Old statements of the parsed stretch that come back with the same text keep
    # their findings; the others are changed (new, edited or removed).
    waiting: dict[tuple[str, ...], list[int]] = {}
    for i in redone:
        u = units[i]
        waiting.setdefault(tuple(old[u.first - 1 : u.last]), []).append(i)
    new_units: list[Unit] = [units[i] for i in keep_before]
    origin: list[int | None] = list(keep_before)  # new unit -> old unit with its findings
    rebound: set[str] = set()  # module names an edited assignment binds
    parsed_nodes: dict[int, ast.stmt] = {}  # new unit -> its statement, parsed above
    for u, stmt in zip(parsed, body):
        same = waiting.get(tuple(new[u.first - 1 : u.last]))
        old_index = same.pop(0) if same else None
        if old_index is None:
            rebound |= _edited(u)
        parsed_nodes[len(new_units)] = stmt
        new_units.append(u)
        origin.append(old_index)
    for left in waiting.values():
        for i in left:
            rebound |= _edited(units[i])
    for i in after:
        new_units.append(units[i].moved(delta))
        origin.append(i)

    old_component = components(units)
    component = components(new_units)
    members: dict[int, list[int]] = {}
    for j, c in enumerate(component):
        members.setdefault(c, []).append(j)
    kept_old = {i for i in origin if i is not None}
    touched_old = {old_component[i] for i in range(len(units)) if i not in kept_old}
    dirty = {
        component[j]
        for j, i in enumerate(origin)
        if i is None or old_component[i] in touched_old or new_units[j].reads & rebound
    }
    # A component whose rows moved keeps its findings if it moved as one, and if the
    # places its messages cite (`related`: the loop on line 40) are its own.
    moved_by: dict[int, int] = {}  # component -> rows moved
    for c, js in members.items():
        if c in dirty:
            continue
        shifts = {new_units[j].first - units[origin[j]].first for j in js}  # type: ignore[index]
        if len(shifts) > 1:
            dirty.add(c)
            continue
        rows = shifts.pop()
        if rows == 0:
            continue
        spans = [(units[origin[j]].first, units[origin[j]].last) for j in js]  # type: ignore[index]
        for j in js:
            for d in memo.findings[origin[j]]:  # type: ignore[index]
                if not all(any(a <= s.row <= b for a, b in spans) for s, _ in d.related):
                    dirty.add(c)
        if c not in dirty:
            moved_by[c] = rows

    relinted = {j for c in dirty for j in members[c] if new_units[j].definition}
    findings: list[list[Diagnostic]] = [[] for _ in new_units]
    groups: dict[int, FixGroup] = {}  # moved FixGroups by the old one's id
    for j, i in enumerate(origin):
        if j not in relinted and i is not None:
            rows = moved_by.get(component[j], 0)
            cached = memo.findings[i]
            findings[j] = [_moved(d, rows, groups) for d in cached] if rows else cached

    result = FileResult(memo.path)
    if relinted:
        groups = _groups(new, new_units, component, relinted, workers)
        fresh = _lint_groups(memo.path, source, new_units, groups, parsed_nodes, options, result)
        per_unit = by_unit(new_units, component, fresh)
        if per_unit is None:
            raise _Fallback("a finding outside its component")
        for j in relinted:
            findings[j] = per_unit[j]
    _finish(result, source, options, findings)
    return result, ModuleMemo(memo.path, options, new, new_units, findings, memo.exemption, True)


def _source_in_pieces(path: str, raw: bytes) -> SourceFile:
    """The text of `raw`, where a lint of it a few definitions at a time can be shown
    equal to a lint of the whole (else `_Fallback`)."""
    try:
        source = SourceFile.from_bytes(path, raw)
    except SourceDecodeError as exc:
        raise _Fallback("not text") from exc
    if not _memo_ready(source):
        raise _Fallback("encoding or line breaks")
    if not may_contain_kernels(raw) or not any(token in raw for token in RULE_TOKENS):
        raise _Fallback("nothing for a rule in the text")  # a whole lint stops early
    return source


def _finish(
    result: FileResult, source: SourceFile, options: LintOptions, per_unit: list[list[Diagnostic]]
) -> None:
    """`result`'s diagnostics from the rules' findings per unit, as a whole lint's."""
    found = [dataclasses.replace(d) for unit in per_unit for d in unit]
    found.sort(key=lambda d: d.code)  # the rules' order, as a whole lint runs them
    result.diagnostics = finish_findings(source, found, options.codes, options.ignore_noqa)
    options.drop_unfixable(result.diagnostics)  # as `session.lint_file` does


def _lint_whole_in_groups(
    path: str, raw: bytes, options: LintOptions, workers: int
) -> tuple[FileResult, ModuleMemo]:
    """`lint_whole` with every definition linted again, in groups shared among forks:
    the findings of each component are those of the whole text (as for any lint again),
    and the module is parsed once, its statements reused by every group."""
    source = _source_in_pieces(path, raw)
    try:
        body = parse_python(source.text, filename=path).body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise _Fallback("the text does not parse") from exc
    lines = source.lines
    units = [unit_of(stmt, lines) for stmt in body]
    component = components(units)
    definitions = {j for j, u in enumerate(units) if u.definition}
    groups = _groups(lines, units, component, definitions, workers)
    if len(groups) < 2:
        raise _Fallback("nothing to share")
    result = FileResult(path)
    fresh = _lint_groups(path, source, units, groups, dict(enumerate(body)), options, result)
    per_unit = by_unit(units, component, fresh)
    if per_unit is None:
        raise _Fallback("a finding outside its component")
    _finish(result, source, options, per_unit)
    return result, ModuleMemo(path, options, lines, units, per_unit, file_exemption(source))


# Below this many characters of definitions to lint again, a second process costs more
# (the fork, pickling its findings back) than it saves: ~1.2 ms of lint per KB.
SPLIT_ABOVE_CHARS = 128 * 1024


def _groups(
    lines: list[str], units: list[Unit], component: list[int], relinted: set[int], workers: int
) -> list[set[int]]:
    """`relinted` in at most `workers` groups of whole components, of about equal size
    (each component's findings depend on it and the module-level code alone)."""
    size: dict[int, int] = {}
    for j in relinted:
        u = units[j]
        chars = sum(map(len, lines[u.first - 1 : u.last])) + u.last - u.first + 1
        size[component[j]] = size.get(component[j], 0) + chars
    if workers < 2 or len(size) < 2 or sum(size.values()) < SPLIT_ABOVE_CHARS:
        return [relinted]
    bins: list[list] = [[0, set()] for _ in range(min(workers, len(size)))]
    for c in sorted(size, key=lambda c: (-size[c], c)):  # the largest first, to the least full
        least = min(bins, key=lambda b: b[0])
        least[0] += size[c]
        least[1].add(c)
    return [{j for j in relinted if component[j] in members} for _, members in bins]


def _lint_groups(
    path: str,
    source: SourceFile,
    units: list[Unit],
    groups: list[set[int]],
    parsed_nodes: dict[int, ast.stmt],
    options: LintOptions,
    result: FileResult,
) -> list[Diagnostic]:
    """`_lint_part` of each group, the first in this process and each other one in a
    fork of it at the same time (`forks.shared`)."""
    jobs = [
        lambda group=group: _lint_part(path, source, units, group, parsed_nodes, options, result)
        for group in groups
    ]
    return [d for found in shared(jobs) for d in found]


def _lint_part(
    path: str,
    source: SourceFile,
    units: list[Unit],
    relinted: set[int],
    parsed_nodes: dict[int, ast.stmt],
    options: LintOptions,
    result: FileResult,
) -> list[Diagnostic]:
    """The rules' findings on the module with only the definitions of `relinted` (and
    all module-level code) left in, each line where it is in the whole text. The
    statements of `parsed_nodes` (just parsed around the edit) are not parsed again."""
    lines = list(source.lines)
    for j, u in enumerate(units):
        if u.definition and j not in relinted:
            blank(lines, u)
    text = "\n".join(lines)
    part = SourceFile.from_text(path, text)
    if file_exemption(part) != file_exemption(source):
        raise _Fallback("a file-level noqa comment inside a definition")
    reused = [stmt for j, stmt in parsed_nodes.items() if j in relinted or not units[j].definition]
    for j in parsed_nodes:
        blank(lines, units[j])
    try:
        rest = parse_python("\n".join(lines), filename=path).body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise _Fallback("the part does not parse") from exc
    body = sorted([*rest, *reused], key=lambda stmt: stmt.lineno)
    module = ast.Module(body=body, type_ignores=[])
    found = rule_findings(result, part, module, options.codes, options.target)
    if found is None or result.error:
        raise _Fallback("nothing to check in the part, or a rule failed")
    return found


def _statements_within(tree: ast.Module, start: int, stop: int) -> list[ast.stmt]:
    """The top-level statements of `tree` on rows `start`..`stop`: what a parse of those
    rows alone gives, when no statement runs across either end."""
    inside = []
    for stmt in tree.body:
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        last = stmt.end_lineno or stmt.lineno
        if start <= first and last <= stop:
            inside.append(stmt)
        elif first <= stop and last >= start:
            raise _Fallback("the edited statements do not parse alone")
    return inside


def _edited(unit: Unit) -> set[str]:
    """The module names whose readers an edit of `unit` (added, changed or removed)
    can change the findings of; a kind of statement whose effect reaches further
    (an import, a platform check) is linted as a whole text."""
    if unit.kind in (DEFINITION, INERT):
        return set()  # a definition's component is linted again anyway
    if unit.kind == BINDING:
        return set(unit.binds)
    raise _Fallback(f"module-level code changed ({unit.kind})")


def _moved(d: Diagnostic, rows: int, groups: dict[int, FixGroup]) -> Diagnostic:
    """`d` with every position `rows` further down, its fix too. Sibling fixes share
    one FixGroup (compared by identity): their moved fixes share one moved group."""
    fix = d.fix
    if fix is not None:
        together = fix.together
        if together is not None:
            if id(together) not in groups:
                groups[id(together)] = FixGroup(
                    together.size, tuple(_edit(e, rows) for e in together.edits)
                )
            together = groups[id(together)]
        edits = tuple(_edit(e, rows) for e in fix.edits)
        fix = Fix(fix.applicability, fix.message, edits, together)
    return dataclasses.replace(
        d,
        related=tuple((_position(a, rows), _position(b, rows)) for a, b in d.related),
        start=_position(d.start, rows),
        end=_position(d.end, rows),
        fix=fix,
        also_at=tuple((_position(a, rows), _position(b, rows)) for a, b in d.also_at),
    )


def _edit(e: Edit, rows: int) -> Edit:
    return Edit(_position(e.start, rows), _position(e.end, rows), e.content)


def _position(p: Position, rows: int) -> Position:
    return Position(p.row + rows, p.column)
