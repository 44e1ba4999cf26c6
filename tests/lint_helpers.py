"""Shared helpers for the linter tests."""

from __future__ import annotations

import textwrap

from ascend_lint.engine import lint_source
from ascend_lint.settings import ALL_CODES


def lint_code(code: str, select: str | None = None, path: str = "snippet.py"):
    codes = frozenset([select]) if select else ALL_CODES
    return lint_source(path, textwrap.dedent(code).encode("utf-8"), codes)
