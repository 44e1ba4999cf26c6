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


def noqa_code_spans(line: str) -> list[tuple[str, int, int]]:
    """Each code named in the line's `# noqa: ...` comments, upper-cased, with its start
    and end columns (for an editor's hover on a code)."""
    if "#" not in line:
        return []
    spans = []
    for match in _NOQA.finditer(line):
        if match.group("codes") is None:
            continue
        for code in re.finditer(r"[A-Z]+[0-9]+", match.group("codes"), re.IGNORECASE):
            start = match.start("codes") + code.start()
            spans.append((code.group().upper(), start, start + len(code.group())))
    return spans


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


def apply_noqa(
    source: SourceFile, diagnostics: list[Diagnostic], used: set[tuple[int, str]] | None = None
) -> list[Diagnostic]:
    """Drop findings silenced on their first or last line (or the line a backslash
    continues their last line to); record where a noqa would go. `used` collects the
    (row, code) of every comment code that silenced something."""
    if file_suppressed(source):
        return []
    kept = []
    for d in diagnostics:
        rows = (d.start.row, d.end.row, continued_to(source, d.end.row))
        hit = next((r for r in rows if line_suppresses(source.line(r), d.code)), None)
        if hit is not None:
            if used is not None:
                used.add((hit, d.code))
            continue
        d.noqa_row = d.start.row
        kept.append(d)
    return kept


_OWN_CODE = re.compile(r"^ASC[0-9]{3}$")


def unused_noqa(
    source: SourceFile, used: set[tuple[int, str]], enabled: frozenset[str], code: str, name: str
) -> list[Diagnostic]:
    """A finding for each `# noqa: ...` whose codes of this tool silenced nothing on
    their line, with a safe fix that drops them (the comment too when no
    other tool's code is left in it)."""
    from ascend_lint.diagnostics import Applicability, Edit, Fix, Position

    if file_suppressed(source) or "noqa" not in source.text.lower():
        return []
    found = []
    for row, line in enumerate(source.lines, 1):
        if "#" not in line:
            continue
        for match in _NOQA.finditer(line):
            listed = match.group("codes")
            if listed is None:
                continue  # bare noqa: other linters read it too
            codes = [c for c in re.split(r"[\s,]+", listed) if c]
            # As Ruff's RUF100: a code of this tool that silenced nothing here is unused,
            # whether its rule is off (`--ignore`) or the code does not exist at all.
            unused = [
                c for c in codes if _OWN_CODE.match(c.upper()) and (row, c.upper()) not in used
            ]
            if not unused:
                continue
            keep = [c for c in codes if c not in unused]
            start, end = match.start(), match.end()
            if keep:
                replacement = line[start : match.start("codes")] + ", ".join(keep)
            else:
                replacement = ""
                while start > 0 and line[start - 1] in " \t":
                    start -= 1  # the comment goes with the space before it
            fix = Fix(
                Applicability.SAFE,
                "Remove unused `noqa` codes" if keep else "Remove the unused `noqa` comment",
                (Edit(Position(row, start), Position(row, end), replacement),),
            )
            shown = ", ".join(
                f"`{c}`" + ("" if c.upper() in enabled else " (not enabled)") for c in unused
            )
            found.append(
                Diagnostic(
                    code,
                    name,
                    f"unused `noqa` code{'s' if len(unused) > 1 else ''} {shown}: nothing on this "
                    "line is reported for it",
                    source.path,
                    Position(row, match.start()),
                    Position(row, match.end()),
                    fix=fix,
                )
            )
    return found
