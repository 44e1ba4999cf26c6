"""Lint many files: in this process for a few, in a process pool for many."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ascend_lint.diagnostics import Position
from ascend_lint.engine import FileResult, lint_source, unparsable
from ascend_lint.settings import Settings

_POOL_MIN_FILES = 24


def lint_path(path: str, codes: frozenset[str]) -> FileResult:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        return unparsable(FileResult(path), codes, f"cannot read file: {exc.strerror or exc}")
    return lint_source(path, raw, codes)


def _job(args: tuple[str, frozenset[str]]) -> FileResult:
    return lint_path(*args)


def lint_files(files: list[Path], settings: Settings, jobs: int | None = None) -> list[FileResult]:
    enabled = settings.enabled_codes()
    work = [(str(f), settings.codes_for(str(f), enabled)) for f in files]
    jobs = jobs or min(os.cpu_count() or 1, 8)
    if jobs <= 1 or len(work) < _POOL_MIN_FILES:
        return [_job(w) for w in work]
    # Largest files first, so one big file does not finish alone at the end.
    order = sorted(range(len(work)), key=lambda i: -_size(work[i][0]))
    results: list[FileResult | None] = [None] * len(work)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for i, result in zip(order, pool.map(_job, [work[i] for i in order], chunksize=4)):
            results[i] = result
    return [r for r in results if r is not None]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


__all__ = ["FileResult", "Position", "lint_files", "lint_path"]
