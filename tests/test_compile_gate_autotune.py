"""The compile gate on autotuned kernels: triton-ascend's autotuner drops a config that
fails to compile, so a config over the Unified Buffer is a wasted config, not a failing
test, unless no config can run (tests/fixtures/autotune_ub)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

FIXTURE = Path(__file__).parent / "fixtures" / "autotune_ub"
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("triton", "torch")),
    reason="--ascend-compile needs torch and triton-ascend (pip install -e '.[kernels]')",
)


def test_strict_fails_only_a_kernel_none_of_whose_configs_can_run(pytester):
    for path in FIXTURE.iterdir():
        if path.is_file():
            shutil.copy(path, pytester.path / path.name)
    result = pytester.runpytest_subprocess(
        "--ascend-compile=strict", "--ascend-compile-report=r.json", "-p", "no:cacheprovider"
    )
    out = result.stdout.str()
    failed = set(re.findall(r"^FAILED (\S+)", out, re.MULTILINE))
    assert failed == {"test_copy.py::test_no_config_fits"}, out
    assert "does not fit the Ascend Unified Buffer" in out
    report = json.loads((pytester.path / "r.json").read_text())
    by_kernel: dict[str, dict[int, dict]] = {}
    for spec in report["specialisations"]:
        by_kernel.setdefault(spec["kernel"], {})[spec["constants"]["BLOCK"]] = spec
    one = by_kernel["one_config_fits_kernel"]
    # the overflowing config is tried and dropped; the one that fits is the one that runs
    assert one[65536]["ub"]["verdict"] == "overflows" and one[65536]["dropped_by_autotuner"]
    assert one[1024]["ub"]["verdict"] == "fits" and not one[1024].get("dropped_by_autotuner")
    assert report["summary"]["dropped_by_autotuner"] >= 2
    assert "(an autotune config the tuner drops)" in out
    assert re.search(r"specialisation: .*BLOCK=65536", out)
    assert "launched by: test_copy.py::test_one_config_fits" in out
