"""Lint (and fix) many files: read and prefilter in this process, answer unchanged files
from the cache, and run `session.lint_file` on the rest here (a few) or in one process
pool of `jobs` workers (many). A file that is fixed is fixed in the worker that linted
it; the caller writes the fixed bytes (`fix_command`).

Ctrl-C ends the run promptly: the pool's workers are stopped, not waited for (a worker
blocked handing back a result no one reads would otherwise hold the exit).
"""

from __future__ import annotations

import os

from ascend_lint.cache import Cache, content_key, stat_key
from ascend_lint.options import LintOptions
from ascend_lint.results import FileResult, unparsable, worth_reading
from ascend_lint.settings import Settings

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


def lint_path(path: str, options: LintOptions | frozenset[str]) -> FileResult:
    """One file from disk (`options`: its lint options, or just the codes to run)."""
    if not isinstance(options, LintOptions):
        options = LintOptions(frozenset(options), fixable=frozenset(options))
    raw = read_source(path, options.codes)
    if isinstance(raw, FileResult):
        return raw
    from ascend_lint.session import lint_file  # the rules load here, not for a cached run

    return lint_file(path, raw, options)


def _job(args: tuple[str, bytes, LintOptions], workers: int = 1) -> FileResult:
    from ascend_lint.session import lint_file

    return lint_file(*args, workers=workers)


def lint_files(
    files: list[str],
    settings: Settings,
    jobs: int | None = None,
    cache: Cache | None = None,
    ignore_noqa: bool = False,
    fix: bool = False,
    unsafe_fixes: bool | None = None,
) -> tuple[list[FileResult], dict[str, bytes]]:
    """Lint `files` (with `fix`, fix them too: see `FileResult.fixed`). Returns the
    results and the bytes each linted file had, for writing fixes and diffs. With
    `ignore_noqa` the cache is neither read nor written, as it holds what the comments
    leave."""
    if ignore_noqa:
        cache = None
    results: list[FileResult] = []
    read: dict[str, bytes] = {}
    # (result slot, path, bytes, options, the stat key the file had before it was read)
    pending: list[tuple[int, str, bytes, LintOptions, str | None]] = []
    jobs = jobs or min(os.cpu_count() or 1, 8)
    pool = None
    size = 0  # bytes to lint
    try:
        for path in files:
            options = settings.options_for(
                path, fix=fix, unsafe_fixes=unsafe_fixes, ignore_noqa=ignore_noqa
            )
            stat = stat_key(path, options) if cache is not None else None
            if cache is not None and stat is not None:  # unchanged since cached: not read
                known = cache.by_stat(path, stat)
                if known is False:
                    results.append(FileResult(path, skipped=True))
                    continue
                if known is not None and not (fix and options.would_fix(known)):
                    results.append(FileResult(path, known))
                    continue
            raw = read_source(path, options.codes)
            if isinstance(raw, FileResult):
                results.append(raw)
                continue
            if not worth_reading(raw, options.codes):
                results.append(FileResult(path, skipped=True))
                if cache is not None:
                    cache.put_skipped(path, stat)
                continue
            read[path] = raw
            key = content_key(raw, options) if cache is not None else None
            cached = cache.get(path, key, stat) if cache is not None else None
            if cached is not None and not (fix and options.would_fix(cached)):
                results.append(FileResult(path, cached, content_key=key))
                continue
            results.append(FileResult(path))  # placeholder, filled below
            pending.append((len(results) - 1, path, raw, options, stat))
            size += len(raw)
            if (
                pool is None
                and jobs > 1
                and len(pending) >= _POOL_MIN_FILES
                and size >= _POOL_MIN_BYTES
            ):
                # enough work to share: the workers load the rules while the rest is read
                pool = _start_pool(jobs)
        work = [(path, raw, options) for _, path, raw, options, _ in pending]
        if pool is None:
            # Linted here, one at a time: a big module's parts may use the other cores.
            linted = [_job(w, jobs) for w in work]
        else:
            linted = _in_pool(pool, work)
    except BaseException:
        # Ctrl-C (or a failure): stop the workers now; waiting for them could wait on a
        # worker blocked writing a result nobody will read
        if pool is not None:
            _stop(pool)
        raise
    if pool is not None:
        pool.shutdown(wait=True)
    for (slot, path, raw, options, stat), result in zip(pending, linted):
        results[slot] = result
        if ignore_noqa:
            continue  # with --ignore-noqa the findings are not what the comments leave
        # the findings describe the fixed bytes when the file was fixed
        described = result.fixed if result.fixed is not None else raw
        result.content_key = content_key(described, options)
        if cache is not None and result.error is None and result.fix_error is None:
            # fixed bytes are written after this: their stat is not known yet
            cache.put(
                path, result.content_key, result.diagnostics, stat if result.fixed is None else None
            )
    if cache is not None:
        cache.save()
    return results, read


def _load_rules() -> None:
    import ascend_lint.session  # noqa: F401  (the rules, imported once per worker)


def _start_pool(jobs: int):
    from concurrent.futures import ProcessPoolExecutor  # only when there is work to share

    pool = ProcessPoolExecutor(max_workers=jobs)
    for _ in range(jobs):
        pool.submit(_load_rules)  # starts the workers now
    return pool


def _in_pool(pool, work: list[tuple[str, bytes, LintOptions]]) -> list[FileResult]:
    # Largest files first, so one big file does not finish alone at the end.
    order = sorted(range(len(work)), key=lambda i: -len(work[i][1]))
    linted: list = [None] * len(work)
    for i, result in zip(order, pool.map(_job, [work[i] for i in order], chunksize=2)):
        linted[i] = result
    return linted


def _stop(pool) -> None:
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=1)
        if process.is_alive():
            process.kill()
