"""The fixed output of an example, pinned as a snapshot: the unified diff from the example
to what the rule's fix makes of it (`rules/ascNNN/snapshots/invalid-<i>.diff` for the
rule's INVALID[i]).

A snapshot is one line saying what was fixed, how, and what is left to report, then the
diff exactly as `ascend-lint check --diff` prints it (the same renderer): a reviewer
reads the change, not a copy of the example with one line changed. A case the fix
leaves alone is pinned too, as that line with no diff below it, so that a fix that
starts (or stops) touching it shows up in review. Snapshots are written only on request
(`pytest --update-rule-snapshots`); a missing or different one fails its test."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from ascend_lint.diagnostics import Applicability
from ascend_lint.docs import rules_dir
from ascend_lint.fix_command import unified_diff
from ascend_lint.fixes import FixOutcome, fix_source

UPDATE_OPTION = "--update-rule-snapshots"
UPDATE_COMMAND = f"python -m pytest tests/test_rule_examples.py {UPDATE_OPTION}"


def _fixed_by(rule) -> str:
    """How the fix was applied, as the header line says it."""
    if rule.fix_applicability == Applicability.DISPLAY_ONLY:
        return (
            f"with {rule.code}'s display-only suggestions applied (shown, never applied by `--fix`)"
        )
    unsafe = " --unsafe-fixes" if rule.fix_applicability == Applicability.UNSAFE else ""
    return f"fixed by `ascend-lint check --select {rule.code} --fix{unsafe}`"


def offers_fix(rule) -> bool:
    return rule.fix_applicability is not None


def applied(rule) -> frozenset[Applicability]:
    """The fixes applied to the rule's examples: its own applicability, an unsafe fix as
    `--unsafe-fixes` applies it and a display-only one as the suggestion it shows."""
    return frozenset({Applicability.SAFE, rule.fix_applicability or Applicability.SAFE})


def fix_example(rule, code: str, path: str = "snippet.py") -> FixOutcome:
    """What the rule's fix, alone, makes of `code`."""
    return fix_source(path, code.encode(), frozenset({rule.code}), applied(rule))


def snapshot_path(rule, index: int) -> Path:
    return rules_dir() / rule.code.lower() / "snapshots" / f"invalid-{index}.diff"


def snapshot_paths() -> set[Path]:
    """Every snapshot file in the rule folders."""
    return set(rules_dir().glob("asc*/snapshots/*"))


def render(rule, what: str, outcome: FixOutcome) -> str:
    """The snapshot of `outcome`: `what` was fixed, as the header line says how."""
    rows = sorted(d.start.row for d in outcome.remaining)
    if not rows:
        left = "no finding left"
    elif len(rows) == 1:
        left = f"a finding left on row {rows[0]}"
    else:
        left = f"findings left on rows {', '.join(map(str, rows))}"
    if not outcome.changed:
        return f"{what}: no fix applies; {left}\n"
    diff = unified_diff(outcome.path, outcome.original, outcome.fixed).decode()
    return f"{what} {_fixed_by(rule)}; {left}\n{diff}"


def check_snapshot(path: Path, rendered: str, update: bool) -> None:
    """Fail unless `path` holds `rendered`; with `update`, write it instead."""
    stored = path.read_text(encoding="utf-8") if path.is_file() else None
    if stored == rendered:
        return
    if update:
        path.parent.mkdir(exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
        return
    if stored is None:
        shown = f"{path} is missing; it would hold:\n{rendered}"
    else:
        change = difflib.unified_diff(
            stored.splitlines(keepends=True),
            rendered.splitlines(keepends=True),
            fromfile=f"{path.name} (stored)",
            tofile=f"{path.name} (now)",
        )
        shown = f"{path} differs from what the fix makes now:\n{''.join(change)}"
    pytest.fail(
        f"{shown}\nIf the new output is right, write it with `{UPDATE_COMMAND}` "
        "and review the change with `git diff`.",
        pytrace=False,
    )
