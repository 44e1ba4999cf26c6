"""`# noqa` comments: per line (`# noqa: ASC001, ASC004` or bare `# noqa`) and per file
(`# ascend-lint: noqa`)."""

from __future__ import annotations

import re

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.source import SourceFile

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_FILE_NOQA = re.compile(r"#\s*ascend-lint\s*:\s*noqa\b", re.IGNORECASE)


def line_suppresses(line: str, code: str) -> bool:
    if "#" not in line:
        return False
    for match in _NOQA.finditer(line):
        codes = match.group("codes")
        if codes is None:
            return True  # a bare noqa silences every code
        if code in {c.upper() for c in re.split(r"[\s,]+", codes) if c}:
            return True
    return False


def continued_to(source: SourceFile, row: int) -> int:
    """The last physical line of a line continued with backslashes: a comment can only
    go there, so a `# noqa` there covers the lines it continues."""
    last = len(source.lines)
    while row < last and source.line(row).rstrip().endswith("\\"):
        row += 1
    return row


def file_suppressed(source: SourceFile) -> bool:
    return "ascend-lint" in source.text and any(
        _FILE_NOQA.search(line) for line in source.lines if "#" in line
    )


def apply_noqa(source: SourceFile, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Drop findings silenced on their first or last line (or the line a backslash
    continues their last line to); record where a noqa would go."""
    if file_suppressed(source):
        return []
    kept = []
    for d in diagnostics:
        rows = {d.start.row, d.end.row, continued_to(source, d.end.row)}
        if any(line_suppresses(source.line(r), d.code) for r in rows):
            continue
        d.noqa_row = d.start.row
        kept.append(d)
    return kept
