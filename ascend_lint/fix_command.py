"""`--fix` and `--diff` over the lint results: fix each file that has applicable fixes,
then write it (atomically) or print its diff. Source read from standard input is fixed
the same way and handed back instead of written."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field

from ascend_lint.cache import content_key
from ascend_lint.diagnostics import Applicability, Diagnostic
from ascend_lint.engine import FileResult
from ascend_lint.fixes import ChangedOnDisk, FixOutcome, fix_source, write_atomic
from ascend_lint.settings import Settings


@dataclass
class FixRun:
    applied: list[Diagnostic] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    diff: bytes = b""  # with `diff`: the unified diff of every file
    would_fix: int = 0
    output: bytes | None = None  # with `stdin`: the fixed source (the input if unchanged)


def run_fixes(
    results: list[FileResult],
    settings: Settings,
    *,
    unsafe: bool,
    diff: bool,
    stdin: bytes | None = None,
) -> FixRun:
    """Fix the files of `results` (their diagnostics become what remains). With `stdin`,
    the source of the one result, nothing is read or written: see `FixRun.output`."""
    allowed = frozenset({Applicability.SAFE, *([Applicability.UNSAFE] if unsafe else [])})
    fixable = settings.fixable_codes()
    enabled = settings.enabled_codes()
    run = FixRun(output=stdin)
    jobs: list[tuple[FileResult, bytes, frozenset[str], list[Diagnostic] | None]] = []
    for result in results:
        if not any(
            d.fix and d.fix.applicability in allowed and d.code in fixable
            for d in result.diagnostics
        ):
            continue
        raw = stdin if stdin is not None else _read(result.path, run)
        if raw is None:
            continue
        codes = settings.codes_for(result.path, enabled)
        jobs.append((result, raw, codes, _findings_of(result, raw, codes, settings.lint_target)))
    outcomes = _fix_all(
        [
            (r.path, raw, codes, allowed, fixable, first, settings.lint_target)
            for r, raw, codes, first in jobs
        ]
    )
    written: set[str] = set()
    for (result, raw, codes, _first), outcome in zip(jobs, outcomes):
        real = os.path.realpath(result.path)
        if real in written:
            # The same file under another name (a symlink) was fixed a moment ago.
            raw = _read(result.path, run)
            if raw is None:
                continue
            outcome = fix_source(
                result.path, raw, codes, allowed, fixable, target=settings.lint_target
            )
        if outcome.error:
            run.errors.append(f"{result.path}: {outcome.error}")
            continue
        if not outcome.changed:
            # Nothing to write (e.g. already fixed through a symlink): report what is there now.
            result.diagnostics = outcome.remaining
            continue
        if diff:
            run.diff += unified_diff(result.path, raw, outcome.fixed)
            run.would_fix += len(outcome.applied)
            continue
        if stdin is not None:
            run.output = outcome.fixed
        else:
            try:
                write_atomic(result.path, outcome.fixed, raw)
                written.add(real)
            except ChangedOnDisk:
                run.errors.append(
                    f"{result.path}: changed on disk while being fixed; not overwritten"
                )
                continue
            except OSError as exc:
                run.errors.append(
                    f"{result.path}: cannot write fixes: {exc.strerror or exc}; file left unchanged"
                )
                continue
        run.applied += outcome.applied
        result.diagnostics = outcome.remaining
    return run


def _findings_of(
    result: FileResult, raw: bytes, codes: frozenset[str], target: str
) -> list[Diagnostic] | None:
    """The lint's findings, when they are of exactly these bytes and codes (the file did
    not change since it was read, nor did the tool): the first fix round starts from them."""
    if result.content_key is not None and result.content_key == content_key(raw, codes, target):
        return result.diagnostics
    return None


def _read(path: str, run: FixRun) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        run.errors.append(f"{path}: cannot read for fixing: {exc.strerror or exc}")
        return None


# Fixing re-lints and re-parses each file; with many files, share the cores.
_POOL_MIN_FILES = 8


def _fix_one(job: tuple) -> FixOutcome:
    return fix_source(*job)


def _fix_all(jobs: list[tuple]) -> list[FixOutcome]:
    workers = min(os.cpu_count() or 1, 8)
    if workers <= 1 or len(jobs) < _POOL_MIN_FILES:
        return [_fix_one(job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_fix_one, jobs, chunksize=1))


def unified_diff(path: str, before: bytes, after: bytes) -> bytes:
    """A diff `git apply` accepts: a/ b/ prefixes, and lines that are the file's own bytes
    (its encoding, BOM and line endings), split where git splits them: at LF."""
    name = os.path.normpath(path).replace(os.sep, "/")  # ./k.py -> k.py
    lines = difflib.diff_bytes(
        difflib.unified_diff,
        _LINE.findall(before),
        _LINE.findall(after),
        fromfile=os.fsencode(f"a/{name}"),
        tofile=os.fsencode(f"b/{name}"),
    )
    return b"".join(
        line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n"
        for line in lines
    )


_LINE = re.compile(rb"[^\n]*\n|[^\n]+")
