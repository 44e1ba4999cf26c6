"""The UB verdict: the shared model, the bounds read from ttadapter IR, the gate's verdict
per specialisation, and `ascend-lint compile`.

The IR snippets below are cut down from what triton-ascend 3.2.0's ttadapter stage
prints for small kernels (one op per line, regions closed by `}`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lint import ub_model
from ascend_lint.pytest_plugin import ub_verdict

pytest_plugins = ("pytester",)

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
HAVE_KERNEL_DEPS = all(importlib.util.find_spec(m) for m in ("triton", "torch"))
needs_kernel_deps = pytest.mark.skipif(
    not HAVE_KERNEL_DEPS,
    reason="lowering needs torch and triton-ascend (pip install -e '.[kernels]')",
)
A2 = ub_model.get_target("ascend910b")


# -- the model ------------------------------------------------------------------------------
def test_targets_and_aliases():
    assert A2.capacity_bits == 1_572_864 and A2.multibuffer
    assert ub_model.get_target("Ascend910B4") is A2
    assert ub_model.get_target(ub_model.DEFAULT_TARGET) is A2
    assert ub_model.get_target("a5").capacity_bits == 2_031_616
    assert ub_model.get_target("ascend910_93").capacity_bits == 1_572_864
    with pytest.raises(ValueError, match="unknown target 'ascend310p'"):
        ub_model.get_target("ascend310p")
    assert ub_verdict.target_for_arch("Ascend910_9382").name == "ascend910_93"
    assert ub_verdict.target_for_arch("Ascend910B3") is A2
    assert ub_verdict.target_for_arch("something else") is A2


def test_last_dimension_is_padded_to_32_bytes():
    assert ub_model.aligned_bytes([48000], 4) == 192_000
    assert ub_model.aligned_bytes([128, 3], 4) == 128 * 32  # 12 bytes -> one 32-byte block
    assert ub_model.aligned_bytes([2, 128, 128], 4) == 131_072
    assert ub_model.aligned_bytes([], 4) == 32
    assert ub_model.aligned_bytes([17], 2) == 64


def test_verdict_needs_the_bound_behind_it():
    assert ub_model.verdict(2_000_000, None, A2.capacity_bits) == "overflows"
    assert ub_model.verdict(100, 200, A2.capacity_bits) == "fits"
    assert ub_model.verdict(100, None, A2.capacity_bits) == "uncertain"
    assert ub_model.verdict(100, 2_000_000, A2.capacity_bits) == "uncertain"


# -- bounds from the IR ---------------------------------------------------------------------
LOAD = """\
    %rc{n} = memref.reinterpret_cast %arg2 to offset: [%1], sizes: [{size}], strides: [1] : memref<?xf32> to memref<{size}xf32, strided<[1], offset: ?>>
    %a{n} = memref.alloc() : memref<{size}xf32>
    memref.copy %rc{n}, %a{n} : memref<{size}xf32, strided<[1], offset: ?>> to memref<{size}xf32>
    %t{n} = bufferization.to_tensor %a{n} restrict writable : memref<{size}xf32>
"""
STORE = """\
    %out{n} = memref.reinterpret_cast %arg3 to offset: [%1], sizes: [{size}], strides: [1] : memref<?xf32> to memref<{size}xf32, strided<[1], offset: ?>>
    bufferization.materialize_in_destination %{value} in writable %out{n} : (tensor<{size}xf32>, memref<{size}xf32, strided<[1], offset: ?>>) -> ()
"""


def _kernel(body: str, mode: str = "aiv") -> str:
    return (
        "module {\n"
        "  func.func @k(%arg2: memref<?xf32>, %arg3: memref<?xf32>, %arg4: i32) "
        f'attributes {{global_kernel = "local", mix_mode = "{mode}"}} {{\n'
        "    %1 = arith.index_cast %arg4 : i32 to index\n"
        f"{body}"
        "    return\n  }\n}\n"
    )


def _load(n: int, size: int) -> str:
    return LOAD.format(n=n, size=size)


def _store(n: int, size: int, value: str) -> str:
    return STORE.format(n=n, size=size, value=value)


def test_a_loaded_tile_counts_twice_with_multibuffer():
    est = ub_verdict.estimate(_kernel(_load(0, 48000) + _store(0, 48000, "t0")), "k.py", A2)
    # triton-ascend issue #302: "requires 3072000 bits" = 48000 x 32 x 2
    assert est.lower_bits == 3_072_000
    assert est.verdict == "overflows"
    assert est.largest[0]["multibuffered"]
    single = ub_model.UbTarget("no-multibuffer", A2.capacity_bits, False, ())
    assert ub_verdict.estimate(_kernel(_load(0, 48000)), "k.py", single).lower_bits == 1_536_000


def test_tiles_live_one_after_the_other_do_not_add_up_in_the_lower_bound():
    after = _load(0, 16384) + _store(0, 16384, "t0") + _load(1, 16384) + _store(1, 16384, "t1")
    together = (
        _load(0, 16384)
        + _load(1, 16384)
        + ("    %s = arith.addf %t0, %t1 : tensor<16384xf32>\n" + _store(0, 16384, "s"))
    )
    one = 16384 * 32 * 2
    assert ub_verdict.estimate(_kernel(after), "k.py", A2).lower_bits == one
    both = ub_verdict.estimate(_kernel(together), "k.py", A2)
    assert both.lower_bits == 2 * one
    # the upper bound keeps every alloc and adds the sum, multibuffered as it is stored
    assert both.upper_bits == 2 * one + 16384 * 32 * 2


def test_a_value_read_in_a_loop_lives_to_the_loop_end():
    body = (
        _load(0, 1024)
        + "    scf.for %i = %c0 to %c8 step %c1 {\n"
        + _load(1, 1024)
        + "      %s = arith.addf %t1, %t0 : tensor<1024xf32>\n"
        + _store(1, 1024, "s")
        + "    }\n"
    )
    est = ub_verdict.estimate(_kernel(body), "k.py", A2)
    assert est.lower_bits == 2 * 1024 * 32 * 2  # t0 is still live when t1 is loaded
    assert est.verdict == "fits"


def test_dynamic_shapes_leave_the_upper_bound_open():
    body = (
        _load(0, 1024)
        + "    %e = tensor.empty(%5) : tensor<?xf32>\n"
        + "    %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>\n"
    )
    est = ub_verdict.estimate(_kernel(body), "k.py", A2)
    assert est.upper_bits is None and est.verdict == "uncertain"
    assert "tensor<?xf32>" in est.why_uncertain


def test_a_dynamic_slice_is_bounded_by_its_source():
    body = (
        _load(0, 1024)
        + "    %x = tensor.extract_slice %t0[0] [%4] [1] : tensor<1024xf32> to tensor<?xf32>\n"
    )
    est = ub_verdict.estimate(_kernel(body), "k.py", A2)
    assert est.upper_bits is not None and est.verdict == "fits"


def test_scratch_ops_add_a_buffer_to_the_upper_bound():
    plain = _load(0, 4096) + "    %s = arith.addf %t0, %t0 : tensor<4096xf32>\n"
    with_max = _load(0, 4096) + "    %s = arith.maximumf %t0, %t0 : tensor<4096xf32>\n"
    a = ub_verdict.estimate(_kernel(plain), "k.py", A2).upper_bits
    b = ub_verdict.estimate(_kernel(with_max), "k.py", A2).upper_bits
    assert b - a == 4096 * 4 * 8


def test_a_region_op_is_sized_by_the_types_after_its_closing_brace():
    generic = (
        '    %g = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} '
        "outs(%e : tensor<8192xi32>) {\n"
        "    ^bb0(%out: i32):\n"
        "      %i = linalg.index 0 : index\n"
        "      %v = arith.index_cast %i : index to i32\n"
        "      linalg.yield %v : i32\n"
        "    } -> tensor<8192xi32>\n"
    )
    body = "    %e = tensor.empty() : tensor<8192xi32>\n" + generic + _store(0, 8192, "g")
    est = ub_verdict.estimate(_kernel(body), "k.py", A2)
    # %e and %g (stored: twice) are live together, and the generic's scratch
    assert est.upper_bits == (8192 * 4 + 2 * 8192 * 4 + 8192 * 4) * 8


def test_a_library_call_leaves_the_upper_bound_open():
    # tl.flip lowers to `call @triton_flip`: its buffers are not in the IR (triton-ascend
    # issue #1638: a 64x64 flip overflowed the UB)
    body = (
        _load(0, 4096)
        + "    %f = call @triton_flip(%t0, %c1_i64) : (tensor<4096xf32>, i64) -> tensor<4096xf32>\n"
        + _store(0, 4096, "f")
    )
    est = ub_verdict.estimate(_kernel(body), "k.py", A2)
    assert est.upper_bits is None and est.verdict == "uncertain"
    assert est.why_uncertain.startswith("call @triton_flip")


def test_a_reshape_that_narrows_the_last_dimension_pads_every_row():
    reshape = (
        "    %r = tensor.expand_shape %t0 [[0, 1]] output_shape [4096, 1] "
        ": tensor<4096xf32> into tensor<4096x1xf32>\n"
    )
    view = (
        "    %r = tensor.expand_shape %t0 [[0, 1]] output_shape [1, 4096] "
        ": tensor<4096xf32> into tensor<1x4096xf32>\n"
    )
    use = "    %s = arith.addf %r, %r : tensor<{shape}xf32>\n"
    padded = ub_verdict.estimate(
        _kernel(_load(0, 4096) + reshape + use.format(shape="4096x1")), "k.py", A2
    )
    kept = ub_verdict.estimate(
        _kernel(_load(0, 4096) + view + use.format(shape="1x4096")), "k.py", A2
    )
    # one fp32 per 32-byte row: 8x the bytes, for the reshaped value and the sum
    assert padded.upper_bits - kept.upper_bits == (2 * 4096 * 32 - 4096 * 4) * 8


def test_the_launch_multibuffer_option_overrides_the_target_default():
    text = _kernel(_load(0, 48000) + _store(0, 48000, "t0"))
    est = ub_verdict.estimate(text, "k.py", A2, multibuffer=False)
    assert est.lower_bits == est.upper_bits == 1_536_000 and est.verdict == "fits"


def test_mixed_kernels_keep_matmul_operands_out_of_the_lower_bound():
    body = (
        _load(0, 16384)
        + _load(1, 16384)
        + "    %m = linalg.matmul ins(%t0, %t0 : tensor<16384xf32>, tensor<16384xf32>) "
        "outs(%t1 : tensor<16384xf32>) -> tensor<16384xf32>\n"
        + "    %s = arith.addf %t1, %t1 : tensor<16384xf32>\n"
        + _store(1, 16384, "s")
    )
    aiv = ub_verdict.estimate(_kernel(body), "k.py", A2)
    mixed = ub_verdict.estimate(_kernel(body, mode="mix"), "k.py", A2)
    assert aiv.verdict == "overflows"
    # t0 sits in the cube's L1; t1 is split over two vector cores
    assert mixed.lower_bits == 16384 * 32 * 2 // 2
    assert mixed.verdict == "uncertain"


# -- the gate -------------------------------------------------------------------------------
@needs_kernel_deps
def test_strict_gate_fails_the_test_whose_specialisation_overflows(pytester):
    for path in (FIXTURES / "ub_project").iterdir():
        shutil.copy(path, pytester.path / path.name)
    result = pytester.runpytest_subprocess(
        "--ascend-compile=strict",
        "--ascend-compile-report=report.json",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::DeprecationWarning",
    )
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "FAILED check_ub.py::test_whole_row_block_overflows" in out
    assert "does not fit the Ascend Unified Buffer (--ascend-compile=strict)" in out
    assert "ub overflow: needs at least 3,072,000 bits of 1,572,864 (ascend910b)" in out
    assert "UB (ascend910b, 1,572,864 bits): 1 fit, 1 overflow, 1 uncertain" in out
    assert (
        "flip_kernel: UB uncertain in 1 specialisation: lower bound up to 4,096 bits, "
        "upper bound unknown (call @triton_flip" in out
    )
    assert "UB overflows: 3,072,000 to 3,072,000 bits of 1,572,864" in out
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["summary"]["ub_overflows"] == 1 and report["summary"]["ub_fits"] == 1
    by_block = {s["constants"]["BLOCK"]: s for s in report["specialisations"]}
    assert by_block[48000]["ub"]["ub_bits_lower"] == 3_072_000
    assert by_block[48000]["tests"] == ["check_ub.py::test_whole_row_block_overflows"]
    assert by_block[1024]["ub"]["verdict"] == "fits"
    assert by_block[1024]["ub"]["ub_bits_upper"] <= 1_572_864


@needs_kernel_deps
def test_report_mode_reports_the_overflow_and_fails_nothing(pytester):
    for path in (FIXTURES / "ub_project").iterdir():
        shutil.copy(path, pytester.path / path.name)
    result = pytester.runpytest_subprocess("--ascend-compile", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert "1 fit, 1 overflow, 1 uncertain" in result.stdout.str()


# -- ascend-lint compile --------------------------------------------------------------------
def _compile(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run(
        [sys.executable, "-m", "ascend_lint", "compile", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or REPO_ROOT,
        timeout=600,
    )


UB_KERNELS = str(FIXTURES / "ub_project" / "kernels.py")
REJECTED_KERNELS = str(FIXTURES / "compile_project" / "kernels.py")


@needs_kernel_deps
def test_compile_says_fits_with_both_bounds():
    run = _compile(f"{UB_KERNELS}::copy_kernel", "--constexpr", "BLOCK=1024")
    assert run.returncode == 0, run.stderr
    assert "ttir       ok" in run.stdout and "ttadapter  ok" in run.stdout
    assert "UB fits: 65,536 to " in run.stdout
    assert "signature: x: *fp32, out: *fp32, n: i32" in run.stdout


@needs_kernel_deps
def test_compile_json_for_an_overflowing_config():
    run = _compile(
        f"{UB_KERNELS}::copy_kernel",
        "--constexpr",
        "BLOCK=56000",
        "--arg",
        "x=*bf16",
        "--arg",
        "out=*bf16",
        "--output-format",
        "json",
    )
    assert run.returncode == 1, run.stderr
    result = json.loads(run.stdout)
    assert result["verdict"] == "overflows"
    assert result["ub_bits_lower"] == 56000 * 16 * 2  # 1,792,000
    assert result["capacity_bits"] == 1_572_864 and result["error"] is None
    assert [s["name"] for s in result["stages"]] == ["ttir", "ttadapter", "launch"]
    assert result["signature"]["x"] == "*bf16"
    # the same config on A5's larger UB fits within its lower bound
    a5 = json.loads(
        _compile(
            f"{UB_KERNELS}::copy_kernel",
            "--constexpr",
            "BLOCK=56000",
            "--arg",
            "x=*bf16",
            "--arg",
            "out=*bf16",
            "--target",
            "a5",
            "--output-format",
            "json",
        ).stdout
    )
    assert a5["capacity_bits"] == 2_031_616 and a5["verdict"] != "overflows"


@needs_kernel_deps
def test_compile_passes_compile_options_to_the_launch_and_the_bounds():
    run = _compile(
        f"{UB_KERNELS}::copy_kernel",
        "--constexpr",
        "BLOCK=48000",
        "--option",
        "multibuffer=False",
        "--output-format",
        "json",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout)
    assert result["verdict"] == "fits" and result["ub_bits_lower"] == 1_536_000


@needs_kernel_deps
def test_compile_reports_the_front_end_rejection():
    pointers = ("--arg", "a=*fp32", "--arg", "b=*fp32")
    run = _compile(
        f"{REJECTED_KERNELS}::pick_source_kernel",
        "--constexpr",
        "BLOCK=32",
        *pointers,
        "--output-format",
        "json",
    )
    assert run.returncode == 1, run.stderr
    result = json.loads(run.stdout)
    assert result["verdict"] == "rejected"
    assert {s["name"]: s["status"] for s in result["stages"]}["ttadapter"] == "failed"
    assert "a pointer chosen at run time" in result["error"]
    text = _compile(f"{REJECTED_KERNELS}::pick_source_kernel", "--constexpr", "BLOCK=32", *pointers)
    assert "verdict: rejected by triton-ascend 3.2.0's front end" in text.stdout
    assert "ttadapter  failed" in text.stdout


@needs_kernel_deps
def test_compile_names_the_parameters_it_took_for_scalars():
    # `a` and `b` reach tl.load only through tl.where: nothing shows them to be pointers
    run = _compile(f"{REJECTED_KERNELS}::pick_source_kernel", "--constexpr", "BLOCK=32")
    assert run.returncode == 1
    assert "signature: a: i32, b: i32, out: *fp32, n: i32, split: i32" in run.stdout
    assert "ttir       failed" in run.stdout
    assert "note: a, b, n, split were taken for i32" in run.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["kernels.py"], "write PATH::KERNEL"),
        (["missing.py::k"], "no such file"),
        (["{ub}::nope"], "has no @triton.jit function 'nope' (it has: copy_kernel, flip_kernel)"),
        (["{ub}::copy_kernel"], "BLOCK is a tl.constexpr without a default"),
        (["{ub}::copy_kernel", "--constexpr", "BLOCK"], "write NAME=VALUE"),
        (["{ub}::copy_kernel", "--constexpr", "n=4"], "n is a runtime argument"),
        (["{ub}::copy_kernel", "--arg", "BLOCK=i32"], "BLOCK is a tl.constexpr"),
        (["{ub}::copy_kernel", "--arg", "y=i32"], "has no parameter 'y'"),
        (["{ub}::copy_kernel", "--constexpr", "BLOCK=8", "--arg", "x=*fp128"], "unknown pointer"),
        (["{ub}::copy_kernel", "--constexpr", "BLOCK=8", "--arg", "n=u7"], "unknown scalar"),
        (["{ub}::copy_kernel", "--constexpr", "BLOCK=8", "--target", "x"], "unknown target 'x'"),
        (["{ub}::copy_kernel", "--constexpr", "BLOCK=8", "--grid", "0"], "--grid '0'"),
        (["{ub}::copy_kernel", "--option", "BLOCK=8"], "BLOCK is a parameter of copy_kernel"),
        (["{ub}::copy_kernel", "--constexpr", "BLOCK=tl.flaot16"], "not a triton dtype"),
        (["{ub}::copy_kernel", "--constexpr", "BLOCK=8", "--timeout", "0"], "above 0"),
    ],
)
def test_compile_usage_errors_exit_2_before_lowering(args, message):
    from ascend_lint.cli import main

    argv = ["compile", *(a.format(ub=UB_KERNELS) for a in args)]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 2
    assert message in err.getvalue()


def test_compile_is_listed_in_help(capsys):
    from ascend_lint.cli import main

    assert main(["--help"]) == 0
    listed = [ln.split() for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")]
    assert any(words[:1] == ["compile"] and "Unified" in words for words in listed)
    assert main(["help", "compile"]) == 0
    out = capsys.readouterr().out
    assert "--constexpr NAME=VALUE" in out and "--arg NAME=TYPE" in out and "--target" in out


BARRIER_AND_STRING = """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + o, mask=o < n)
    tl.debug_barrier()
    if MODE == "double":
        v = v * 2
    tl.store(y + o, v, mask=o < n)
"""


@needs_kernel_deps
def test_compile_takes_string_constexprs_and_sizes_past_a_barrier(tmp_path):
    kernel = tmp_path / "k.py"
    kernel.write_text(BARRIER_AND_STRING)
    run = _compile(
        f"{kernel}::k",
        "--constexpr",
        "BLOCK=1024",
        "--constexpr",
        "MODE=double",
        "--output-format",
        "json",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout)
    assert result["constants"]["MODE"] == "double"
    # the barrier holds no buffer: the upper bound stays known
    assert result["verdict"] == "fits" and result["ub_bits_upper"] is not None


@needs_kernel_deps
def test_compile_timing_out_is_no_usage_error(tmp_path):
    kernel = tmp_path / "k.py"
    kernel.write_text(BARRIER_AND_STRING)
    run = _compile(
        f"{kernel}::k", "--constexpr", "BLOCK=64", "--constexpr", "MODE=x", "--timeout", "0.001"
    )
    assert run.returncode == 3, run.stdout + run.stderr
    assert "did not finish within --timeout" in run.stdout
    assert "took longer than 0.001 s" in run.stdout


@needs_kernel_deps
def test_a_rejection_that_is_a_limit_of_the_pinned_front_end_says_so(tmp_path):
    kernel = tmp_path / "k.py"
    kernel.write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def k(x, A: tl.constexpr, B: tl.constexpr):\n"
        "    N: tl.constexpr = tl.cdiv(A, B) + 1\n"
        "    tl.store(x + tl.arange(0, 16), tl.zeros([16], tl.float32) + N)\n"
    )
    run = _compile(f"{kernel}::k", "--constexpr", "A=64", "--constexpr", "B=16")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "rejected by triton-ascend 3.2.0's front end" in run.stdout
    assert "a limit of this front end that later releases lift" in run.stdout
