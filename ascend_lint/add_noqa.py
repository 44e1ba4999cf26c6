"""`--add-noqa`: suppress every current finding in place, to adopt the linter on an old
tree and hold new code to it (Ruff's `--add-noqa`).

Each finding gets its code in a `# noqa: CODE` comment on its first line (merged into a
`# noqa: ...` already there). A line whose end lies inside a string, or that continues
with a backslash, cannot take a comment there: the finding's last line is used instead,
or the line its backslashes continue to; if none can, the finding is left and reported. A file whose
edited text no longer parses is not written. Writes keep the file's mode, refuse
read-only files and files that changed meanwhile, as `--fix` does.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.fixes import ChangedOnDisk, write_atomic
from ascend_lint.results import FileResult
from ascend_lint.rules import SYNTAX_ERROR_CODE, UNUSED_NOQA_CODE
from ascend_lint.source import SourceDecodeError, SourceFile, as_python_reads_it
from ascend_lint.suppression import continued_to

_EXISTING = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.I)
_LINE_END = re.compile(r"(\r\n|\r|\n)?\Z")
# Physical lines with their terminators, split only where the tokenizer splits them.
_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass
class AddNoqaRun:
    added: int = 0  # codes written into comments
    files: int = 0  # files changed
    errors: list[str] = field(default_factory=list)


def add_noqa(results: list[FileResult]) -> AddNoqaRun:
    run = AddNoqaRun()
    for result in results:
        # A file that does not parse takes no comment, and an unused noqa is not
        # silenced with another one.
        wanted = [
            d for d in result.diagnostics if d.code not in (SYNTAX_ERROR_CODE, UNUSED_NOQA_CODE)
        ]
        if not wanted:
            continue
        try:
            with open(result.path, "rb") as fh:
                raw = fh.read()
            source = SourceFile.from_bytes(result.path, raw)
        except (OSError, SourceDecodeError) as exc:
            run.errors.append(f"{result.path}: cannot read: {exc}")
            continue
        blocked = rows_that_cannot_end_in_a_comment(source)
        by_row: dict[int, set[str]] = defaultdict(set)
        for d in wanted:
            row = comment_row(source, d, blocked)
            if row is None:
                run.errors.append(
                    f"{result.path}:{d.start.row}: no line of this {d.code} finding can take "
                    "a `# noqa` comment; left as it is"
                )
                continue
            by_row[row].add(d.code)
        if not by_row:
            continue
        lines = _PHYSICAL_LINE.findall(source.text)
        for row, codes in by_row.items():
            lines[row - 1] = with_codes(lines[row - 1], codes)
        text = "".join(lines)
        try:
            ast.parse(as_python_reads_it(text))
        except (SyntaxError, ValueError):
            run.errors.append(f"{result.path}: adding `# noqa` would break the file; not written")
            continue
        data = text.encode(source.encoding)
        if source.has_bom:
            data = b"\xef\xbb\xbf" + data
        try:
            write_atomic(result.path, data, raw)
        except ChangedOnDisk:
            run.errors.append(f"{result.path}: changed on disk meanwhile; not overwritten")
            continue
        except OSError as exc:
            run.errors.append(f"{result.path}: cannot write: {exc.strerror or exc}")
            continue
        run.files += 1
        run.added += sum(len(c) for c in by_row.values())
    return run


def comment_row(source: SourceFile, d: Diagnostic, blocked: set[int]) -> int | None:
    """The line that takes the finding's `# noqa`: its first, its last, or the line its
    last line's backslashes continue to, whichever first can end in a comment."""
    candidates = (d.start.row, d.end.row, continued_to(source, d.end.row))
    return next((r for r in candidates if r not in blocked), None)


def with_codes(line: str, codes: set[str]) -> str:
    """`line` with `codes` in its `# noqa: ...` comment (merged, or a new comment)."""
    ending = _LINE_END.search(line).group(0)
    body = line[: len(line) - len(ending)]
    existing = _EXISTING.search(body)
    if existing:
        have = [c.upper() for c in re.split(r"[\s,]+", existing.group("codes")) if c]
        merged = ", ".join(dict.fromkeys([*have, *sorted(codes)]))
        return body[: existing.start("codes")] + merged + body[existing.end("codes") :] + ending
    return f"{body.rstrip()}  # noqa: {', '.join(sorted(codes))}{ending}"


def rows_that_cannot_end_in_a_comment(source: SourceFile) -> set[int]:
    """Rows whose end is inside a string, or that continue with a backslash."""
    blocked = {i for i, line in enumerate(source.lines, 1) if line.rstrip().endswith("\\")}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source.text).readline):
            if (tok.type == tokenize.STRING and tok.end[0] > tok.start[0]) or getattr(
                tokenize, "FSTRING_MIDDLE", None
            ) == tok.type:
                blocked.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass  # the file parsed; what tokenize cannot follow is left to the parse check
    return blocked
