"""The CPU stand-in for an Ascend NPU (ascend_lint.cpu_device), piece by piece.

Each check runs in a subprocess (tests/cpu_device/cases.py): installing the stand-in
changes torch and triton for the whole process.  The gap fills are compared with torch;
the same kernels under the plain interpreter show the gaps they fill.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_pytest_plugin import needs_kernel_deps

CASES = Path(__file__).parent / "cpu_device" / "cases.py"
REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = needs_kernel_deps


def _run_cases(*names: str, **env: str) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **env}
    for name in ("TRITON_INTERPRET", "ASCEND_LINT_CPU_DEVICE", "ASCEND_LINT_NPU_ARCH"):
        environment.pop(name, None)
    environment.update(env)
    done = subprocess.run(
        [sys.executable, str(CASES), *names],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith('{"case"'):  # a kernel may print a dict of its own
            result = json.loads(line)
            results[result["case"]] = result
    assert results, f"the cases printed nothing:\n{done.stdout}\n{done.stderr[-3000:]}"
    return results


@pytest.fixture(scope="module")
def results() -> dict:
    return _run_cases()


@pytest.fixture(scope="module")
def plain_interpreter() -> dict:
    return _run_cases(
        "negative_axis_reductions",
        "bf16_arithmetic_and_constants",
        "small_dot",
        "gather_along_axis",
        "insert_slice_and_get_element",
        "boolean_invert",
        "builtin_imported_by_name",
        CASES_WITHOUT_STAND_IN="1",
    )


def _ok(results: dict, name: str) -> dict:
    result = results[name]
    assert result["ok"], result.get("traceback") or result.get("error")
    return result


def test_extract_slice_with_integer_program_id_and_strided_offsets(results):
    assert _ok(results, "extract_slice_offsets")["max_error"] == 0.0


def test_insert_slice_and_get_element_match_torch_indexing(results):
    result = _ok(results, "insert_slice_and_get_element")
    assert result["max_error"] == 0.0
    assert result["picked"] == result["want_picked"]


def test_gather_matches_torch_gather(results):
    assert _ok(results, "gather_along_axis")["max_error"] == 0.0


def test_gather_index_outside_the_axis_raises_instead_of_reading_past_it(results):
    result = results["gather_index_out_of_range"]
    assert not result["ok"]
    assert "outside 0..7" in result["error"] and "max 8" in result["error"]


def test_math_functions_the_interpreter_lacks_match_torch(results):
    # tl.math.tanh, cann libdevice tanh, generic libdevice tanh, log1p, atan2, float %,
    # nearbyint: all within fp32 rounding of torch
    errors = _ok(results, "math_functions")["max_error_per_row"]
    assert len(errors) == 7
    assert max(errors) < 1e-6


def test_bf16_constants_arithmetic_and_casts_match_torch(results):
    result = _ok(results, "bf16_arithmetic_and_constants")
    assert result["max_error"] == 0.0
    assert result["half_error"] == 0.0
    assert result["int_equal"]


def test_invert_of_a_boolean_mask(results):
    assert _ok(results, "boolean_invert")["max_error"] == 0.0


def test_builtin_imported_by_name(results):
    assert _ok(results, "builtin_imported_by_name")["max_error"] < 1e-6


def test_a_generator_on_npu_is_a_cpu_generator(results):
    result = _ok(results, "npu_generator")
    assert result["max_error"] == 0.0 and result["device"] == "cpu"
    assert result["isinstance"] == [True, True]


def test_dot_below_the_gpu_minimum_size(results):
    errors = _ok(results, "small_dot")["max_error"]
    assert errors["torch.float32"] < 1e-5
    assert errors["torch.bfloat16"] < 1e-4


def test_reductions_and_scans_over_a_negative_axis(results):
    result = _ok(results, "negative_axis_reductions")
    assert result["max_error"] == 0.0
    assert result["prod_error"] < 1e-5
    assert result["scan_error"] < 1e-5


def test_the_plain_interpreter_has_the_gaps_the_fills_close(plain_interpreter):
    failures = {name: r["error"] for name, r in plain_interpreter.items() if not r["ok"]}
    assert "rank mismatch" in failures["negative_axis_reductions"]
    assert "get_bf16" in failures["bf16_arithmetic_and_constants"]
    assert "M >= 16" in failures["small_dot"]
    assert "create_gather" in failures["gather_along_axis"]
    assert "insert_slice_and_get_element" in failures  # no cann extension, no slice ops
    assert "get_int1_ty" in failures["boolean_invert"]
    assert "Did you forget to add @triton.jit" in failures["builtin_imported_by_name"]


def test_launch_options_accepted_and_unknown_keywords_still_rejected(results):
    result = _ok(results, "launch_options_and_driver")
    assert result["max_error"] == 0.0
    assert result["properties"] == {"max_shared_mem": 1, "num_aicore": 20, "num_vectorcore": 40}
    assert result["target"] == ["npu", "Ascend910B4"]
    assert "not_an_option" in result["unknown_keyword"]


@pytest.mark.parametrize(
    ("target", "arch", "cores"),
    [("A3", "Ascend910_9392", (24, 48)), ("A5", "Ascend910_9589", (32, 64))],
)
def test_driver_reports_the_chosen_part(target, arch, cores):
    result = _ok(
        _run_cases("launch_options_and_driver", CASES_TARGET=target), "launch_options_and_driver"
    )
    assert result["target"] == ["npu", arch]
    assert (result["properties"]["num_aicore"], result["properties"]["num_vectorcore"]) == cores


def test_torch_npu_device_module_and_tensor_placement(results):
    result = _ok(results, "torch_npu_stand_in")
    assert result["devices"] == ["cpu", "cpu", "cpu"]
    assert result["npu_method"] == "cpu"
    assert result["device_count"] == 1 and result["available"]
    assert result["name"] == "Ascend910B4"
    assert result["elapsed_ms"] >= 0.0
    assert result["memory"] == [0, 0] and result["mem_total"] > 0
    assert result["same_module"]
    assert "torch_npu.npu_rms_norm has no CPU implementation" in result["operator_error"]
    assert any("libcustom_ops.so not loaded" in w for w in result["load_library_warning"])
    assert "npu:1 does not exist" in result["second_device"]
    assert result["find_spec"]  # the "is torch_npu here" probe answers


def test_libentry_decorated_kernel_runs_under_the_interpreter(results):
    assert _ok(results, "libentry_launch")["max_error"] == 0.0


def test_what_cannot_run_on_cpu_fails_by_name(results):
    errors = _ok(results, "not_on_cpu_errors")
    assert errors["sub_vec_id"].startswith("NotOnCpuError: extension.sub_vec_id")
    assert "reaches outside it" in errors["outside"]
    assert errors["barrier"].startswith("NotOnCpuError: sync_block_all")


def test_install_is_idempotent_and_records_what_it_replaced(results):
    result = _ok(results, "install_record")
    assert result["same_record"]
    for replaced in (
        "torch_npu",
        "torch.npu",
        "triton.runtime.driver.active",
        "triton.runtime.interpreter.GridExecutor.__call__",
        "InterpreterBuilder.get_bf16",
        "triton.language.extra.cann",
        "triton.runtime.libentry.libentry",
    ):
        assert replaced in result["replaced"]
    assert "already installed for A2" in result["conflict"]
    assert (result["env"], result["arch_env"]) == ("A2", "Ascend910B4")


def test_unknown_target_is_an_error():
    from ascend_lint.cpu_device import get_target

    with pytest.raises(ValueError, match="A2, A3, A5"):
        get_target("A4")


def test_importing_the_plugin_and_package_imports_neither_torch_nor_triton():
    code = (
        "import sys, ascend_lint.pytest_plugin.cpu_device, ascend_lint.cpu_device;"
        "print(sorted(m for m in ('torch', 'triton', 'numpy') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        check=True,
    )
    assert done.stdout.strip() == "[]"
