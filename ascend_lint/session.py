"""One lint of one file, the same for every front end: the command line (in its worker
processes), the language server and the pytest gate call `lint_file`.

It lints the file's bytes once (`engine.lint_source`), strips the fixes of codes that
are not fixable (Ruff's rule: an unfixable code offers no fix at all), and, when the
options ask for it, applies the allowed fixes round after round to a fixed point
(`fixes.fix_source`, starting from the findings just made) in the same process: the
result carries the fixed bytes and what remains, for the caller to write or to diff.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.engine import Linted, lint_source
from ascend_lint.fixes import FixOutcome, fix_source
from ascend_lint.line_wrap import ruff_line_length
from ascend_lint.options import LintOptions
from ascend_lint.results import FileResult
from ascend_lint.settings import Settings


def lint_file(
    path: str,
    raw: bytes,
    options: LintOptions,
    observe: Callable[[Linted], None] | None = None,
    workers: int = 1,
) -> FileResult:
    """Lint (and with `options.fix`, fix) the bytes `raw` of the file `path`. `workers`:
    how many processes may share a module linted in parts (`engine.lint_source`)."""
    result = lint_source(
        path,
        raw,
        options.codes,
        options.ignore_noqa,
        options.target,
        observe=observe,
        workers=workers,
    )
    options.drop_unfixable(result.diagnostics)
    if options.fix and result.error is None and options.would_fix(result.diagnostics):
        outcome = fix_file(path, raw, options, first=result.diagnostics, workers=workers)
        if outcome.error:
            result.fix_error = outcome.error
        elif outcome.changed:
            result.unfixed = result.diagnostics
            result.fixed = outcome.fixed
            result.applied = outcome.applied
            result.diagnostics = outcome.remaining
    return result


def lint_buffer(
    path: str,
    raw: bytes,
    settings: Settings,
    *,
    ignore_noqa: bool = False,
    force_exclude: bool = False,
    fix: bool = False,
    unsafe_fixes: bool | None = None,
) -> FileResult | None:
    """Lint (and fix) source that is not read from disk (standard input, an editor's
    buffer) as the file `path`, with the options the settings give that path. With
    `force_exclude`, None when the settings exclude `path`."""
    if force_exclude and settings.excludes(Path(path)):
        return None
    options = settings.options_for(
        path, fix=fix, unsafe_fixes=unsafe_fixes, ignore_noqa=ignore_noqa
    )
    return lint_file(path, raw, options)


def fix_file(
    path: str,
    raw: bytes,
    options: LintOptions,
    first: list[Diagnostic] | None = None,
    lint: Callable[[bytes, ast.Module | None], FileResult] | None = None,
    workers: int = 1,
) -> FixOutcome:
    """The allowed fixes applied to a fixed point; `first`: the findings of `raw`, when
    the caller has them; `lint`: how each round's fixed bytes are linted again
    (`fixes.fix_source`); `workers`: as for `lint_file`."""
    outcome = fix_source(
        path,
        raw,
        options.codes,
        options.allowed,
        options.fixable,
        first,
        target=options.target,
        line_length=ruff_line_length(path),
        lint=lint,
        workers=workers,
    )
    options.drop_unfixable(outcome.remaining)
    return outcome
