"""`# noqa` comments: per line (`# noqa: ASC001, ASC004` or bare `# noqa`) and per file
(`# ascend-lint: noqa: ASC004` for the codes it lists, bare `# ascend-lint: noqa` for
every code; Ruff's `# ruff: noqa: F401` and `# ruff: noqa`)."""

from __future__ import annotations

import io
import re
import tokenize

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.source import SourceFile

_CODES = r"(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)"
_NOQA = re.compile(r"#\s*noqa(?::\s*" + _CODES + ")?", re.IGNORECASE)
# A colon after `noqa` with no code behind it is a malformed list, not a bare exemption:
# it silences nothing rather than everything.
_FILE_NOQA = re.compile(
    r"#\s*ascend-lint\s*:\s*noqa(?:\s*:\s*" + _CODES + r"|\b(?!\s*:))", re.IGNORECASE
)


def _split_codes(listed: str) -> list[str]:
    return [c for c in re.split(r"[\s,]+", listed) if c]


def line_suppresses(line: str, code: str) -> bool:
    if "#" not in line:
        return False
    for match in _NOQA.finditer(line):
        codes = match.group("codes")
        if codes is None:
            return True  # a bare noqa silences every code
        if code in {c.upper() for c in _split_codes(codes)}:
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


# What a file-level comment exempts: every code, or the codes it lists.
EVERY_CODE = None


def suppressing_row(source: SourceFile, start_row: int, end_row: int, code: str) -> int | None:
    """The row of the line comment that silences `code` for a finding spanning these
    rows: its first or last line, or the line a backslash continues the last one to."""
    rows = (start_row, end_row, continued_to(source, end_row))
    return next((r for r in rows if line_suppresses(source.line(r), code)), None)


def silences(source: SourceFile, diagnostic: Diagnostic, exemption: frozenset[str] | None) -> bool:
    """Whether the noqa comments drop `diagnostic` (`exemption`: the file's, from
    `file_exemption`), as `apply_noqa` does: what a fix that reaches beyond its own
    finding must leave alone."""
    return file_exempts(exemption, diagnostic.code) or (
        suppressing_row(source, diagnostic.start.row, diagnostic.end.row, diagnostic.code)
        is not None
    )


def file_exemption(source: SourceFile) -> frozenset[str] | None:
    """The codes the file's `# ascend-lint: noqa...` comments silence in the whole file:
    EVERY_CODE (None) for a bare one, else the union of the codes listed (empty: none)."""
    codes: set[str] = set()
    if "ascend-lint" not in source.text:
        return frozenset()
    for line in source.lines:
        if "#" not in line:
            continue
        for match in _FILE_NOQA.finditer(line):
            listed = match.group("codes")
            if listed is None:
                return EVERY_CODE
            codes.update(c.upper() for c in _split_codes(listed))
    return frozenset(codes)


def file_exempts(exemption: frozenset[str] | None, code: str) -> bool:
    return exemption is EVERY_CODE or code in exemption


def apply_noqa(
    source: SourceFile, diagnostics: list[Diagnostic], used: set[tuple[int, str]] | None = None
) -> list[Diagnostic]:
    """Drop findings silenced on their first or last line (or the line a backslash
    continues their last line to); record where a noqa would go. `used` collects the
    (row, code) of every comment code that silenced something. A file-level comment
    drops the codes it lists (all of them when bare) anywhere in the file."""
    exemption = file_exemption(source)
    if exemption is EVERY_CODE:
        return []
    kept = []
    for d in diagnostics:
        hit = suppressing_row(source, d.start.row, d.end.row, d.code)
        if hit is not None:
            if used is not None:
                used.add((hit, d.code))
            continue
        if d.code in exemption:
            continue
        d.noqa_row = d.start.row
        kept.append(d)
    return kept


_OWN_CODE = re.compile(r"^ASC[0-9]{3}$")


def unused_noqa(
    source: SourceFile,
    used: set[tuple[int, str]],
    enabled: frozenset[str],
    code: str,
    name: str,
    known: frozenset[str] = frozenset(),
) -> list[Diagnostic]:
    """A finding for each `# noqa: ...` whose codes of this tool silenced nothing on
    their line, with a safe fix that drops them (the comment too when no
    other tool's code is left in it). Each code is marked, as Ruff's RUF100 does,
    `(unknown)` when no rule has it (`known`), `(not enabled)` when its rule is off."""
    from ascend_lint.diagnostics import Applicability, Edit, Fix, Position

    if "noqa" not in source.text.lower() or file_exempts(file_exemption(source), code):
        return []
    found = []
    comments: dict[int, int] | bool | None = False  # False: not read yet
    for row, line in enumerate(source.lines, 1):
        if "#" not in line:
            continue
        for match in _NOQA.finditer(line):
            listed = match.group("codes")
            if listed is None:
                continue  # bare noqa: other linters read it too
            if comments is False:
                comments = _comment_columns(source.text)
            if comments is not None and match.start() < comments.get(row, len(line) + 1):
                continue  # text in a string (a docstring's example), not a comment
            codes = _split_codes(listed)
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
            shown = ", ".join(f"`{c}`" + _why_unused(c.upper(), enabled, known) for c in unused)
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


def _comment_columns(text: str) -> dict[int, int] | None:
    """Where each line's comment starts, from Python's tokenizer; None when the text
    does not tokenize (then every `# noqa` is taken as a comment)."""
    columns: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                columns[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):
        return None
    return columns


def _why_unused(code: str, enabled: frozenset[str], known: frozenset[str]) -> str:
    if code not in known:
        return " (unknown)"
    return "" if code in enabled else " (not enabled)"
