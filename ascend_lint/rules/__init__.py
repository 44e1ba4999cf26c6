"""The rule registry: one module per code, named after the rule."""

from __future__ import annotations

from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules.asc001_strided_time_gather import StridedTimeGather
from ascend_lint.rules.asc002_stale_pointer_math import StalePointerMath
from ascend_lint.rules.asc003_runtime_branch_in_loop import RuntimeBranchInLoop
from ascend_lint.rules.asc004_launch_num_warps_stages import LaunchNumWarpsStages

ALL_RULES: tuple[type[Rule], ...] = (
    StridedTimeGather,
    StalePointerMath,
    RuntimeBranchInLoop,
    LaunchNumWarpsStages,
)
RULES_BY_CODE: dict[str, type[Rule]] = {r.code: r for r in ALL_RULES}

# Not a rule class: the engine reports a file it cannot read, decode or parse.
SYNTAX_ERROR_CODE = "ASC000"
SYNTAX_ERROR_NAME = "unparsable-file"

__all__ = [
    "ALL_RULES",
    "RULES_BY_CODE",
    "SYNTAX_ERROR_CODE",
    "Finding",
    "Invalid",
    "Rule",
    "RuleContext",
]
