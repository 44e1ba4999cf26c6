"""Linting an editor's buffer: the engine's `lint_buffer` on the text as it is now, with
the settings of the file's project, and the fixes built from that one result."""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field

from ascend_lint.diagnostics import Applicability, Diagnostic, Fix
from ascend_lint.engine import lint_buffer
from ascend_lint.fixes import apply_edits, fix_source, parsed
from ascend_lint.server.config import Resolved
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


def lint_text(path: str, text: str, version: int | None, resolved: Resolved) -> LintedBuffer:
    raw = buffer_bytes(text)
    buffer = unlinted(path, text, version, resolved)
    result = lint_buffer(path, raw, resolved.settings, force_exclude=True)
    if result is None:  # excluded by the project's settings, as `--force-exclude` does
        return buffer
    fixable = resolved.settings.fixable_codes()
    for d in result.diagnostics:
        if d.fix is not None and d.code not in fixable:
            d.fix = None  # an unfixable code offers no fix, as on the command line
    buffer.diagnostics = result.diagnostics
    buffer.error = result.error
    return buffer


def single_fix_text(buffer: LintedBuffer, fix: Fix) -> str | None:
    """The buffer with one fix applied, or None if that would not parse."""
    text, used, _edits = apply_edits(buffer.source, [fix])
    if not used or text == buffer.text or isinstance(parsed(text), str):
        return None
    return text


def fix_all_text(buffer: LintedBuffer, unsafe: bool) -> tuple[str | None, int, str | None]:
    """The buffer with every applicable fix applied, round after round, exactly as
    `--fix` would write it: (new text or None when nothing changes, fixes applied, error)."""
    settings = buffer.resolved.settings
    allowed = frozenset({Applicability.SAFE, *([Applicability.UNSAFE] if unsafe else [])})
    codes = settings.codes_for(buffer.path, settings.enabled_codes())
    raw = buffer_bytes(buffer.text)
    outcome = fix_source(
        buffer.path, raw, codes, allowed, settings.fixable_codes(), target=settings.target
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
