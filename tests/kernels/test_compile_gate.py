"""The kernel tests run through `--ascend-compile=strict` (set in pyproject.toml).

Every specialisation these tests launch is compiled through the Ascend front end
(triton-ascend's ttir and ttadapter stages) by the project's own pytest plugin, and a
test that launches one the front end rejects fails; this test only guards that the
gate is on, so that CI cannot lose it silently.
"""

import pytest


def test_kernel_tests_run_through_the_strict_compile_gate(pytestconfig):
    if pytestconfig.getoption("ascend_compile") == "off":
        pytest.skip("--ascend-compile=off was given on the command line")
    gate = pytestconfig.pluginmanager.get_plugin("ascend-compile-gate")
    assert gate is not None, "the ascend_compile pytest plugin is not active"
    assert gate.strict
