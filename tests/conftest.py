"""Fixtures shared by the linter tests."""

from __future__ import annotations

import pytest
from rule_snapshots import UPDATE_OPTION

# projects that tests run with pytester (their own tests/ folders) are not this suite's
collect_ignore_glob = ["fixtures/*"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project folder (its own pyproject.toml) as the working directory."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def forks_started(monkeypatch) -> list[int]:
    """The pids of the forks `ascend_lint.forks` starts during the test (still started)."""
    from ascend_lint import forks

    started: list[int] = []
    real = forks.forked

    def counted(job, quiet=False):
        fork = real(job, quiet)
        started.append(fork.pid)
        return fork

    monkeypatch.setattr(forks, "forked", counted)
    return started


def pytest_addoption(parser):
    parser.addoption(
        UPDATE_OPTION,
        action="store_true",
        help="write the snapshots of the rule examples' fixed output that are missing or "
        "differ, and delete those no example has (rules/ascNNN/snapshots/)",
    )


@pytest.fixture
def update_rule_snapshots(request) -> bool:
    return request.config.getoption(UPDATE_OPTION)
