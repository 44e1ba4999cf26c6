"""`SourceFile` coordinates: a row and column to an offset in the text and back, for
every line ending Python's tokenizer counts (LF, CRLF, CR), mixed in one text."""

from __future__ import annotations

import random

import pytest

from ascend_lint.source import SourceFile


def texts(seed: int, count: int):
    rnd = random.Random(seed)
    for _ in range(count):
        parts = []
        for _ in range(rnd.randint(0, 12)):
            parts.append("".join(rnd.choice("ab é\t") for _ in range(rnd.randint(0, 6))))
            parts.append(rnd.choice(["\n", "\n", "\r\n", "\r"]) if rnd.random() < 0.3 else "\n")
        if parts and rnd.random() < 0.5:
            parts.pop()  # no line ending after the last line
        yield "".join(parts)


@pytest.mark.parametrize("seed", range(4))
def test_each_row_starts_where_its_line_does(seed: int):
    for text in texts(seed, 500):
        source = SourceFile.from_text("m.py", text)
        at = 0
        for row, line in enumerate(source.lines, start=1):
            start = text.index(line, at) if line else at
            assert source.offset(row, 0) == start, (text, row)
            assert source.offset(row, len(line)) == start + len(line)
            if line:
                found = source.position_of(start + 1)
                assert (found.row, found.column) == (row, 1)
            # past the line and its ending: the next line's start
            at = start + len(line)
            at += 2 if text.startswith("\r\n", at) else 1
