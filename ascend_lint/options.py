"""What one file is linted with, resolved once from the settings in force for its path
(`Settings.options_for`) and handed to `session.lint_file`, which every front end calls:
the command line, the language server and the pytest gate."""

from __future__ import annotations

from dataclasses import dataclass

from ascend_lint.diagnostics import Applicability, Diagnostic
from ascend_lint.toolchain import DEFAULT_TARGET


@dataclass(frozen=True)
class LintOptions:
    codes: frozenset[str]  # the rules that run on this path (selection, per-file ignores)
    fixable: frozenset[str] = frozenset()  # codes whose fixes are offered and applied
    # the SoC whose Unified Buffer the budget rules check, with the triton-ascend release
    # when it is not the default (`toolchain.lint_target`: one string, so the cache key,
    # the worker processes and the language server carry both)
    target: str = DEFAULT_TARGET
    ignore_noqa: bool = False  # report what the noqa comments would silence
    fix: bool = False  # apply the allowed fixes, round after round, to a fixed point
    unsafe_fixes: bool = False  # unsafe fixes are allowed too

    @property
    def allowed(self) -> frozenset[Applicability]:
        """The applicabilities a fix may have to be applied."""
        if self.unsafe_fixes:
            return frozenset({Applicability.SAFE, Applicability.UNSAFE})
        return frozenset({Applicability.SAFE})

    def with_codes(self, codes: frozenset[str]) -> LintOptions:
        return LintOptions(
            codes, self.fixable, self.target, self.ignore_noqa, self.fix, self.unsafe_fixes
        )

    def would_fix(self, diagnostics: list[Diagnostic]) -> bool:
        """Is there a fix these options would apply?"""
        allowed = self.allowed
        return any(
            d.fix is not None and d.fix.applicability in allowed and d.code in self.fixable
            for d in diagnostics
        )

    def drop_unfixable(self, diagnostics: list[Diagnostic]) -> None:
        """An unfixable code offers no fix at all (no [*], no edits in any output):
        Ruff's rule, applied by every front end through `session.lint_file`."""
        for d in diagnostics:
            if d.fix is not None and d.code not in self.fixable:
                d.fix = None
