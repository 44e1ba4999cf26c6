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
        safe = frozenset({Applicability.SAFE})
        if rule.fix_applicability is Applicability.UNSAFE:
            safe |= {Applicability.UNSAFE}  # the example shows what --unsafe-fixes writes
        outcome = fix_source("snippet.py", case.code.encode(), frozenset({rule.code}), safe)
        assert outcome.error is None
        assert outcome.fixed.decode() == case.fixed
        assert outcome.remaining == []
        # Fixing twice changes nothing.
        again = fix_source("snippet.py", outcome.fixed, frozenset({rule.code}), safe)
        assert again.fixed == outcome.fixed and not again.applied
