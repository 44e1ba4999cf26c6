"""Each kernel file the gate looks at, linted once per test process: the findings the
lowered IR confirms or contradicts (``confirm``) and the kernel index the grid check
reads (``grid_coverage``) come from one lint, through the same ``session.lint_file``
as the command line and the language server, never from a second parse."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from ascend_lint.engine import Linted
from ascend_lint.index import KernelIndex
from ascend_lint.options import LintOptions
from ascend_lint.results import FileResult
from ascend_lint.rules import RULES_BY_CODE
from ascend_lint.session import lint_file

# Every rule, as the rules see the file: the IR judges findings, not a project's choice
# of codes.
_EVERY_RULE = LintOptions(frozenset(RULES_BY_CODE))


@dataclass(frozen=True)
class LintedFile:
    raw: bytes
    result: FileResult
    index: KernelIndex | None  # None where no rule looked at the file


def linted_file(path: str) -> LintedFile | None:
    """The lint of the file `path` as it is on disk now; None if it cannot be read."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _linted(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _linted(path: str, _mtime_ns: int, _size: int) -> LintedFile | None:
    try:
        with open(path, "rb") as file:
            raw = file.read()
    except OSError:
        return None
    seen: list[Linted] = []
    result = lint_file(path, raw, _EVERY_RULE, observe=seen.append)
    return LintedFile(raw, result, seen[0].index if seen else None)
