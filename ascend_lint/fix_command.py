"""`--fix` and `--diff` over the lint results: fix each file that has applicable fixes,
then write it (atomically) or print its diff."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from ascend_lint.diagnostics import Applicability, Diagnostic
from ascend_lint.engine import FileResult
from ascend_lint.fixes import ChangedOnDisk, fix_source, write_atomic
from ascend_lint.settings import Settings, expand_codes
from ascend_lint.source import SourceDecodeError, SourceFile


@dataclass
class FixRun:
    applied: list[Diagnostic] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    diff: str = ""
    would_fix: int = 0


def run_fixes(results: list[FileResult], settings: Settings, *, unsafe: bool, diff: bool) -> FixRun:
    allowed = frozenset({Applicability.SAFE, *([Applicability.UNSAFE] if unsafe else [])})
    fixable = frozenset(expand_codes(settings.fixable, "fixable")) - frozenset(
        expand_codes(settings.unfixable, "unfixable")
    )
    enabled = settings.enabled_codes()
    run = FixRun()
    for result in results:
        if not any(
            d.fix and d.fix.applicability in allowed and d.code in fixable
            for d in result.diagnostics
        ):
            continue
        try:
            with open(result.path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            run.errors.append(f"{result.path}: cannot read for fixing: {exc.strerror or exc}")
            continue
        outcome = fix_source(
            result.path, raw, settings.codes_for(result.path, enabled), allowed, fixable
        )
        if outcome.error:
            run.errors.append(f"{result.path}: {outcome.error}")
            continue
        if not outcome.changed:
            continue
        if diff:
            run.diff += unified_diff(result.path, raw, outcome.fixed)
            run.would_fix += len(outcome.applied)
            continue
        try:
            write_atomic(result.path, outcome.fixed, raw)
        except ChangedOnDisk:
            run.errors.append(f"{result.path}: changed on disk while being fixed; not overwritten")
            continue
        except OSError as exc:
            run.errors.append(
                f"{result.path}: cannot write fixes: {exc.strerror or exc}; file left unchanged"
            )
            continue
        run.applied += outcome.applied
        result.diagnostics = outcome.remaining
    return run


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    """A diff `git apply` accepts: a/ b/ prefixes, line endings kept as they are."""
    try:
        old = SourceFile.from_bytes(path, before).text
        new = SourceFile.from_bytes(path, after).text
    except SourceDecodeError:
        return ""
    name = path.replace("\\", "/").lstrip("./") if not path.startswith("/") else path
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
    )
    out = []
    for line in lines:
        out.append(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
        )
    return "".join(out)
