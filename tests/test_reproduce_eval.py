"""benchmarks/reproduce_eval.sh end to end, offline: a local git repository stands in
for GitHub (ASCEND_LINT_EVAL_CLONE_FROM), with a one-file manifest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import KERNEL_WITH_NUM_WARPS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "reproduce_eval.sh"

KERNEL = KERNEL_WITH_NUM_WARPS + "".join(
    f"    k[({n},)](x, BT=64, num_warps=4)\n" for n in range(2, 6)
)

EXPECT = [
    {
        "rule": "ASC004",
        "function": "launch",
        "line": 10 + i,
        "snippet": f"k[({i},)](x, BT=64, num_warps=4)",
    }
    for i in range(1, 6)
]

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash"
)


def git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def upstream(tmp_path):
    """`demo/kernels` with one commit, laid out <owner>+<name>/repo like the mirrors."""
    repo = tmp_path / "upstream" / "demo+kernels" / "repo"
    repo.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "k.py").write_text(KERNEL)
    git("add", "k.py", cwd=repo)
    git("commit", "-q", "-m", "kernel", cwd=repo)
    return tmp_path / "upstream", git("rev-parse", "HEAD", cwd=repo)


def manifest(tmp_path, commit: str, expect: list[dict]) -> Path:
    path = tmp_path / "demo_cases.json"
    sample = {
        "id": "demo_k",
        "repo": "demo/kernels",
        "commit": commit,
        "path": "k.py",
        "note": "test",
        "scope": ["ASC004"],
        "expect": expect,
        "absent": [],
    }
    path.write_text(json.dumps([sample]))
    return path


def reproduce(tmp_path, upstream_root: Path, *manifests: Path):
    env = {
        **os.environ,
        "ASCEND_LINT_EVAL_CLONE_FROM": str(upstream_root),
        "PYTHON": sys.executable,
    }
    return subprocess.run(
        ["bash", str(SCRIPT), str(tmp_path / "clones"), *map(str, manifests)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_clones_materializes_and_scores(tmp_path, upstream):
    upstream_root, commit = upstream
    proc = reproduce(tmp_path, upstream_root, manifest(tmp_path, commit, EXPECT))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "summary: recall 1.000 (5/5), precision 1.000, false positives 0" in proc.stdout
    assert (tmp_path / "clones" / "demo+kernels" / "repo").is_dir()  # a bare clone, kept
    # A second run reuses the clone.
    again = reproduce(tmp_path, upstream_root, manifest(tmp_path, commit, EXPECT))
    assert again.returncode == 0 and "cloning" not in again.stderr


def test_a_rule_below_the_gate_exits_one(tmp_path, upstream):
    upstream_root, commit = upstream
    # Recall 5/6 on a rule with at least 5 positives is below the gate's 0.9.
    expect = [*EXPECT, {"rule": "ASC004", "function": "k", "line": 6, "snippet": "pass"}]
    proc = reproduce(tmp_path, upstream_root, manifest(tmp_path, commit, expect))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "miss demo_k:6" in proc.stdout


def test_a_commit_upstream_lacks_is_an_error_that_names_it(tmp_path, upstream):
    upstream_root, _ = upstream
    proc = reproduce(tmp_path, upstream_root, manifest(tmp_path, "0" * 40, []))
    assert proc.returncode == 2
    assert f"commit {'0' * 40} of demo/kernels" in proc.stderr
