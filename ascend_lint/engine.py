"""Lint one file: read, prefilter, parse once, index once, run the selected rules."""

from __future__ import annotations

import ast
import bisect
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ascend_lint.codemods import node_span
from ascend_lint.diagnostics import Diagnostic, Position, compact_citations
from ascend_lint.forks import shared
from ascend_lint.index import KernelIndex
from ascend_lint.results import (
    RULE_TOKENS,
    FileResult,
    may_contain_kernels,
    may_name_own_codes,
    unparsable,
    worth_reading,
)
from ascend_lint.rules import (
    RULES_BY_CODE,
    SYNTAX_ERROR_CODE,
    UNUSED_NOQA_CODE,
    Finding,
    Rule,
    RuleContext,
)
from ascend_lint.source import (
    SourceDecodeError,
    SourceFile,
    collector_paused,
    parse_python,
    top_level_pieces,
)
from ascend_lint.stopping import LintStopped, stop_signal
from ascend_lint.suppression import apply_noqa, file_exemption, silences, unused_noqa
from ascend_lint.toolchain import split_lint_target
from ascend_lint.ub_model import DEFAULT_TARGET, get_target
from ascend_lint.units import INERT, Unit, blank, by_unit, components, unit_of

# Every code a rule has, enabled or not (ASC000 included): a noqa code outside it is unknown.
KNOWN_CODES = frozenset(RULES_BY_CODE) | {SYNTAX_ERROR_CODE}


def lint_source(
    path: str,
    raw: bytes,
    codes: frozenset[str],
    ignore_noqa: bool = False,
    target: str = DEFAULT_TARGET,
    observe: Callable[[Linted], None] | None = None,
    tree: ast.Module | None = None,
    workers: int = 1,
) -> FileResult:
    """Lint one file's bytes with the rules of `codes`; `target` names the SoC whose
    Unified Buffer the budget rule checks against (and, `toolchain.lint_target`, the
    triton-ascend release). `observe` sees the parsed module, its
    kernel index and the rules' findings before noqa comments apply (an incremental lint
    starts there; the gate's IR checks read the same index). `tree`: `ast`'s whole tree
    of the bytes' text, where the caller has parsed it already (a fix round has).
    `workers`: how many processes may share a module linted in parts (this one and
    forks of it: only a caller with one thread passes more than 1)."""
    # Syntax trees are acyclic and freed by reference counting; the cycle collector
    # would only re-scan them (about 15% of the run time on large trees).
    with collector_paused():
        result = _lint_source(path, raw, codes, ignore_noqa, target, observe, tree, workers)
        if result.error and _TOO_DEEP in result.error:
            result = _retry_deep(
                lambda: _lint_source(path, raw, codes, ignore_noqa, target, observe, tree, workers),
                result,
            )
        return result


# `ast.parse` accepts nesting about three times deeper than the recursion limit lets the
# index and rules walk (a 400-term sum in a kernel is enough to hit it). Such a file is
# linted once more on a thread with a large stack and a recursion limit to match; only
# if that fails too is it reported as an internal error.
_TOO_DEEP = "expression nesting too deep"
_DEEP_RECURSION_LIMIT = 50_000  # frames: ~10 KiB of stack each at most
_DEEP_STACK_BYTES = 512 * 1024 * 1024  # address space; pages are used only as needed
_deep_lock = threading.Lock()


def _syntax_error_column(source: SourceFile, row: int, offset: int | None) -> int:
    """The 0-based column, in characters, of a SyntaxError's 1-based offset. CPython
    counts in characters, except for some errors after a multi-line string, where it
    counts UTF-8 bytes: an offset past the line's end is read as bytes."""
    col = max((offset or 1) - 1, 0)
    if not 1 <= row <= len(source.lines):
        return col
    line = source.lines[row - 1]
    if col > len(line):
        col = min(
            len(line.encode("utf-8", "surrogatepass")[:col].decode("utf-8", "ignore")), len(line)
        )
    return col


def _retry_deep(job: Callable[[], FileResult], fallback: FileResult) -> FileResult:
    box: list = []

    def run() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, _DEEP_RECURSION_LIMIT))
        try:
            box.append(job())
        except BaseException as exc:
            box.append(exc)
        finally:
            sys.setrecursionlimit(limit)

    with _deep_lock:
        try:
            old_size = threading.stack_size(_DEEP_STACK_BYTES)
        except (ValueError, RuntimeError):  # a platform without settable thread stacks
            return fallback
        try:
            thread = threading.Thread(target=run, name="ascend-lint-deep", daemon=True)
            thread.start()
        except RuntimeError:  # no thread could be started
            return fallback
        finally:
            threading.stack_size(old_size)
        thread.join()
    if box and isinstance(box[0], BaseException):
        raise box[0]
    return box[0] if box else fallback


def _lint_source(
    path: str,
    raw: bytes,
    codes: frozenset[str],
    ignore_noqa: bool = False,
    target: str = DEFAULT_TARGET,
    observe: Callable[[Linted], None] | None = None,
    tree: ast.Module | None = None,
    workers: int = 1,
) -> FileResult:
    result = FileResult(path)
    kernel_candidate = may_contain_kernels(raw)
    if not worth_reading(raw, codes):
        result.skipped = True
        return result
    try:
        source = SourceFile.from_bytes(path, raw)
    except SourceDecodeError as exc:
        return unparsable(result, codes, f"file is not valid source text: {exc}")
    relevant = kernel_candidate and any(token in raw for token in RULE_TOKENS)
    found = index = None
    if relevant and observe is None and tree is None and len(source.text) >= PARTS_ABOVE_CHARS:
        found = findings_in_parts(result, source, codes, target, ignore_noqa, workers)
    if found is None:
        if tree is None:
            try:
                tree = parse_python(source.text, filename=path)
            except SyntaxError as exc:
                row = exc.lineno or 1
                col = _syntax_error_column(source, row, exc.offset)
                return unparsable(result, codes, f"SyntaxError: {exc.msg}", row, col)
            except (ValueError, RecursionError, MemoryError) as exc:
                return unparsable(result, codes, f"cannot parse: {type(exc).__name__}: {exc}")
        if relevant:
            index = build_index(result, tree)
            if index is not None:
                found = run_rules(result, source, index, codes, target, ignore_noqa)
    if found is None and result.error is None and may_name_own_codes(raw, codes):
        found = []  # no rule looks at this file; its noqa comments are still read
    if found is not None:
        if observe is not None and tree is not None:
            observe(Linted(source, tree, index, found))
        result.diagnostics = finish_findings(source, found, codes, ignore_noqa)
    return result


# A module this big is linted one group of its components at a time (`units`): its
# syntax tree takes about 100 bytes per byte of source and the index as much again, so
# a 5 MB module linted whole peaks above 600 MB, and the rules' walks of one big index
# cost more per kernel than of several small ones.
PARTS_ABOVE_CHARS = 1024 * 1024
PART_CHARS = 256 * 1024  # of definitions per group (the module-level code comes on top)
# Each fork that shares the parts adds ~80 MiB (its part's tree and index, and the pages
# of the module's text it touches): three processes keep a 5 MB module under 300 MiB.
PART_WORKERS = 3


def findings_in_parts(
    result: FileResult,
    source: SourceFile,
    codes: frozenset[str],
    target: str = DEFAULT_TARGET,
    ignore_noqa: bool = False,
    workers: int = 1,
) -> list[Diagnostic] | None:
    """The rules' findings on `source`, linted one group of components at a time: each
    group on a copy of the module with every other definition's lines left blank (rows
    and columns unchanged), with the module-level code but its bare strings (docstrings:
    nothing reads them, and a big module repeats them in every part otherwise). None
    where the result cannot be shown equal to a lint of the whole text, which the caller
    then does: a piece that does not parse alone, a finding or a fix outside its
    component's definitions, a part with nothing for a rule, a rule's internal error, a
    file-level noqa comment in a definition or a string, a text that is not plain UTF-8
    with LF line breaks. With `workers` > 1 the groups are shared among this process
    and forks of it, each taking every `workers`-th group."""
    if source.encoding != "utf-8" or source.has_bom or "\r" in source.text:
        return None
    lines = source.lines
    try:
        units = [
            unit_of(stmt, lines)
            for piece in top_level_pieces(source.text, source.path)
            for stmt in piece
        ]  # each piece's tree is dropped once its units are read
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    component = components(units)
    context_only = list(lines)  # the module-level code, definitions and strings blank
    for u in units:
        if u.definition or u.kind == INERT:
            blank(context_only, u)
    # A part's text lies between the module-level code alone and the whole text, and the
    # file-level noqa comments of a text are a union: where those two agree, every part
    # agrees with the whole (`run_rules` reads them for the fixes it leaves alone).
    context_text = "\n".join(context_only)
    context = SourceFile.from_text(source.path, context_text)
    if file_exemption(context) != file_exemption(source):
        return None
    groups = _component_groups(units, component, lines)

    def lint_parts(share: list[set[int]]) -> list[list[Diagnostic]]:
        found = []
        for group in share:
            part_lines = list(context_only)
            for j in group:
                u = units[j]
                part_lines[u.first - 1 : u.last] = lines[u.first - 1 : u.last]
            text = "\n".join(part_lines)
            part = SourceFile.from_text(source.path, text)
            try:
                tree = parse_python(text, filename=source.path)
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                raise _NotInParts from exc
            part_found = rule_findings(result, part, tree, codes, target, ignore_noqa)
            del tree  # never two parts' trees at once
            if result.error is not None or part_found is None:
                result.error = None  # the whole lint says it again, if it is there
                raise _NotInParts
            if by_unit(units, component, part_found) is None:
                raise _NotInParts
            found.append(part_found)
        return found

    workers = max(1, min(workers, len(groups), PART_WORKERS))
    try:
        # the first share here, the others in forks; one that cannot be shown equal
        # ends the others: the whole lint follows
        shares = shared([lambda k=k: lint_parts(groups[k::workers]) for k in range(workers)])
    except _NotInParts:
        return None
    # back in source order: group i is the (i // workers)-th of share i % workers
    return [d for i in range(len(groups)) for d in shares[i % workers][i // workers]]


class _NotInParts(Exception):
    """A part's findings cannot be shown equal to the whole lint's."""


def _component_groups(units: list[Unit], component: list[int], lines: list[str]) -> list[set[int]]:
    """The definitions' units in groups of whole components, about `PART_CHARS` of
    source each (one bigger component alone), in source order."""
    members: dict[int, list[int]] = {}
    for i, u in enumerate(units):
        if u.definition:
            members.setdefault(component[i], []).append(i)
    groups: list[set[int]] = []
    group: set[int] = set()
    size = 0
    for js in members.values():
        group.update(js)
        size += sum(len(line) + 1 for j in js for line in lines[units[j].first - 1 : units[j].last])
        if size >= PART_CHARS:
            groups.append(group)
            group, size = set(), 0
    if group:
        groups.append(group)
    return groups


@dataclass
class Linted:
    """One file as the rules saw it: what `lint_source` shows an observer."""

    source: SourceFile
    tree: ast.Module
    index: KernelIndex | None  # None where no rule looked at the file
    findings: list[Diagnostic]  # as the rules reported them, before noqa comments


def rule_findings(
    result: FileResult,
    source: SourceFile,
    tree: ast.Module,
    codes: frozenset[str],
    target: str = DEFAULT_TARGET,
    ignore_noqa: bool = False,
) -> list[Diagnostic] | None:
    """Index the module once and run the rules of `codes` on it: their findings as the
    rules report them (before supersession and noqa comments), or None when the module
    has nothing a rule looks at. An internal error is recorded on `result`."""
    index = build_index(result, tree)
    if index is None:
        return None
    return run_rules(result, source, index, codes, target, ignore_noqa)


def build_index(result: FileResult, tree: ast.Module) -> KernelIndex | None:
    """The module's kernel index, or None when it has nothing a rule looks at (or the
    index failed: recorded on `result`)."""
    try:
        index = KernelIndex.build(tree)
    except RecursionError:
        result.error = "internal error while indexing (expression nesting too deep)"
        return None
    except Exception as exc:  # an index bug must not hide other files' findings
        result.error = f"internal error while indexing: {type(exc).__name__}: {exc}"
        return None
    if not index.kernels and not index.launch_calls and not index.configs and not index.aliases.any:
        return None
    return index


def run_rules(
    result: FileResult,
    source: SourceFile,
    index: KernelIndex,
    codes: frozenset[str],
    target: str = DEFAULT_TARGET,
    ignore_noqa: bool = False,
) -> list[Diagnostic]:
    """The findings of the rules of `codes` on an indexed module (see `rule_findings`).

    A rule whose fixes reach past their own finding (`Rule.fixes_after_suppression`) is
    told, once it has reported, which of its findings the noqa comments silence (none
    with `ignore_noqa`), and sets its fixes then: no rule reads the comments itself."""
    soc, release = split_lint_target(target)
    ctx = RuleContext(index, source, get_target(soc), release)
    found: list[Diagnostic] = []
    exemption = None if ignore_noqa else file_exemption(source)
    stop = stop_signal()
    for code in sorted(codes):
        if stop is not None and stop.is_set():
            raise LintStopped(source.path)
        rule_cls = RULES_BY_CODE.get(code)
        if rule_cls is None:
            continue
        rule = rule_cls()
        try:
            findings = list(rule.check(ctx))
            made = [_diagnostic(rule, source, finding) for finding in findings]
            if rule.fixes_after_suppression and findings:
                silenced = set()
                if not ignore_noqa:
                    silenced = {i for i, d in enumerate(made) if silences(source, d, exemption)}
                rule.fix_live(ctx, findings, silenced)
                for diagnostic, finding in zip(made, findings):
                    diagnostic.fix = finding.fix
            found.extend(made)
        except RecursionError:
            result.error = f"internal error in {code} ({rule.name}): expression nesting too deep"
        except Exception as exc:  # a rule bug must not hide other files' findings
            result.error = f"internal error in {code} ({rule.name}): {type(exc).__name__}: {exc}"
    return found


def _diagnostic(rule: Rule, source: SourceFile, finding: Finding) -> Diagnostic:
    start, end = node_span(source, finding.node)
    if finding.end_node is not None:
        end = node_span(source, finding.end_node)[1]
    template, related = compact_citations(finding.message, finding.related)
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        template=template,
        path=source.path,
        start=start,
        end=end,
        fix=finding.fix,
        also_at=tuple(node_span(source, n) for n in finding.also_at),
        related=tuple(node_span(source, n) for n in related),
    )


def finish_findings(
    source: SourceFile, found: list[Diagnostic], codes: frozenset[str], ignore_noqa: bool = False
) -> list[Diagnostic]:
    """The file's diagnostics from the rules' findings: superseded ones dropped, the
    noqa comments applied (and the unused ones reported), one of each, in order."""
    used: set[tuple[int, str]] = set()
    kept = _drop_superseded(found)
    if ignore_noqa:  # --ignore-noqa: report what the comments would silence
        for d in kept:
            d.noqa_row = d.start.row
    else:
        kept = apply_noqa(source, kept, used)
    if UNUSED_NOQA_CODE in codes and not ignore_noqa:
        kept += unused_noqa(
            source,
            used,
            codes,
            UNUSED_NOQA_CODE,
            RULES_BY_CODE[UNUSED_NOQA_CODE].name,
            known=KNOWN_CODES,
        )
    return _dedupe(kept)


def _drop_superseded(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One finding per defect: a broader rule's finding is dropped where a rule that
    supersedes it reports a span overlapping the broad finding's own, or one of the
    places the broad finding says its defect is also written (`also_at`: the
    definition of a local address it reads), so ASC002 wins over ASC001 whether the
    address is built in the access or in a local before it.
    Runs before noqa, so suppressing the specific finding does not revive the broad one."""
    # Per superseded code: the specific spans sorted by start, with the running maximum
    # of their ends, so each finding is tested in O(log n) (a big file has thousands).
    spans: dict[str, list[tuple[Position, Position]]] = {}
    for d in diagnostics:
        rule = RULES_BY_CODE.get(d.code)
        for broad in (rule.supersedes if rule else ()) or ():
            spans.setdefault(broad, []).append((d.start, d.end))
    if not spans:
        return diagnostics
    tables: dict[str, tuple[list[Position], list[Position]]] = {}
    for broad, pairs in spans.items():
        pairs.sort()
        ends: list[Position] = []
        for _start, end in pairs:
            ends.append(max(end, ends[-1]) if ends else end)
        tables[broad] = ([start for start, _ in pairs], ends)

    def superseded(d: Diagnostic) -> bool:
        table = tables.get(d.code)
        if table is None:
            return False
        starts, max_ends = table
        for start, end in ((d.start, d.end), *d.also_at):
            n = bisect.bisect_left(starts, end)  # spans that start before this one ends
            if n > 0 and max_ends[n - 1] > start:
                return True
        return False

    return [d for d in diagnostics if not superseded(d)]


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen = set()
    out = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        key = (d.code, d.start, d.end, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
