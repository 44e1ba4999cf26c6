"""The hooks in .pre-commit-hooks.yaml, run by the real `pre-commit try-repo`.

pre-commit builds the hook environment from this repository the way a user's
`.pre-commit-config.yaml` would (a virtualenv, `pip install .` with dependencies from
PyPI). `try-repo` needs a git repository with the hooks file committed, so the working
tree (tracked and untracked-but-not-ignored files, i.e. uncommitted work included) is
copied into a temporary repository first. `try-repo` keeps its store in a temporary
folder (PRE_COMMIT_HOME does not apply to it), so each call builds the hook
environment anew (about 6 s here): the test makes three calls.

Skipped, with the reason, where pre-commit is not installed or PyPI cannot be reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import CLEAN_KERNEL as CLEAN
from lint_helpers import KERNEL_WITH_NUM_WARPS as KERNEL

try:
    import pre_commit  # noqa: F401
except ImportError:
    pytest.skip("pre-commit is not installed (pip install -e '.[dev]')", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]


# What pip and pre-commit print when the package index cannot be reached.
NETWORK_ERRORS = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Name or service not known",
    "nodename nor servname provided",
    "NameResolutionError",
    "Failed to resolve",
    "Network is unreachable",
    "Connection refused",
    "Connection reset by peer",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "ProxyError",
    "No route to host",
)
PRE_COMMIT_FAILED = 3  # pre-commit's exit code for its own errors (e.g. env install)


def _env(home: Path) -> dict[str, str]:
    # Drop GIT_DIR, GIT_INDEX_FILE... (set when the suite itself runs in a git hook):
    # the git commands below must act on the temporary repositories.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(
        PRE_COMMIT_HOME=str(home),  # pre-commit's log and database, away from the user's
        PRE_COMMIT_COLOR="never",
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.com",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def _git_repo(folder: Path, env: dict[str, str]) -> Path:
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "--no-verify", "-m", "s")):
        subprocess.run(
            ["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
            cwd=folder,
            env=env,
            check=True,
            capture_output=True,
        )
    return folder


class _Hooks:
    """Runs `pre-commit try-repo <snapshot of this repo> [HOOK] --all-files`."""

    def __init__(self, hook_repo: Path, env: dict[str, str]):
        self.hook_repo, self.env = hook_repo, env

    def run(self, project: Path, *hook_ids: str) -> tuple[int, str]:
        command = [sys.executable, "-m", "pre_commit", "try-repo", str(self.hook_repo)]
        try:
            proc = subprocess.run(
                [*command, *hook_ids, "--all-files", "--verbose"],
                cwd=project,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=600,
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"pre-commit try-repo timed out:\n{exc.output}")
        if proc.returncode == PRE_COMMIT_FAILED:
            # The error pre-commit prints carries pip's own output.
            hit = next((m for m in NETWORK_ERRORS if m in proc.stdout), None)
            if hit is not None:
                pytest.skip(f"PyPI unreachable: pre-commit could not build the hook env ({hit})")
            pytest.fail(f"pre-commit failed to set up or run the hook:\n{proc.stdout}")
        return proc.returncode, proc.stdout


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = _env(tmp_path_factory.mktemp("pre-commit-home"))
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        capture_output=True,
    )
    if listed.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout: cannot snapshot it for try-repo")
    snapshot = tmp_path_factory.mktemp("hook-repo")
    for name in filter(None, listed.stdout.decode().split("\0")):
        src = ROOT / name
        if src.is_file():  # skips files deleted from the working tree
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, snapshot / name)
    return _Hooks(_git_repo(snapshot, env), env)


def _project(folder: Path, env: dict[str, str]) -> Path:
    files = {
        "pyproject.toml": '[tool.ascend-lint]\nextend-exclude = ["legacy"]\n',
        "kernels/k.py": KERNEL,
        # pre-commit names every file explicitly: only --force-exclude keeps this one out.
        "legacy/old.py": KERNEL,
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return _git_repo(folder, env)


def test_check_hook_fails_fix_hook_fixes_then_both_pass(hooks, tmp_path):
    project = _project(tmp_path, hooks.env)

    code, out = hooks.run(project, "ascend-lint")
    assert code == 1, out
    assert "kernels/k.py:11:23: ASC004" in out
    assert "legacy/old.py" not in out
    assert (project / "kernels/k.py").read_text() == KERNEL

    code, out = hooks.run(project, "ascend-lint-fix")
    assert code == 1, out  # --exit-non-zero-on-fix: pre-commit reports the change
    assert "files were modified by this hook" in out
    assert (project / "kernels/k.py").read_text() == CLEAN
    assert (project / "legacy/old.py").read_text() == KERNEL

    # The fixed kernel is clean: both hooks (try-repo with no hook id runs all) pass.
    code, out = hooks.run(project)
    assert code == 0, out
    assert out.count("Passed") == 2, out
    assert (project / "kernels/k.py").read_text() == CLEAN
