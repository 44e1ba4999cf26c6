"""ASC025 on test suites: a module pytest collects, or one in a test folder, launches with
its own cases and is not reported; the same launcher in a library module is."""

from __future__ import annotations

import pytest

from ascend_lint.engine import lint_source

LAUNCHER = b"""
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + o, 0.0, mask=o < n)

def zero_(x):
    k[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
"""


def rows(path: str) -> list[int]:
    result = lint_source(path, LAUNCHER, frozenset({"ASC025"}))
    assert result.error is None
    return [d.start.row for d in result.diagnostics]


@pytest.mark.parametrize(
    "path", ["test_ops.py", "ops_test.py", "pkg/tests/ops.py", "repo/unittest/cases/x/ops.py"]
)
def test_test_suites_are_not_reported(path):
    assert rows(path) == []


@pytest.mark.parametrize("path", ["ops.py", "pkg/kernels/ops.py", "tests/a/b/c/d/e/ops.py"])
def test_library_modules_are(path):
    assert rows(path) == [11]
