"""Fixture files carry their expectations on the offending lines (`# error: ASC001`).
The comparison is an exact set: a missed finding and a false positive both fail."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from ascend_lint.runner import lint_path
from ascend_lint.settings import ALL_CODES

FIXTURES = Path(__file__).parent / "fixtures"
_EXPECT = re.compile(r"#\s*error:\s*(?P<codes>ASC\d{3}(?:\s*,\s*ASC\d{3})*)")


def expected(path: Path) -> Counter:
    found: Counter = Counter()
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = _EXPECT.search(line)
        if m:
            for code in re.split(r"\s*,\s*", m.group("codes")):
                found[(row, code)] += 1
    return found


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.name)
def test_fixture(path):
    result = lint_path(str(path), ALL_CODES)
    assert result.error is None
    actual = Counter((d.start.row, d.code) for d in result.diagnostics)
    assert actual == expected(path)
