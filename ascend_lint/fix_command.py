"""`--fix` and `--diff`: write the bytes the lint fixed (atomically, never a file that
changed meanwhile) or print their diff. The fixing itself happened in the worker that
linted each file (`session.lint_file`); source read from standard input is handed back
instead of written."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.fixes import ChangedOnDisk, write_atomic
from ascend_lint.results import FileResult


@dataclass
class FixRun:
    applied: list[Diagnostic] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    diff: bytes = b""  # with `diff`: the unified diff of every file
    would_fix: int = 0
    output: bytes | None = None  # with `stdin`: the fixed source (the input if unchanged)


def write_fixes(
    results: list[FileResult],
    read: dict[str, bytes],
    *,
    diff: bool,
    stdin: bytes | None = None,
) -> FixRun:
    """Write (or with `diff`, diff) what each result fixed; `read` holds the bytes each
    file had when it was linted. With `stdin`, the source of the one result, nothing is
    written: see `FixRun.output`."""
    run = FixRun(output=stdin)
    written: set[str] = set()
    for result in results:
        if result.fix_error:
            run.errors.append(f"{result.path}: {result.fix_error}")
        if result.fixed is None:
            continue
        before = stdin if stdin is not None else read.get(result.path)
        if before is None:
            continue
        if diff:
            run.diff += unified_diff(result.path, before, result.fixed)
            run.would_fix += len(result.applied)
            continue
        if stdin is not None:
            run.output = result.fixed
            run.applied += result.applied
            continue
        real = os.path.realpath(result.path)
        if real in written:
            # the same file under another name (a symlink), written a moment ago with
            # these very bytes
            continue
        try:
            write_atomic(result.path, result.fixed, before)
            written.add(real)
        except ChangedOnDisk:
            run.errors.append(f"{result.path}: changed on disk while being fixed; not overwritten")
            _unfixed(result)
            continue
        except OSError as exc:
            run.errors.append(
                f"{result.path}: cannot write fixes: {exc.strerror or exc}; file left unchanged"
            )
            _unfixed(result)
            continue
        run.applied += result.applied
    return run


def _unfixed(result: FileResult) -> None:
    """A fix that was not written: the file's findings are those of its bytes as they are."""
    if result.unfixed is not None:
        result.diagnostics = result.unfixed
    result.fixed = None
    result.applied = []


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
