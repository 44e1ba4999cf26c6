"""pytest --ascend-cpu-device on a small suite written for an Ascend NPU
(tests/fixtures/npu_native_project: a conftest importing torch_npu, tensors on "npu",
a kernel on a core-count grid from the driver's properties launched with
multibuffer=True, using the cann language extensions)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.test_pytest_plugin import QUIET, needs_kernel_deps

pytest_plugins = ("pytester",)

PROJECT = Path(__file__).parent / "fixtures" / "npu_native_project"


@pytest.fixture
def npu_suite(pytester):
    for path in PROJECT.iterdir():
        if path.is_file():
            shutil.copy(path, pytester.path / path.name)
    return pytester


@needs_kernel_deps
def test_npu_suite_passes_on_cpu_with_the_stand_in_and_the_strict_gate(npu_suite):
    result = npu_suite.runpytest_subprocess(
        "--ascend-cpu-device",
        "--ascend-compile=strict",
        "--ascend-compile-report=report.json",
        *QUIET,
    )
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert "ascend-cpu-device: A2 (Ascend910B4: 20 AI cores, 40 vector cores)" in out
    assert "torch_npu: stand-in (torch_npu is not installed)" in out
    report = json.loads((npu_suite.path / "report.json").read_text())
    [compiled] = report["specialisations"]
    assert compiled["kernel"] == "scaled_tanh_kernel" and compiled["status"] == "ok"
    assert compiled["grid"] == [40, 1, 1]  # min(50 rows, 40 vector cores)


@needs_kernel_deps
def test_npu_suite_without_the_option_fails_on_its_torch_npu_import(npu_suite):
    result = npu_suite.runpytest_subprocess(*QUIET)
    assert result.ret != 0
    assert "No module named 'torch_npu'" in result.stdout.str() + result.stderr.str()


@needs_kernel_deps
def test_ini_key_chooses_the_target(npu_suite):
    npu_suite.makeini("[pytest]\nascend_cpu_device = A3\n")
    npu_suite.makepyfile(
        test_cores="""
        import triton

        def test_a3_core_counts(device):
            properties = triton.runtime.driver.active.utils.get_device_properties(0)
            assert (properties["num_aicore"], properties["num_vectorcore"]) == (24, 48)
        """
    )
    result = npu_suite.runpytest_subprocess(*QUIET)
    result.assert_outcomes(passed=3)
    assert "ascend-cpu-device: A3 (Ascend910_9392" in result.stdout.str()


def test_bad_ini_value_is_a_usage_error(pytester):
    pytester.makeini("[pytest]\nascend_cpu_device = A4\n")
    result = pytester.runpytest_subprocess(*QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ascend_cpu_device = 'A4'" in result.stderr.str()


def test_path_taken_for_the_target_says_how_to_write_it(pytester):
    result = pytester.runpytest_subprocess("--ascend-cpu-device", "tests/", *QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "write --ascend-cpu-device=A2" in result.stderr.str()


def _suites_script():
    import sys

    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(folder))
    try:
        import sanitizer_suites
    finally:
        sys.path.remove(str(folder))
    return sanitizer_suites


def test_suite_benchmark_interrupts_a_capped_run_started_in_the_background(tmp_path):
    # `nohup script &` leaves SIGINT ignored, and children inherit that: the interrupt
    # that ends a capped run must still reach pytest, which then writes what finished
    import signal

    suites = _suites_script()
    (tmp_path / "test_slow.py").write_text(
        "import time\n\ndef test_quick():\n    pass\n\ndef test_slow():\n    time.sleep(120)\n"
    )
    suite = suites.Suite(name="slow", mirror="", paths=[], tests=[], pythonpath=["."])
    junit = tmp_path / "junit.xml"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        run = suites.run_pytest(tmp_path, suite, ["test_slow.py"], [], 8, junit)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert run["capped"]
    assert run["seconds"] < 60, run["tail"]
    counted = suites.read_junit(junit)
    assert counted["junit"] and counted["passed"] == 1


@needs_kernel_deps
def test_npu_device_survives_a_test_that_breaks_the_default_device(pytester):
    # torch.set_default_device exits the previous default-device mode before it parses
    # the new device; when that parse fails, the next call pops the mode stack's bottom,
    # the stand-in's npu -> cpu mapping.  On an NPU the tests after it are unaffected,
    # and here too: each test starts with the mapping in place
    pytester.makepyfile(
        test_order="""
        import pytest
        import torch

        def test_breaks_the_default_device():
            torch.set_default_device("npu")
            with pytest.raises(RuntimeError):
                torch.set_default_device("")
            with pytest.raises(AssertionError):
                torch.set_default_device("cpu")

        def test_after_it():
            assert torch.ones(2, device="npu").device.type == "cpu"
        """
    )
    result = pytester.runpytest_subprocess("--ascend-cpu-device", *QUIET)
    result.assert_outcomes(passed=2)


def test_suite_benchmark_lists_gate_failures_and_findings_with_their_verdicts():
    suites = _suites_script()
    finding = {
        "kind": "out-of-bounds",
        "kernel": "copy_kernel",
        "path": "/x/kernels.py",
        "line": 12,
        "op": "load",
        "tensor": "src",
        "lanes": 3,
        "tests": 1,
        "test": "tests/test_copy.py::test_copy",
    }
    gate = {
        "kernel": "tile_kernel",
        "file": "/x/kernels.py",
        "def_line": 30,
        "status": "rejected",
        "stage": "ttadapter",
        "reason": "an op the Ascend front end rejects",
        "message": "",
        "tests": 2,
        "dropped_by_autotuner": False,
    }
    cpu = {
        "command": "pytest tests",
        "seconds": 1.0,
        "exit": 1,
        "capped": False,
        "tests": 3,
        "passed": 1,
        "failed": 2,
        "errors": 0,
        "skipped": 0,
        "failures": [
            {
                "test": "t::a",
                "text": "rejected by the Ascend compiler front end (--ascend-compile=strict):\n...",
            },
            {"test": "t::b", "text": "Timeout (>45.0s) from pytest-timeout"},
        ],
        "compiled": {"specialisations": 4, "rejected": 1, "not_compiled": 0, "ub_overflows": 0},
        "gate": [gate],
        "sanitizer": [finding],
        "sanitizer_summary": {"launches": 9, "kernels": 2},
    }
    result = {
        "suite": "demo",
        "commit": "0" * 40,
        "selection": "all",
        "note": "",
        "packages": "",
        "cpu": cpu,
        "plain": {"seconds": 1.0, "tests": 0, "passed": 0, "reason": ""},
    }
    suites.SANITIZER_VERDICTS[("demo", "copy_kernel", "out-of-bounds")] = ("true bug", "why")
    try:
        text = suites.write_markdown([result])
    finally:
        del suites.SANITIZER_VERDICTS[("demo", "copy_kernel", "out-of-bounds")]
    row = next(line for line in text.splitlines() if line.startswith("| demo |"))
    assert "| 1 | 9 launches of 2 kernels: 1 findings (1 true bug) |" in row
    assert "| strict compile gate | 1 |" in text
    assert "`kernels.py:30` tile_kernel | rejected |" in text and "not judged" in text
    assert (
        "| out-of-bounds | copy_kernel | src | `kernels.py:12` load | 3 | 1 | true bug: why |"
        in text
    )


@needs_kernel_deps
def test_a_library_choosing_triton_by_active_backends_compiles_in_the_gate(npu_suite):
    # vLLM's triton_utils hands out real triton only when exactly one backend driver is
    # active, else a stand-in whose @triton.jit returns the plain function: the stand-in
    # makes the NPU's active in the test process, and the compile worker must agree, or
    # strict mode fails the test for a kernel "the worker could not load"
    npu_suite.makepyfile(
        probing_kernels="""
        import triton
        import triton.language as tl
        from triton.backends import backends

        if sum(b.driver.is_active() for b in backends.values()) != 1:
            class _NoTriton:
                @staticmethod
                def jit(fn):
                    return fn

            triton = _NoTriton()

        @triton.jit
        def double_kernel(x_ptr, out_ptr, N: tl.constexpr):
            offsets = tl.arange(0, N)
            tl.store(out_ptr + offsets, 2 * tl.load(x_ptr + offsets))
        """,
        test_probing="""
        import torch
        from probing_kernels import double_kernel

        def test_double(device):
            x = torch.arange(16, dtype=torch.float32, device=device)
            out = torch.empty_like(x)
            double_kernel[(1,)](x, out, N=16)
            assert torch.equal(out, 2 * x)
        """,
    )
    result = npu_suite.runpytest_subprocess(
        "--ascend-cpu-device",
        "--ascend-compile=strict",
        "--ascend-compile-report=report.json",
        "test_probing.py",
        *QUIET,
    )
    result.assert_outcomes(passed=1)
    report = json.loads((npu_suite.path / "report.json").read_text())
    [compiled] = report["specialisations"]
    assert compiled["kernel"] == "double_kernel" and compiled["status"] == "ok"


def test_the_worker_names_a_library_placeholder_as_the_reason_for_no_kernel():
    import types

    from ascend_lint.lowering.worker import _not_a_kernel

    class TritonPlaceholder(types.ModuleType):
        def jit(self, fn):
            return fn

    module = types.ModuleType("kernels")
    module.triton = TritonPlaceholder("triton")
    text = _not_a_kernel("copy_kernel", lambda: None, module)
    assert text.startswith("copy_kernel is a function in the compile worker, not a triton kernel")
    assert "TritonPlaceholder, not the triton package" in text
