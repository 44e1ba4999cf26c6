"""Fixtures shared by the linter tests."""

from __future__ import annotations

import pytest

# projects that tests run with pytester (their own tests/ folders) are not this suite's
collect_ignore_glob = ["fixtures/*"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project folder (its own pyproject.toml) as the working directory."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path
