"""Lint many files: read and prefilter in this process, answer unchanged files from the
cache, and parse the rest here (a few) or in a process pool sized to the cores (many)."""

from __future__ import annotations

import os
from pathlib import Path

from ascend_lint.cache import Cache, content_key
from ascend_lint.engine import FileResult, lint_source, may_contain_kernels, unparsable
from ascend_lint.settings import Settings
from ascend_lint.ub_model import DEFAULT_TARGET

# Below this many files (or bytes) to parse, starting workers costs more than it saves.
_POOL_MIN_FILES = 16
_POOL_MIN_BYTES = 512 * 1024


def read_source(path: str, codes: frozenset[str]) -> bytes | FileResult:
    """The file's bytes, or the ASC000 result that says why it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        return unparsable(FileResult(path), codes, f"cannot read file: {exc.strerror or exc}")


def lint_path(path: str, codes: frozenset[str], target: str = DEFAULT_TARGET) -> FileResult:
    raw = read_source(path, codes)
    return raw if isinstance(raw, FileResult) else lint_source(path, raw, codes, target=target)


def _job(args: tuple[str, bytes, frozenset[str], bool, str]) -> FileResult:
    return lint_source(*args)


def lint_files(
    files: list[Path],
    settings: Settings,
    jobs: int | None = None,
    cache: Cache | None = None,
    ignore_noqa: bool = False,
) -> list[FileResult]:
    """Lint `files`; with `ignore_noqa` the cache is neither read nor written, as it
    holds what the comments leave."""
    if ignore_noqa:
        cache = None
    enabled = settings.enabled_codes()
    results: list[FileResult] = []
    pending: list[tuple[int, str, bytes, frozenset[str], str]] = []  # index, path, raw, codes, key
    for f in files:
        path = str(f)
        codes = settings.codes_for(path, enabled)
        raw = read_source(path, codes)
        if isinstance(raw, FileResult):
            results.append(raw)
            continue
        if not may_contain_kernels(raw):
            results.append(FileResult(path, skipped=True))
            continue
        key = content_key(raw, codes, settings.lint_target)
        cached = cache.get(path, key) if cache is not None else None
        if cached is not None:
            results.append(FileResult(path, cached, content_key=key))
            continue
        results.append(FileResult(path))  # placeholder, filled below
        pending.append((len(results) - 1, path, raw, codes, key))

    jobs = jobs or min(os.cpu_count() or 1, 8)
    size = sum(len(p[2]) for p in pending)
    work = [
        (path, raw, codes, ignore_noqa, settings.lint_target) for _, path, raw, codes, _ in pending
    ]
    if jobs <= 1 or len(pending) < _POOL_MIN_FILES or size < _POOL_MIN_BYTES:
        linted = [_job(w) for w in work]
    else:
        from concurrent.futures import ProcessPoolExecutor  # only when there is work to share

        # Largest files first, so one big file does not finish alone at the end.
        order = sorted(range(len(work)), key=lambda i: -len(work[i][1]))
        linted = [None] * len(work)
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for i, result in zip(order, pool.map(_job, [work[i] for i in order], chunksize=2)):
                linted[i] = result
    for (slot, path, _raw, _codes, key), result in zip(pending, linted):
        results[slot] = result
        if not ignore_noqa:  # with --ignore-noqa the findings are not what --fix starts from
            result.content_key = key
        if cache is not None and result.error is None:
            cache.put(path, key, result.diagnostics)
    if cache is not None:
        cache.save()
    return results
