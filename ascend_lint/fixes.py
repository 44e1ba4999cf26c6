"""Applying fixes: text edits, overlap resolution, re-parse check, repeat until stable,
and atomic writes that keep the file's encoding, BOM, line endings and mode."""

from __future__ import annotations

import ast
import codecs
import contextlib
import errno
import os
import tempfile
from dataclasses import dataclass, field

import libcst

from ascend_lint.diagnostics import Applicability, Diagnostic, Fix
from ascend_lint.engine import lint_source
from ascend_lint.source import SourceDecodeError, SourceFile, as_python_reads_it

MAX_ROUNDS = 10  # fixes converge in one or two rounds; this bounds a pathological case


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


def apply_edits(source: SourceFile, fixes: list[Fix]) -> tuple[str, list[int]]:
    """Apply non-overlapping fixes, leftmost first; a fix that overlaps one already
    taken waits for the next round (after re-linting, its edits may be different)."""
    spans = []
    for i, fix in enumerate(fixes):
        edits = sorted(
            (
                source.offset(e.start.row, e.start.column),
                source.offset(e.end.row, e.end.column),
                e.content,
            )
            for e in fix.edits
        )
        spans.append((edits[0][0], edits[-1][1], i, edits))
    spans.sort()
    chosen = []
    last_end = -1
    for start, end, i, edits in spans:
        if start < last_end:
            continue
        chosen.append((i, edits))
        last_end = end
    text = source.text
    for _i, edits in reversed(chosen):
        for s, e, content in reversed(edits):
            text = text[:s] + content + text[e:]
    return text, [i for i, _ in chosen]


def encode_like(source: SourceFile, text: str) -> bytes:
    data = text.encode(source.encoding)
    return codecs.BOM_UTF8 + data if source.has_bom else data


# libcst's native parser recurses on the C stack: past this nesting it can crash the
# process instead of raising, so such files are checked with `ast` alone.
_LIBCST_MAX_DEPTH = 200


def _shallow_enough(text: str) -> bool:
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
    try:
        libcst.parse_module(text)
    except libcst.ParserSyntaxError as exc:
        return f"{exc.message} (line {exc.raw_line})"
    except (ValueError, RecursionError) as exc:
        return str(exc)
    return None


def libcst_objection(original: str, fixed: str) -> str | None:
    """The second opinion on a fixed file: libcst's parser, stricter about layout than
    `ast`. Its objection counts only if it accepted the original (a file it cannot
    read at all is not the fix's fault) and the file is shallow enough for it."""
    if not _shallow_enough(fixed):
        return None
    problem = _libcst_error(fixed)
    if problem is None or _libcst_error(original) is not None:
        return None
    return problem


def parses(text: str) -> str | None:
    """None if Python's own parser accepts `text`, else the error."""
    try:
        ast.parse(as_python_reads_it(text))
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return str(exc)
    return None


def fix_source(
    path: str,
    raw: bytes,
    codes: frozenset[str],
    allowed: frozenset[Applicability],
    fixable: frozenset[str] | None = None,
) -> FixOutcome:
    """Fix, re-lint and repeat until nothing changes. On any failure the original bytes
    are returned untouched with an error naming the rules whose fixes were involved."""
    outcome = FixOutcome(path, raw, raw)
    try:
        source = SourceFile.from_bytes(path, raw)
    except SourceDecodeError as exc:
        outcome.error = str(exc)
        return outcome
    applied: list[Diagnostic] = []
    data = raw
    for _ in range(MAX_ROUNDS):
        result = lint_source(path, data, codes)
        outcome.remaining = result.diagnostics
        candidates = [
            d
            for d in result.diagnostics
            if d.fix is not None
            and d.fix.applicability in allowed
            and (fixable is None or d.code in fixable)
        ]
        if not candidates or result.error:
            break
        text, used = apply_edits(source, [d.fix for d in candidates])
        if text == source.text:
            break
        problem = parses(text)
        if problem is not None and len(used) > 1:
            # Fixes that are fine one by one can clash together (two removals that
            # empty one block): take the first alone; re-linting finds the rest anew.
            first = used[0]
            text, _ = apply_edits(source, [candidates[first].fix])
            used = [first]
            problem = parses(text)
        if problem is not None:
            rules = ", ".join(sorted({candidates[i].code for i in used}))
            outcome.error = f"internal error: a fix by {rules} produced invalid code ({problem}); file left unchanged"
            outcome.remaining = lint_source(path, raw, codes).diagnostics
            return outcome
        applied += [candidates[i] for i in used]
        data = encode_like(source, text)
        source = SourceFile.from_bytes(path, data)
    else:  # out of rounds: what remains is what the last fixed text has
        outcome.remaining = lint_source(path, data, codes).diagnostics
    if applied:
        # Rounds are checked with `ast`; libcst reads the end result once.
        problem = libcst_objection(SourceFile.from_bytes(path, raw).text, source.text)
        if problem is not None:
            rules = ", ".join(sorted({d.code for d in applied}))
            outcome.error = f"internal error: fixes by {rules} produced code libcst rejects ({problem}); file left unchanged"
            outcome.remaining = lint_source(path, raw, codes).diagnostics
            return outcome
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
