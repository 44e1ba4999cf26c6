"""What several reporters share: source lines (for code frames and byte columns) and
the tool's name and home page."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from ascend_lint.diagnostics import Position

TOOL_NAME = "ascend-lint"
HOMEPAGE = "https://github.com/ascend-lint/ascend-lint"


# Sources that were not read from disk (standard input, after --fix the fixed text):
# the findings describe these bytes, whatever the file of that name holds.
_IN_MEMORY: dict[str, bytes] = {}


@contextlib.contextmanager
def sources_in_memory(sources: Mapping[str, bytes]) -> Iterator[None]:
    """Code frames and byte columns of findings in these paths come from these bytes
    while the report is written."""
    saved = dict(_IN_MEMORY)
    _IN_MEMORY.update(sources)
    try:
        yield
    finally:
        _IN_MEMORY.clear()
        _IN_MEMORY.update(saved)


def read_lines(path: str) -> list[str]:
    """The file's lines as the linter saw them, or [] when it cannot be read any more."""
    from ascend_lint.source import SourceDecodeError, SourceFile

    if path in _IN_MEMORY:
        try:
            return SourceFile.from_bytes(path, _IN_MEMORY[path]).lines
        except SourceDecodeError:
            return []
    try:
        with open(path, "rb") as fh:
            return SourceFile.from_bytes(path, fh.read()).lines
    except (OSError, SourceDecodeError):
        return []


class LineCache:
    """Reads each reported file once per report."""

    def __init__(self) -> None:
        self._files: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._files:
            self._files[path] = read_lines(path)
        return self._files[path]

    def byte_column(self, path: str, pos: Position) -> int:
        """0-based code-point column -> 0-based UTF-8 byte column on the same line."""
        lines = self.lines(path)
        line = lines[pos.row - 1] if 0 < pos.row <= len(lines) else ""
        head = line[: pos.column]
        # Past the end of the line (or an unreadable file) each column counts one byte.
        return len(head.encode("utf-8")) + pos.column - len(head)
