"""The shape every rule has: metadata, examples that run as tests, and `check`."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from ascend_lint.diagnostics import Applicability, Fix
from ascend_lint.index import KernelIndex
from ascend_lint.source import SourceFile
from ascend_lint.ub_model import DEFAULT_TARGET, UbTarget, get_target


@dataclass
class Finding:
    """A rule's report before the engine turns it into a Diagnostic."""

    node: ast.AST  # its span is the finding's span
    message: str
    fix: Fix | None = None
    end_node: ast.AST | None = None  # span end, when it differs from `node`'s
    # Where else the defect is written (the definition of a local address the access
    # reads): a more specific rule's finding there supersedes this one too.
    also_at: tuple[ast.AST, ...] = ()


@dataclass
class Invalid:
    """An INVALID example: code, the rows expected to be reported, optionally the fixed code."""

    code: str
    rows: list[int] = field(default_factory=list)  # empty: "at least one finding"
    fixed: str | None = None


@dataclass
class RuleContext:
    index: KernelIndex
    source: SourceFile
    # the SoC whose Unified Buffer the budget rules check against (`target` setting)
    target: UbTarget = field(default_factory=lambda: get_target(DEFAULT_TARGET))


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, names the anti-pattern
    summary: ClassVar[str]  # one line, shown by `ascend-lint rule --all`
    reference: ClassVar[str]  # "reference_kernels/<file>.py::<function>": the corrected pattern
    fix_applicability: ClassVar[Applicability | None] = None
    # Codes of broader rules this one is more specific than: where both report one
    # site, only this rule's finding is kept (one finding per defect).
    supersedes: ClassVar[frozenset[str]] = frozenset()
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError
