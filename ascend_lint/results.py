"""What linting one file yields (`FileResult`), and the byte-level prefilter that decides
whether a file is read at all: light enough for the paths that never run a rule (a run
the cache answers, reading files in the command's process)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ascend_lint.diagnostics import Diagnostic, Position
from ascend_lint.rules import SYNTAX_ERROR_CODE, UNUSED_NOQA_CODE

# A file that never mentions these bytes cannot define, launch or configure a kernel
# (wrapper modules that re-export triton still spell its name on their import line).
PREFILTER = (b"triton", b"num_warps", b"num_stages")
# Every rule needs a kernel (spelled with `jit` somewhere: `@triton.jit`, `triton.jit(fn)`,
# `from triton import jit`) or a launch option; a file with neither (a test that only
# imports triton) is parsed, so that ASC000 still reports it broken, but not indexed.
RULE_TOKENS = (b"jit", b"num_warps", b"num_stages", b"num_ctas", b"maxnreg")


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None  # an internal error: exit 2, named with file and rule
    skipped: bool = False  # prefilter: nothing kernel-related in the file
    # `cache.content_key` of the bytes these diagnostics describe, when the runner read
    # them (after a fix: of the fixed bytes)
    content_key: str | None = None
    # a lint that fixed (`session.lint_file` with `fix`): the fixed bytes (None when
    # nothing changed), the findings whose fixes were applied, and a fix that failed
    fixed: bytes | None = None
    applied: list[Diagnostic] = field(default_factory=list)
    fix_error: str | None = None
    unfixed: list[Diagnostic] | None = None  # the findings of the bytes before the fix


def may_contain_kernels(raw: bytes) -> bool:
    return any(token in raw for token in PREFILTER)


def worth_reading(raw: bytes, codes: frozenset[str]) -> bool:
    """Whether a file can get any finding: it may define or launch a kernel, or name
    this tool's codes in a comment."""
    return may_contain_kernels(raw) or may_name_own_codes(raw, codes)


def may_name_own_codes(raw: bytes, codes: frozenset[str]) -> bool:
    """Whether ASC100 must read this file's comments: any file, kernel or not, can
    hold a `# noqa: ASC...` that silences nothing."""
    return UNUSED_NOQA_CODE in codes and b"noqa" in raw.lower() and b"ASC" in raw.upper()


def unparsable(
    result: FileResult, codes: frozenset[str], message: str, row: int = 1, col: int = 0
) -> FileResult:
    """Report a file no rule could check (ASC000), unless that code is ignored."""
    if SYNTAX_ERROR_CODE in codes:
        from ascend_lint.rules import SYNTAX_ERROR_NAME

        pos = Position(row, col)
        result.diagnostics.append(
            Diagnostic(SYNTAX_ERROR_CODE, SYNTAX_ERROR_NAME, message, result.path, pos, pos)
        )
    return result
