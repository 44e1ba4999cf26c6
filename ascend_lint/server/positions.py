"""Columns as the engine counts them (code points) and as the client counts them (the
position encoding agreed at `initialize`: UTF-16 by default, UTF-8 or UTF-32)."""

from __future__ import annotations

from ascend_lint.diagnostics import Position

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def _width(char: str, encoding: str) -> int:
    if encoding == UTF8:
        return len(char.encode("utf-8", "surrogatepass"))
    if encoding == UTF16:
        return 2 if ord(char) > 0xFFFF else 1
    return 1


def client_column(line: str, column: int, encoding: str) -> int:
    head = line[:column]
    if encoding == UTF32 or head.isascii():
        return column
    return sum(_width(c, encoding) for c in head)


def server_column(line: str, units: int, encoding: str) -> int:
    """The code-point column of `units` client units into `line` (clamped to its end;
    a position inside a character's units lands after that character, as the LSP says)."""
    if encoding == UTF32 or line.isascii():
        return min(units, len(line))
    count = 0
    for i, char in enumerate(line):
        if count >= units:
            return i
        count += _width(char, encoding)
    return len(line)


def to_client(lines: list[str], position: Position, encoding: str) -> tuple[int, int]:
    """Engine (1-based row, code-point column) -> LSP (0-based line, client units)."""
    row = position.row - 1
    line = lines[row] if 0 <= row < len(lines) else ""
    return row, client_column(line, position.column, encoding)


def from_client(lines: list[str], line: int, character: int, encoding: str) -> Position:
    """LSP (0-based line, client units) -> engine (1-based row, code-point column)."""
    if line >= len(lines):
        return Position(len(lines), len(lines[-1]) if lines else 0)
    return Position(line + 1, server_column(lines[line], character, encoding))
