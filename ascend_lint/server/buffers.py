"""Linting an editor's buffer: the text as it is now, with the settings of the file's
project, linted again from the buffer's previous lint where an edit allows it
(`ascend_lint.incremental`), and the fixes built from that one result."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from ascend_lint.add_noqa import comment_row
from ascend_lint.diagnostics import Diagnostic, Fix
from ascend_lint.incremental import ModuleMemo, lint_again, lint_whole, relint
from ascend_lint.server.config import Resolved
from ascend_lint.session import fix_file
from ascend_lint.source import SourceDecodeError, SourceFile


@dataclass
class LintedBuffer:
    path: str
    version: int | None
    text: str
    source: SourceFile  # the buffer's text, for coordinates and edits
    resolved: Resolved
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None  # an internal error of a rule (the other rules still ran)
    memo: ModuleMemo | None = field(default=None, repr=False)  # where the next lint starts

    @property
    def result_id(self) -> str:
        """Changes whenever the text or the settings do (for pull diagnostics)."""
        return f"{self.version}:{hash((self.text, self.resolved.key)) & 0xFFFFFFFF:08x}"


def buffer_bytes(text: str) -> bytes:
    """The bytes the file would have on disk: in the encoding its coding cookie names
    (so the engine decodes them back to this very text), else UTF-8."""
    raw = text.encode("utf-8", "surrogatepass")
    if "coding" not in text[:400]:
        return raw
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        if encoding not in ("utf-8", "utf-8-sig"):
            return text.encode(encoding)
    except (SyntaxError, LookupError, UnicodeError):
        pass  # the engine reports the cookie or the bytes as ASC000
    return raw


def unlinted(path: str, text: str, version: int | None, resolved: Resolved) -> LintedBuffer:
    """A buffer that is not Python: no findings."""
    raw = text.encode("utf-8", "surrogatepass")
    return LintedBuffer(path, version, text, SourceFile(path, raw, text, "utf-8", False), resolved)


def lint_text(
    path: str,
    text: str,
    version: int | None,
    resolved: Resolved,
    previous: LintedBuffer | None = None,
    apart: bool = False,
) -> LintedBuffer:
    """The buffer's lint, from `previous` (the lint of an earlier version of the same
    buffer) where the edit since allows: the same findings as a lint of the whole text.
    `apart`: a whole lint runs in a process of its own (a big buffer)."""
    raw = buffer_bytes(text)
    buffer = unlinted(path, text, version, resolved)
    settings = resolved.settings
    if settings.excludes(Path(path)):  # as `--force-exclude` does
        return buffer
    options = settings.options_for(path)
    memo = None
    if previous is not None and previous.resolved.key == resolved.key:
        memo = previous.memo
    outcome = relint(memo, path, raw, options) if memo is not None else None
    if outcome is None and apart:
        from ascend_lint.server.worker_process import lint_whole_in_process

        outcome = lint_whole_in_process(path, raw, options, buffer.source.lines)
    if outcome is None:
        outcome = lint_whole(path, raw, options)
    result, buffer.memo = outcome
    if buffer.memo is None:
        # A text no edit can start from (half-typed code that does not parse): the next
        # edit starts from the last one that could, a larger difference but no whole lint.
        buffer.memo = memo
    buffer.diagnostics = result.diagnostics
    buffer.error = result.error
    return buffer


def changes_text(buffer: LintedBuffer, fix: Fix) -> bool:
    """Whether applying `fix` changes the buffer. Fixes are not re-parsed one by one
    here (that costs a whole parse of the file per action; the rules' fixes are tested
    to parse, and fix-all checks its result as `--fix` does)."""
    source = buffer.source
    for edit in fix.edits:
        start = source.offset(edit.start.row, edit.start.column)
        end = source.offset(edit.end.row, edit.end.column)
        if buffer.text[start:end] != edit.content:
            return True
    return False


# Where a top-level definition starts (after a blank line): tokenizing from there reads
# the statements around a row as the whole file would.
_TOP_LEVEL_START = re.compile(r"\n\r?\n(?=(?:@|def |class |async def ))")


def noqa_row(buffer: LintedBuffer, d: Diagnostic) -> int | None:
    """The row that takes `d`'s `# noqa` comment, as `--add-noqa` chooses it
    (`add_noqa.comment_row`), tokenizing only the top-level block around the finding
    instead of the whole file (a big file takes half a second)."""
    return comment_row(buffer.source, d, _rows_that_cannot_end_in_a_comment(buffer, d))


def _rows_that_cannot_end_in_a_comment(buffer: LintedBuffer, d: Diagnostic) -> set[int]:
    source, text = buffer.source, buffer.text
    first_offset = source.offset(d.start.row, 0)
    last_row = d.end.row + 1
    block = 0
    for match in _TOP_LEVEL_START.finditer(text, 0, first_offset):
        block = match.end()
    base = source.position_of(block).row - 1  # rows before the block
    lines = source.lines
    blocked = {
        row
        for row in range(d.start.row, min(last_row, len(lines)) + 1)
        if lines[row - 1].rstrip().endswith("\\")
    }
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text[block:]).readline):
            start, end = tok.start[0] + base, tok.end[0] + base
            if start > last_row:
                break
            if (tok.type == tokenize.STRING and end > start) or tok.type == _FSTRING_MIDDLE:
                blocked.update(range(start, end))
    except (tokenize.TokenError, SyntaxError):
        pass  # unfinished code: the rows tokenize could not follow stay as they are
    return blocked


_FSTRING_MIDDLE = getattr(tokenize, "FSTRING_MIDDLE", None)


def fix_all_apart(buffer: LintedBuffer, unsafe: bool) -> tuple[str | None, int, str | None]:
    """Run on a thread of the server: `fix_all_text(buffer, unsafe)` in a new process.

    A fork of the server has the buffer's findings already and starts from them (an
    818 KB buffer's lint takes over a second). A new interpreter gets only the text and
    its settings, and lints the text again itself: pickling a big file's findings would
    hold the server's interpreter lock for tens of milliseconds."""
    from ascend_lint.forks import cores
    from ascend_lint.server.worker_process import FORK, run_apart

    job: tuple
    if FORK:
        # A fix's last check parses the statements it touched with libcst (~0.1 s to
        # import): imported here once, every later fork starts with it.
        import libcst  # noqa: F401

        # The fork may fork again: the definitions its fixes changed are linted again
        # by as many processes as there are cores.
        job = (fix_all_text, buffer, unsafe, False, cores())
    else:
        job = (_fix_all_job, buffer.path, buffer.text, buffer.version, buffer.resolved, unsafe)
    done, result = run_apart(job, len(buffer.text))
    if not done:
        if result == "timeout":
            return None, 0, "the fix process ran out of time"
        if isinstance(result, str):  # `forks`: no process could be made
            return None, 0, f"internal error: the fix process did not start ({result})"
        return None, 0, f"internal error: the fix process ended with code {result}"
    return result  # type: ignore[return-value]


def _fix_all_job(path: str, text: str, version: int | None, resolved: Resolved, unsafe: bool):
    return fix_all_text(unlinted(path, text, version, resolved), unsafe, relint=True)


def fix_all_text(
    buffer: LintedBuffer, unsafe: bool, relint: bool = False, workers: int = 1
) -> tuple[str | None, int, str | None]:
    """The buffer with every applicable fix applied, round after round, exactly as
    `--fix` would write it: (new text or None when nothing changes, fixes applied, error).
    The first round starts from the buffer's own lint, unless `relint` (its findings
    are not at hand) or a rule failed in it. `workers`: how many processes may lint a
    round's text again (more than 1 only in a process that may fork: `forks`)."""
    settings = buffer.resolved.settings
    options = settings.options_for(buffer.path, fix=True, unsafe_fixes=unsafe)
    raw = buffer_bytes(buffer.text)
    first = None if relint or buffer.error else buffer.diagnostics
    outcome = fix_file(
        buffer.path,
        raw,
        options,
        first,
        lint=lint_again(buffer.path, options, buffer.memo, workers),
    )
    if outcome.error:
        return None, 0, outcome.error
    if not outcome.changed:
        return None, 0, None
    try:
        fixed = SourceFile.from_bytes(buffer.path, outcome.fixed).text
    except SourceDecodeError as exc:  # cannot happen for bytes the engine produced
        return None, 0, str(exc)
    return fixed, len(outcome.applied), None
