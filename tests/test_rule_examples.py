"""Every rule's VALID/INVALID examples run as tests (ids like ASC001-invalid-2), and the
fixed output of each INVALID example whose rule offers a fix is its snapshot
(tests/rule_snapshots.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from lint_helpers import lint_code
from rule_snapshots import (
    UPDATE_COMMAND,
    check_snapshot,
    fix_example,
    offers_fix,
    render,
    snapshot_path,
    snapshot_paths,
)

from ascend_lint.rules import ALL_RULES

VALID = [
    pytest.param(rule, code, id=f"{rule.code}-valid-{i}")
    for rule in ALL_RULES
    for i, code in enumerate(rule.VALID)
]
INVALID = [
    pytest.param(rule, i, id=f"{rule.code}-invalid-{i}")
    for rule in ALL_RULES
    for i in range(len(rule.INVALID))
]
RULES = {rule.code: rule for rule in ALL_RULES}


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


@pytest.mark.parametrize("rule,index", INVALID)
def test_invalid(rule, index, update_rule_snapshots):
    case = rule.INVALID[index]
    result = lint_code(case.code, select=rule.code)
    assert result.error is None
    rows = sorted(d.start.row for d in result.diagnostics)
    if case.rows:
        assert rows == sorted(case.rows)
    else:
        assert rows
    assert {d.code for d in result.diagnostics} == {rule.code}
    if not offers_fix(rule):
        return
    outcome = fix_example(rule, case.code)
    assert outcome.error is None
    # Fixing twice changes nothing.
    again = fix_example(rule, outcome.fixed.decode())
    assert again.fixed == outcome.fixed and not again.applied
    rendered = render(rule, f"{rule.code} INVALID[{index}]", outcome)
    check_snapshot(snapshot_path(rule, index), rendered, update_rule_snapshots)


def test_every_snapshot_has_its_example(update_rule_snapshots):
    """A snapshot whose case is gone (or whose rule offers no fix) is stale."""
    pinned = {
        snapshot_path(rule, i)
        for rule in ALL_RULES
        if offers_fix(rule)
        for i in range(len(rule.INVALID))
    }
    stale = sorted(snapshot_paths() - pinned)
    if update_rule_snapshots:
        for path in stale:
            path.unlink()
            if not any(path.parent.iterdir()):
                path.parent.rmdir()
        return
    assert stale == [], (
        f"snapshots with no INVALID case of a fix-offering rule: {[str(p) for p in stale]}; "
        f"delete them, or run `{UPDATE_COMMAND}`"
    )


# -- examples/: the GPU-habit files whose fixed output is pinned beside them ------------

REPOSITORY = Path(__file__).resolve().parents[1]
# (the example, relative to the repository, the rule whose fix it shows)
EXAMPLE_FIXES = [("examples/gpu_habits/transposed_batch_base.py", "ASC021")]


@pytest.mark.parametrize("example,code", EXAMPLE_FIXES)
def test_example_fix_is_its_snapshot(example, code, update_rule_snapshots):
    """`<example>.diff` is what the rule's fix makes of the example, named by its path in
    the repository so that `git apply` turns the example into the fixed kernel (whose
    numerics tests/kernels checks, from the fix itself)."""
    rule = RULES[code]
    outcome = fix_example(rule, (REPOSITORY / example).read_text(encoding="utf-8"), example)
    assert outcome.error is None and outcome.changed
    snapshot = REPOSITORY / f"{example}.diff"
    check_snapshot(snapshot, render(rule, example, outcome), update_rule_snapshots)


def test_every_example_snapshot_has_its_example():
    pinned = {REPOSITORY / f"{example}.diff" for example, _ in EXAMPLE_FIXES}
    assert set((REPOSITORY / "examples").rglob("*.diff")) == pinned
