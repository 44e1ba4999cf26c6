"""The `kernels` extra gives ranges (installing the pytest plugin must not force a
project's torch); the exact versions CI runs on are in constraints.txt, which CI and
the README's test command install with."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import Requirement

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _kernels_extra() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {
        Requirement(r).name: Requirement(r) for r in project["optional-dependencies"]["kernels"]
    }


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.strip()] = version.strip()
    return pins


def test_the_kernels_extra_pins_nothing_exactly():
    for name, requirement in _kernels_extra().items():
        assert not any(s.operator in ("==", "===") for s in requirement.specifier), name


def test_constraints_pin_every_kernel_dependency_inside_its_range():
    pins = _constraints()
    assert pins["torch"] == "2.13.0"  # an unpinned torch can pull a multi-GB CUDA build
    for name, requirement in _kernels_extra().items():
        assert name in pins, f"constraints.txt does not pin {name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (name, pins[name])


def test_ci_and_the_readme_install_with_the_constraints():
    command = 'pip install -e ".[dev,kernels]" -c constraints.txt'
    readme = (ROOT / "README.md").read_text()
    assert re.search(re.escape(command) + r" && python -m pytest\n", readme)
    assert '-e ".[dev,kernels]" -c constraints.txt' in (ROOT / ".ci" / "run").read_text()
