"""Every rule's VALID/INVALID examples run as tests (ids like ASC001-invalid-2)."""

from __future__ import annotations

import ast

import pytest
from lint_helpers import lint_code

from ascend_lint.diagnostics import Applicability
from ascend_lint.fixes import fix_source
from ascend_lint.rules import ALL_RULES

VALID = [
    pytest.param(rule, code, id=f"{rule.code}-valid-{i}")
    for rule in ALL_RULES
    for i, code in enumerate(rule.VALID)
]
INVALID = [
    pytest.param(rule, case, id=f"{rule.code}-invalid-{i}")
    for rule in ALL_RULES
    for i, case in enumerate(rule.INVALID)
]


def test_every_rule_has_examples():
    for rule in ALL_RULES:
        assert rule.VALID, f"{rule.code} has no VALID examples"
        assert rule.INVALID, f"{rule.code} has no INVALID examples"


@pytest.mark.parametrize("rule,code", VALID)
def test_valid(rule, code):
    ast.parse(code)
    result = lint_code(code, select=rule.code)
    assert result.error is None
    assert [(d.start.row, d.message) for d in result.diagnostics] == []


@pytest.mark.parametrize("rule,case", INVALID)
def test_invalid(rule, case):
    result = lint_code(case.code, select=rule.code)
    assert result.error is None
    rows = sorted(d.start.row for d in result.diagnostics)
    if case.rows:
        assert rows == sorted(case.rows)
    else:
        assert rows
    assert {d.code for d in result.diagnostics} == {rule.code}
    if case.fixed is not None:
        # The rule's own applicability: an unsafe fix is checked as `--unsafe-fixes` applies it.
        safe = frozenset({Applicability.SAFE, rule.fix_applicability or Applicability.SAFE})
        outcome = fix_source("snippet.py", case.code.encode(), frozenset({rule.code}), safe)
        assert outcome.error is None
        assert outcome.fixed.decode() == case.fixed
        assert outcome.remaining == []
        # Fixing twice changes nothing.
        again = fix_source("snippet.py", outcome.fixed, frozenset({rule.code}), safe)
        assert again.fixed == outcome.fixed and not again.applied


def test_asc021_fix_of_the_example_is_the_shipped_fixed_kernel():
    """The numerics of `transposed_batch_base.py.fixed` are tested under the interpreter
    (tests/kernels); this ties them to what the rule's fix writes."""
    from pathlib import Path

    example = Path(__file__).parents[1] / "examples" / "gpu_habits" / "transposed_batch_base.py"
    both = frozenset({Applicability.SAFE, Applicability.UNSAFE})
    outcome = fix_source(str(example), example.read_bytes(), frozenset({"ASC021"}), both)
    assert outcome.error is None and outcome.applied
    assert outcome.fixed == example.with_name(example.name + ".fixed").read_bytes()
    assert outcome.remaining == []
