"""Reading a file as Python source, and turning parser offsets into user coordinates."""

from __future__ import annotations

import ast
import codecs
import contextlib
import gc
import io
import re
import tokenize
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def as_python_reads_it(text: str) -> str:
    """The text with universal newlines, as the interpreter sees a file it runs. Rows
    and columns are unchanged (a line break stays one line break), but a few inputs
    parse differently otherwise: `ast.parse` accepts a trailing `\\` before CRLF at the
    end of a file that `python file.py` rejects."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class SourceDecodeError(Exception):
    """The bytes are not text in the encoding the file declares (or UTF-8)."""


@dataclass
class SourceFile:
    path: str
    raw: bytes
    text: str
    encoding: str
    has_bom: bool
    _lines: list[str] | None = field(default=None, repr=False)
    _newline: str | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, path: str, raw: bytes) -> SourceFile:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as exc:  # unknown codec named in a coding cookie
            raise SourceDecodeError(str(exc)) from None
        has_bom = raw.startswith(codecs.BOM_UTF8)
        try:
            text = raw.decode("utf-8-sig" if has_bom else encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise SourceDecodeError(f"cannot decode as {encoding}: {exc}") from None
        return cls(path, raw, text, "utf-8" if has_bom else encoding, has_bom)

    @classmethod
    def from_text(cls, path: str, text: str) -> SourceFile:
        """A module text made here (a part of a module, a copy with lines left blank):
        UTF-8 bytes, no BOM."""
        return cls(path, text.encode("utf-8"), text, "utf-8", False)

    @property
    def newline(self) -> str:
        """The file's line ending, for the lines a fix adds."""
        if self._newline is None:
            self._newline = "\r\n" if "\r\n" in self.text else "\n"
        return self._newline

    @property
    def lines(self) -> list[str]:
        """Physical lines without their line terminators (index 0 is line 1)."""
        if self._lines is None:
            # Only the terminators the Python tokenizer counts, so rows match `ast`;
            # a text without CR has one kind, which `str.split` finds 7x faster.
            text = self.text
            self._lines = _LINE_BREAK.split(text) if "\r" in text else text.split("\n")
        return self._lines

    def line(self, row: int) -> str:
        lines = self.lines
        return lines[row - 1] if 0 < row <= len(lines) else ""

    def char_column(self, row: int, utf8_col: int) -> int:
        """`ast` columns count UTF-8 bytes; users and editors count code points."""
        line = self.line(row)
        if line.isascii():
            return utf8_col
        return len(line.encode("utf-8")[:utf8_col].decode("utf-8", errors="ignore"))

    def offset(self, row: int, char_col: int) -> int:
        """Absolute code-point offset in `text` of (1-based row, 0-based column)."""
        if self._line_starts is None:
            if "\r" in self.text:
                self._line_starts = [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]
            else:  # "\n" ends each line: the starts are running sums of lengths + 1
                lengths = map((1).__add__, map(len, self.lines[:-1]))
                self._line_starts = list(accumulate(lengths, initial=0))
        return self._line_starts[row - 1] + char_col

    def position_of(self, offset: int):
        """Inverse of `offset`: (row, column) of an absolute code-point offset."""
        from bisect import bisect_right

        from ascend_lint.diagnostics import Position

        self.offset(1, 0)  # builds the line table
        row = bisect_right(self._line_starts, offset)
        return Position(row, offset - self._line_starts[row - 1])

    _line_starts: list[int] | None = field(default=None, repr=False)


def common_ends(old: Sequence, new: Sequence) -> tuple[int, int]:
    """(prefix, suffix): how many leading and trailing items `old` and `new` share (two
    texts, two lists of lines), the suffix not reaching into the prefix: what changed
    is `old[prefix:len(old) - suffix]`, now `new[prefix:len(new) - suffix]`."""
    shorter = min(len(old), len(new))
    prefix = 0
    while prefix < shorter and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shorter - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, suffix


# `ast.parse` holds the C parser's tree and the Python one at once: for a 5 MB module
# about 850 MB, of which the Python tree that stays is under half. Above this size the
# module is parsed in pieces of about this size, cut before top-level definitions.
PIECE_CHARS = 256 * 1024
# A top-level `def`/`class`/decorator after a blank line: where a module can be cut.
# A cut in the wrong place (inside a string or brackets) leaves a piece that does not
# parse, and the whole text is then parsed at once: never a different tree.
_TOP_LEVEL_START = re.compile(r"\n\n(?=(?:@|def |class |async def ))")


def parse_python(text: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse` of `text` as the interpreter reads it, with a peak memory about the
    size of the tree it returns, and without the compiler's warnings about it (an invalid
    escape sequence is the linted code's, not the linter's). Raises what `ast.parse`
    raises."""
    with collector_paused():
        return _parse_python(text, filename)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off inside the block (as it was after). Syntax trees have no
    reference cycles: the collector would only re-scan them, again and again as they
    grow (a 5 MB module parses 3x slower with it on), and the index built on them."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _parse_python(text: str, filename: str) -> ast.Module:
    text = as_python_reads_it(text)
    if len(text) <= PIECE_CHARS:
        return _quiet_parse(text, filename)
    body: list[ast.stmt] = []
    try:
        for piece in _pieces(text, filename):
            body += piece
    except SyntaxError:
        return _quiet_parse(text, filename)  # the error as the whole file has it
    return ast.Module(body=body, type_ignores=[])


def _quiet_parse(text: str, filename: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=filename)


def top_level_pieces(text: str, filename: str = "<unknown>") -> Iterator[list[ast.stmt]]:
    """The module's top-level statements, a piece of about `PIECE_CHARS` at a time, each
    at its row in the whole text: a caller that keeps only what it reads of each piece
    never holds the whole tree. Raises what `ast.parse` raises for a piece (a cut can
    fall inside a string: the caller then parses the whole text)."""
    return _pieces(as_python_reads_it(text), filename)


def _pieces(text: str, filename: str) -> Iterator[list[ast.stmt]]:
    cuts = [0]
    for m in _TOP_LEVEL_START.finditer(text):
        if m.end() - cuts[-1] >= PIECE_CHARS:
            cuts.append(m.end())
    cuts.append(len(text))
    row = 0  # newlines before the piece: its rows are then the file's rows
    for start, end in zip(cuts, cuts[1:]):
        piece = text[start:end]
        yield _quiet_parse("\n" * row + piece, filename).body
        row += piece.count("\n")
