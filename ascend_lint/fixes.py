"""Applying fixes: text edits, overlap resolution, re-parse check, repeat until stable,
and atomic writes that keep the file's encoding, BOM, line endings and mode."""

from __future__ import annotations

import ast
import bisect
import codecs
import contextlib
import errno
import gc
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from ascend_lint.diagnostics import Applicability, Diagnostic, Fix
from ascend_lint.engine import PARTS_ABOVE_CHARS, lint_source
from ascend_lint.line_wrap import width, wrap_lines
from ascend_lint.results import FileResult
from ascend_lint.source import (
    SourceDecodeError,
    SourceFile,
    collector_paused,
    parse_python,
    top_level_pieces,
)
from ascend_lint.ub_model import DEFAULT_TARGET

_COLLECT_ABOVE_BYTES = 1 << 20
# Most files converge in one or two rounds. A fix that spans a kernel and its launcher
# (ASC001's layout rewrite) overlaps every other such fix of the file, so a file with n
# of them takes n rounds; every round must change the text, so this only bounds a
# pathological case (Ruff allows 100 iterations too).
MAX_ROUNDS = 100


@dataclass
class FixOutcome:
    path: str
    original: bytes
    fixed: bytes
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)  # findings left after fixing
    error: str | None = None  # a fix that broke parsing: the file is left as it was

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


@dataclass(frozen=True)
class AppliedEdit:
    """Where one edit sat before (`old_*`) and sits after (`new_*`) a round, as
    code-point offsets, so the statements a round touched can be found and compared."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int


def _batches(fixes: list[Fix]) -> list[tuple[list[int], tuple]]:
    """(indices of `fixes`, the edits that apply them): one batch per fix, except that
    siblings of a `FixGroup` that are all present go as the group's one edit."""
    members: dict[int, list[int]] = {}
    for i, fix in enumerate(fixes):
        if fix.together is not None:
            members.setdefault(id(fix.together), []).append(i)
    batches = []
    for i, fix in enumerate(fixes):
        group = fix.together
        siblings = members.get(id(group)) if group is not None else None
        if siblings is not None and len(siblings) == group.size:
            if i == siblings[0]:
                batches.append((siblings, group.edits))
            continue
        batches.append(([i], fix.edits))
    return batches


def apply_edits(source: SourceFile, fixes: list[Fix]) -> tuple[str, list[int], list[AppliedEdit]]:
    """Apply non-overlapping fixes, leftmost first; a fix that overlaps one already
    taken waits for the next round (after re-linting, its edits may be different).
    All chosen edits are applied in one pass over the text (a big file has thousands)."""
    spans = []
    for indices, fix_edits in _batches(fixes):
        edits = sorted(
            (
                source.offset(e.start.row, e.start.column),
                source.offset(e.end.row, e.end.column),
                e.content,
            )
            for e in fix_edits
        )
        spans.append((edits[0][0], edits[-1][1], indices, edits))
    spans.sort()
    chosen = []
    shared = []  # fixes identical to one chosen: applied with it (Ruff counts them fixed)
    taken: set[tuple] = set()
    last_end = -1
    for start, end, indices, edits in spans:
        key = tuple(edits)
        if key in taken:
            shared += indices
            continue
        if start < last_end:
            continue
        chosen.append((indices, edits))
        taken.add(key)
        last_end = end
    text = source.text
    pieces: list[str] = []
    placed: list[AppliedEdit] = []
    cursor = 0
    length = 0  # of the new text so far
    for _i, edits in chosen:
        for s, e, content in edits:
            pieces.append(text[cursor:s])
            length += s - cursor
            pieces.append(content)
            placed.append(AppliedEdit(s, e, length, length + len(content)))
            length += len(content)
            cursor = e
    pieces.append(text[cursor:])
    return "".join(pieces), sorted([i for indices, _ in chosen for i in indices] + shared), placed


def encode_like(source: SourceFile, text: str) -> bytes:
    data = text.encode(source.encoding)
    return codecs.BOM_UTF8 + data if source.has_bom else data


# libcst's native parser recurses on the C stack: past this nesting it can crash the
# process instead of raising, so such files are checked with `ast` alone.
_LIBCST_MAX_DEPTH = 200


def _shallow_enough(text: str) -> bool:
    if len(text) < _LIBCST_MAX_DEPTH // 2:
        return True  # each level of nesting takes at least one character
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > _LIBCST_MAX_DEPTH:
            return False
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return True


def _libcst_error(text: str) -> str | None:
    import libcst  # a fix's last check only: linting never needs it (it costs ~0.1 s to import)

    try:
        libcst.parse_module(text)
    except libcst.ParserSyntaxError as exc:
        return f"{exc.message} (line {exc.raw_line})"
    except (ValueError, RecursionError) as exc:
        return str(exc)
    return None


_LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for m in _LINE_WITH_END.finditer(text):
        starts.append(m.end())
    return starts  # starts[-1] == len(text)


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or ()
    return min([node.lineno, *(d.lineno for d in decorators)])


def _child_blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [getattr(node, name, None) for name in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(node, "handlers", ())]
    blocks += [c.body for c in getattr(node, "cases", ())]
    return [b for b in blocks if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _enclosing_lines(
    body: list[ast.stmt],
    first: int,
    last: int,
    first_lines: dict[int, list[int]],
    indent_of: Callable[[int], str],
) -> tuple[int, int, str] | None:
    """The whole lines of the innermost statement(s) holding rows `first`..`last`, and
    what completes them: statements sharing a line (`a = 1; b = 2`) are taken together;
    rows in the header of a compound statement (decorators, a signature, a `for` line)
    are its header lines with `pass` for a body. None when the rows lie between the
    statements of `body` (comments, blank lines). `first_lines` keeps each block's
    statement start rows, computed once per block."""

    def starts_of(block: list[ast.stmt]) -> list[int]:
        found = first_lines.get(id(block))
        if found is None:
            found = first_lines[id(block)] = [_first_line(n) for n in block]
        return found

    starts = starts_of(body)
    while True:
        i = bisect.bisect_right(starts, first) - 1
        if i < 0 or body[i].end_lineno < last:
            return None
        lo, hi = i, i
        while lo > 0 and body[lo - 1].end_lineno >= starts[lo]:
            lo -= 1
        while hi + 1 < len(body) and starts[hi + 1] <= body[hi].end_lineno:
            hi += 1
        top, bottom = starts[lo], max(n.end_lineno for n in body[lo : hi + 1])
        if lo != hi:
            return top, bottom, ""
        node = body[i]
        inside = getattr(node, "body", None)
        if isinstance(inside, list) and inside and isinstance(inside[0], ast.stmt):
            body_row = _first_line(inside[0])
            if top < body_row and last < body_row:
                # A kernel's decorators or a loop's header: not the whole kernel or loop.
                return top, body_row - 1, indent_of(body_row) + "pass\n"
        for block in _child_blocks(node):
            if _first_line(block[0]) > top and _first_line(block[0]) <= first:
                if block[-1].end_lineno >= last:
                    inner = starts_of(block)
                    j = bisect.bisect_right(inner, first) - 1
                    if j >= 0 and block[j].end_lineno >= last:
                        body, starts = block, inner
                        break
        else:
            return top, bottom, ""


def _ended(lines: str) -> str:
    return lines if lines.endswith(("\n", "\r")) or not lines else lines + "\n"


def _as_module(snippet: str) -> str:
    """An indented statement, read as the body of `if 1:` (libcst reads modules)."""
    return "if 1:\n" + snippet if snippet[:1] in (" ", "\t", "\f") else snippet


def touched_statements_objection(
    before: str, after: str, tree: ast.Module, edits: list[AppliedEdit]
) -> str | None:
    """libcst's objection to the statements a round of edits touched, each read alone:
    a big file is never handed to libcst whole (its tree costs about 1 GB per 5 MB of
    source). `tree` is `ast`'s tree of `after`."""
    if not edits:
        return None
    new_starts = _line_starts(after)
    old_starts = _line_starts(before)
    new_ends = [e.new_end for e in edits]
    deltas = [0]
    for e in edits:
        deltas.append(deltas[-1] + (e.new_end - e.new_start) - (e.old_end - e.old_start))

    def row_of(starts: list[int], offset: int) -> int:
        return bisect.bisect_right(starts, offset)

    def indent_of(row: int) -> str:
        line = after[new_starts[row - 1] : new_starts[min(row, len(new_starts) - 1)]]
        return line[: len(line) - len(line.lstrip(" \t\f"))]

    def to_old(offset: int) -> int:
        # `offset` never falls inside an edit: statements are whole lines around them.
        return offset - deltas[bisect.bisect_right(new_ends, offset)]

    ranges: list[tuple[int, int, str]] = []
    first_lines: dict[int, list[int]] = {}
    for e in edits:
        first = row_of(new_starts, e.new_start)
        last = row_of(new_starts, max(e.new_end - 1, e.new_start))
        found = _enclosing_lines(tree.body, first, last, first_lines, indent_of)
        ranges.append(found or (first, last, ""))
    ranges.sort()
    merged: list[list] = []
    for top, bottom, stub in ranges:
        if merged and top <= merged[-1][1]:
            if bottom > merged[-1][1]:  # a longer range: its own completion, if any
                merged[-1][1:] = [bottom, stub]
            elif bottom == merged[-1][1] and not stub:
                merged[-1][2] = ""  # the whole statement covers its header
        else:
            merged.append([top, bottom, stub])
    for top, bottom, stub in merged:
        a, b = new_starts[top - 1], new_starts[min(bottom, len(new_starts) - 1)]
        fixed = _as_module(_ended(after[a:b]) + stub)
        if not _shallow_enough(fixed):
            continue
        problem = _libcst_error(fixed)
        if problem is None:
            continue
        old_a, old_b = to_old(a), to_old(b)
        # Whole lines of the text before the round, so a statement reads the same way.
        old_a = old_starts[row_of(old_starts, old_a) - 1]
        if _libcst_error(_as_module(_ended(before[old_a:old_b]) + stub)) is None:
            return problem
    return None


def _reads_the_same(old: str, new: str, stub: str) -> bool:
    """Whether a statement's lines split anew read as they did, to `ast` and libcst."""

    def tree(text: str) -> str | None:
        try:
            return ast.dump(ast.parse(_as_module(_ended(text) + stub)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    found = tree(old)
    if found is None or found != tree(new):
        return False
    snippet = _as_module(_ended(new) + stub)
    return not _shallow_enough(snippet) or _libcst_error(snippet) is None


def wrap_lengthened_lines(
    before: str, after: str, tree: ast.Module, edits: list[AppliedEdit], limit: int
) -> str:
    """`after` with the lines a round's edits made longer than `limit` (where the lines
    they replaced were not) split inside their brackets (`line_wrap`), statement by
    statement. A statement whose split does not read the same is left as the fixes
    wrote it. `after` itself when nothing is split. `tree` is `ast`'s tree of `after`."""
    if not edits:
        return after
    new_starts, old_starts = _line_starts(after), _line_starts(before)

    def row_of(starts: list[int], offset: int) -> int:
        return bisect.bisect_right(starts, offset)

    def line(text: str, starts: list[int], row: int) -> str:
        return text[starts[row - 1] : starts[min(row, len(starts) - 1)]]

    long_rows: set[int] = set()
    for e in edits:
        old_rows = range(
            row_of(old_starts, e.old_start), row_of(old_starts, max(e.old_end - 1, e.old_start)) + 1
        )
        if any(width(line(before, old_starts, r)) > limit for r in old_rows):
            continue  # too long already: not the fix's doing
        for r in range(
            row_of(new_starts, e.new_start), row_of(new_starts, max(e.new_end - 1, e.new_start)) + 1
        ):
            if width(line(after, new_starts, r)) > limit:
                long_rows.add(r)
    if not long_rows:
        return after

    def indent_of(row: int) -> str:
        text = line(after, new_starts, row)
        return text[: len(text) - len(text.lstrip(" \t\f"))]

    statements: dict[tuple[int, int, str], list[int]] = {}
    first_lines: dict[int, list[int]] = {}
    for r in sorted(long_rows):
        found = _enclosing_lines(tree.body, r, r, first_lines, indent_of)
        if found is not None:
            statements.setdefault(found, []).append(r)
    pieces: list[str] = []
    cursor = 0
    for (top, bottom, stub), rows in sorted(statements.items()):
        a, b = new_starts[top - 1], new_starts[min(bottom, len(new_starts) - 1)]
        if a < cursor:
            continue
        lines = _LINE_WITH_END.findall(after[a:b])
        split = wrap_lines(lines, [r - top for r in rows], limit)
        if split is None or not _reads_the_same("".join(lines), "".join(split), stub):
            continue
        pieces += [after[cursor:a], "".join(split)]
        cursor = b
    if not pieces:
        return after
    return "".join(pieces) + after[cursor:]


def parsed(text: str) -> ast.Module | str:
    """Python's own parser's tree of `text`, or its error."""
    try:
        return parse_python(text)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return str(exc)


def statements_of(text: str) -> ast.Module | str:
    """`parsed(text)` as a round's checks read it: the statements, with their rows,
    decorators and blocks. A big text's whole tree takes about 90 bytes per character
    (450 MB for 5 MB, more than its lint in parts holds); it is parsed a piece at a time
    instead, and each statement keeps no other expression. A piece that does not parse
    alone (a cut inside a string) gets the whole text's verdict."""
    if len(text) < PARTS_ABOVE_CHARS:
        return parsed(text)
    body: list[ast.stmt] = []
    try:
        with collector_paused():
            for piece in top_level_pieces(text):
                for stmt in piece:
                    _drop_expressions(stmt)
                body += piece
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return parsed(text)
    return ast.Module(body=body, type_ignores=[])


def _drop_expressions(stmt: ast.stmt) -> None:
    for name in stmt._fields:
        if name not in _KEPT_FIELDS:
            setattr(stmt, name, None)
    for block in _child_blocks(stmt):
        for inner in block:
            _drop_expressions(inner)


# What `_enclosing_lines` reads of a statement besides its position.
_KEPT_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases", "decorator_list"})


def fix_source(
    path: str,
    raw: bytes,
    codes: frozenset[str],
    allowed: frozenset[Applicability],
    fixable: frozenset[str] | None = None,
    first: list[Diagnostic] | None = None,
    target: str = DEFAULT_TARGET,
    line_length: int | None = None,
    lint: Callable[[bytes, ast.Module | None], FileResult] | None = None,
    workers: int = 1,
) -> FixOutcome:
    """Fix, re-lint and repeat until nothing changes. On any failure the original bytes
    are returned untouched with an error naming the rules whose fixes were involved.
    With `line_length`, the lines a round makes longer than that are split inside their
    brackets (`wrap_lengthened_lines`). `workers`: as for `lint_source`, whose lint the
    rounds use unless the caller passes its own `lint`.

    `first` are the findings of `raw` when the caller has linted it already; `lint`
    lints a round's fixed bytes again, given `ast`'s tree of them when the round's check
    parsed them whole (by default a whole lint, `lint_source`; an editor passes one
    that starts from its last lint, `incremental`). Each round
    applies every non-overlapping fix at once, parses the result once with `ast` (and
    the touched statements with libcst), then lints it once, from that tree: a file
    under 1 MiB is parsed at most `MAX_ROUNDS + 1` times, and twice when its fixes do
    not overlap (a bigger one's check keeps no expressions: its lint parses again)."""
    outcome = FixOutcome(path, raw, raw)
    if lint is None:

        def lint(data: bytes, tree: ast.Module | None) -> FileResult:
            return lint_source(path, data, codes, target=target, tree=tree, workers=workers)

    try:
        source = SourceFile.from_bytes(path, raw)
    except SourceDecodeError as exc:
        outcome.error = str(exc)
        return outcome
    applied: list[Diagnostic] = []
    data = raw
    diagnostics = first
    tree: ast.Module | str | None = None  # the last round's check's tree of `data`
    for _ in range(MAX_ROUNDS):
        # The last lint's index leaves reference cycles (the lint pauses the cycle
        # collector); freeing them before the next parse keeps a big file's peak at
        # one lint's. A collection costs ~20 ms, so only where the memory matters.
        if len(data) > _COLLECT_ABOVE_BYTES:
            gc.collect()
        if diagnostics is None:
            result = lint(data, tree)
            tree = None  # the lint may have annotated it; the next round parses anew
            if result.error:
                outcome.remaining = result.diagnostics
                break
            diagnostics = result.diagnostics
        outcome.remaining = diagnostics
        candidates = [
            d
            for d in diagnostics
            if d.fix is not None
            and d.fix.applicability in allowed
            and (fixable is None or d.code in fixable)
        ]
        diagnostics = None
        if not candidates:
            break
        text, used, edits = apply_edits(source, [d.fix for d in candidates])
        if text == source.text:
            break
        tree = statements_of(text)
        if isinstance(tree, str) and len(used) > 1:
            # Fixes that are fine one by one can clash together (two removals that
            # empty one block): take the first alone; re-linting finds the rest anew.
            first_used = used[0]
            text, _, edits = apply_edits(source, [candidates[first_used].fix])
            used = [first_used]
            tree = statements_of(text)
        if isinstance(tree, str):
            rules = ", ".join(sorted({candidates[i].code for i in used}))
            outcome.error = f"internal error: a fix by {rules} produced invalid code ({tree}); file left unchanged"
            outcome.remaining = lint_source(path, raw, codes, target=target).diagnostics
            return outcome
        problem = touched_statements_objection(source.text, text, tree, edits)
        wrapped = text
        if problem is None and line_length is not None:
            wrapped = wrap_lengthened_lines(source.text, text, tree, edits, line_length)
        if wrapped is not text or len(text) >= PARTS_ABOVE_CHARS:
            # Another text, or statements without their expressions: the next lint
            # parses its own (and never holds two trees of a big file).
            tree = None
        if problem is not None:
            rules = ", ".join(sorted({candidates[i].code for i in used}))
            outcome.error = f"internal error: fixes by {rules} produced code libcst rejects ({problem}); file left unchanged"
            outcome.remaining = lint_source(path, raw, codes, target=target).diagnostics
            return outcome
        if wrapped is not text and not isinstance(statements_of(wrapped), str):
            text = wrapped  # each split statement reads the same; the whole file parses
        applied += [candidates[i] for i in used]
        data = encode_like(source, text)
        source = SourceFile.from_bytes(path, data)
    else:  # out of rounds: what remains is what the last fixed text has
        outcome.remaining = lint(data, tree).diagnostics
    outcome.fixed = data
    outcome.applied = applied
    return outcome


class ChangedOnDisk(Exception):
    """The file changed between reading and writing: another tool or editor got there first."""


def write_atomic(path: str, data: bytes, expected: bytes) -> None:
    """Replace `path` with `data` in one rename, keeping its permission bits. Refuses if
    the file on disk is no longer `expected`, or is read-only. A failure leaves the original intact.
    A symbolic link stays a link: its target is what gets replaced."""
    path = os.path.realpath(path)
    with open(path, "rb") as fh:
        if fh.read() != expected:
            raise ChangedOnDisk(path)
    mode = os.stat(path).st_mode
    if not mode & 0o222:
        # Read-only for everyone: the user marked it so (root could write it anyway).
        raise PermissionError(errno.EACCES, "the file is read-only", path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ascend-lint-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
