"""The shape every rule has: metadata, examples that run as tests, and `check`."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from ascend_lint.diagnostics import Applicability, Fix
from ascend_lint.index import KernelIndex
from ascend_lint.source import SourceFile
from ascend_lint.toolchain import DEFAULT_TRITON_ASCEND, parse_version
from ascend_lint.ub_model import DEFAULT_TARGET, UbTarget, get_target


@dataclass
class Finding:
    """A rule's report before the engine turns it into a Diagnostic."""

    node: ast.AST  # its span is the finding's span
    message: str  # cites `related[i]` as `cite(i)` ("line N" when shown)
    fix: Fix | None = None
    end_node: ast.AST | None = None  # span end, when it differs from `node`'s
    # Where else the defect is written (the definition of a local address the access
    # reads): a more specific rule's finding there supersedes this one too.
    also_at: tuple[ast.AST, ...] = ()
    related: tuple[ast.AST, ...] = ()  # the places the message cites


@dataclass
class Invalid:
    """An INVALID example: code and the rows expected to be reported. Where the rule
    offers a fix, what it makes of the code is pinned in `snapshots/invalid-<i>.diff`
    beside the rule (tests/rule_snapshots.py)."""

    code: str
    rows: list[int] = field(default_factory=list)  # empty: "at least one finding"


@dataclass
class RuleContext:
    index: KernelIndex
    source: SourceFile
    # the SoC whose Unified Buffer the budget rules check against (`target` setting)
    target: UbTarget = field(default_factory=lambda: get_target(DEFAULT_TARGET))
    # the triton-ascend release the project compiles with (`triton-ascend` setting)
    triton_ascend: tuple[int, ...] = field(
        default_factory=lambda: parse_version(DEFAULT_TRITON_ASCEND)
    )


class Rule:
    # A rule's identity lives in its folder's `__init__.py` (CODE, NAME, SUMMARY,
    # REFERENCES, SHOWS), where the reporters read it without importing the check; a
    # rule class defined in a rule folder takes it from there (`__init_subclass__`).
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, names the anti-pattern
    summary: ClassVar[str]  # one line, shown by `ascend-lint rule --all`
    # The corrected code `ascend-lint rule` shows: functions of reference_kernels/, as
    # "<file>.py::<function>"; `()` for a rule no kernel code can show.
    references: ClassVar[tuple[str, ...]] = ()
    # What each of those functions shows of the fix, as the rule doc's "Use instead" names
    # it: a piece of code (or a few, each function holding at least one), which
    # tests/test_docs.py looks for in the shown code and in the doc.
    shows: ClassVar[str | tuple[str, ...]] = ()
    fix_applicability: ClassVar[Applicability | None] = None
    # Codes of broader rules this one is more specific than: where both report one
    # site, only this rule's finding is kept (one finding per defect).
    supersedes: ClassVar[frozenset[str]] = frozenset()
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[Invalid]] = []

    # Fixes that reach past their own finding (ASC004 also removes what only the removed
    # options read) must leave alone what a silenced finding keeps: such a rule sets
    # those fixes in `fix_live`, which the engine calls once the noqa comments are known.
    fixes_after_suppression: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        folder = sys.modules.get(cls.__module__.rpartition(".")[0])
        if folder is not None and hasattr(folder, "CODE"):
            cls.code, cls.name, cls.summary = folder.CODE, folder.NAME, folder.SUMMARY
            cls.references, cls.shows = folder.REFERENCES, folder.SHOWS

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError

    def fix_live(self, ctx: RuleContext, findings: list[Finding], silenced: set[int]) -> None:
        """Set the fixes of `findings` (what `check` just reported, in order) knowing
        which of them (by position) the noqa comments silence. Called by the engine only
        where `fixes_after_suppression` is set."""
        raise NotImplementedError
