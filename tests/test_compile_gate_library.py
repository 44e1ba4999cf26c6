"""pytest --ascend-compile on a test suite shaped like a real kernel library's.

tests/fixtures/compile_library is a package (`ascend_ops`) with its own tests/ folder:
an autotuned kernel with three configs, a module whose import fails part-way in the
worker, a rejected kernel launched in fp32 at two grids and in bf16, a runtime branch
in a `tl.static_range` loop, and a platform switch that picks libdevice on a host
without an NPU.  The project is copied under a path longer than 120 characters, and
triton is imported through a link under that path too, as from a venv there: the
adapter's stack dump and command line then carry long paths, which used to push its
error out of the message.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

REPO_ROOT = Path(__file__).resolve().parents[1]
LIBRARY = Path(__file__).parent / "fixtures" / "compile_library"
HAVE_KERNEL_DEPS = all(importlib.util.find_spec(m) for m in ("triton", "torch"))
needs_kernel_deps = pytest.mark.skipif(
    not HAVE_KERNEL_DEPS,
    reason="--ascend-compile needs torch and triton-ascend (pip install -e '.[kernels]')",
)
QUIET = ("-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning", "-W", "ignore::UserWarning")


def _line_of(path: Path, needle: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


@needs_kernel_deps
def test_the_gate_on_a_library_suite_under_a_long_path(pytester, monkeypatch):
    """One strict run (its compiles dominate the cost), each issue checked on its own."""
    deep = pytester.path / ("a-checkout-under-a-long-cache-folder-name-" * 3) / "venv-of-it"
    site = deep / "site-packages"
    project = deep / "project"
    site.mkdir(parents=True)
    shutil.copytree(LIBRARY, project, ignore=shutil.ignore_patterns("__pycache__"))
    triton_dir = Path(importlib.util.find_spec("triton").origin).parent
    (site / "triton").symlink_to(triton_dir, target_is_directory=True)
    assert len(str(project)) > 120
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(REPO_ROOT)]))
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # the project's conftest sets it
    monkeypatch.chdir(project)
    result = pytester.runpytest_subprocess(
        "--ascend-compile=strict", "--ascend-compile-report=report.json", *QUIET
    )
    out = result.stdout.str()
    # the blend tests fail (strict); the platform switch is an expected failure
    result.assert_outcomes(failed=3, passed=4, xfailed=1)
    report = json.loads((project / "report.json").read_text())
    assert report["summary"]["worker_restarts"] == 0
    triton_seen = [s for s in report["specialisations"] if s["status"] == "rejected"]
    assert triton_seen, "nothing was rejected: the run did not reach the adapter"

    _every_autotune_config_the_test_reaches_is_compiled(out, report)
    _a_module_that_fails_to_import_is_loaded_from_its_source(project, out, report)
    _rejections_are_one_record_per_specialisation(out, report)
    _the_compilers_error_survives_the_stack_dump(project, out, report)
    _the_rejection_confirms_the_pointer_choice(project, report)
    _a_branch_in_an_unrolled_static_range_is_not_contradicted(project, out, report)
    _a_platform_switch_is_labelled_at_the_call(project, out, report)


def _specs(report: dict, kernel: str) -> list[dict]:
    return [s for s in report["specialisations"] if s["kernel"] == kernel]


def _every_autotune_config_the_test_reaches_is_compiled(out, report):
    row_sum = _specs(report, "row_sum_kernel")
    assert sorted(s["constants"]["BLOCK"] for s in row_sum) == [32, 64, 128]
    assert all(s["status"] == "ok" for s in row_sum)
    assert all(s["tests"] == ["tests/test_norms.py::test_row_sum"] for s in row_sum)
    assert "row_sum_kernel" not in out  # nothing to say about it in the terminal


def _a_module_that_fails_to_import_is_loaded_from_its_source(project, out, report):
    """The module stops at a device query the worker cannot answer: its kernels are
    loaded from its source (the failing statement skipped) and compile, and the report
    says so with the failure."""
    failing = _line_of(project / "ascend_ops" / "scan.py", "get_device_properties")
    [prefix] = _specs(report, "prefix_sum_kernel")
    [scale] = _specs(report, "scale_kernel")
    assert prefix["status"] == "ok" and scale["status"] == "ok"
    stood_in = scale["loaded_from_source"]
    assert stood_in["import_failure"].startswith(f"line {failing}: AttributeError")
    assert re.search(
        rf"scan.py:\d+: scale_kernel: loaded from its source \(its module does not import "
        rf"here: line {failing}: AttributeError",
        out,
    )
    assert report["summary"]["loaded_from_source"] == 2
    assert "has no attribute 'scale_kernel'" not in out


def _rejections_are_one_record_per_specialisation(out, report):
    blend = _specs(report, "blend_kernel")
    assert len(blend) == 2 and all(s["status"] == "rejected" for s in blend)
    by_dtype = {s["signature"]["a"]: s for s in blend}
    assert set(by_dtype) == {"*fp32", "*bf16"}
    # one specialisation launched at two grids: one record, both tests
    assert sorted(by_dtype["*fp32"]["tests"]) == [
        "tests/test_blend.py::test_blend_fp32[128]",
        "tests/test_blend.py::test_blend_fp32[64]",
    ]
    assert by_dtype["*bf16"]["tests"] == ["tests/test_blend.py::test_blend_bf16"]
    assert len({s["key"] for s in blend}) == 2 and all(s["key"] for s in blend)
    assert "specialisation: a: *bf16 (16-byte aligned)" in out
    assert "specialisation: a: *fp32 (16-byte aligned)" in out


def _the_compilers_error_survives_the_stack_dump(project, out, report):
    where = _line_of(project / "ascend_ops" / "blend.py", "tl.where(")
    for spec in _specs(report, "blend_kernel"):
        message = spec["message"]
        assert "dyn_cast on a non-existent value" in message  # the compiler's assertion
        assert "killed by signal 6" in message
        for noise in ("Stack dump", "Program arguments", "triton-adapter-opt+0x", "PLEASE submit"):
            assert noise not in message, noise
        assert spec["reason"].startswith("a pointer chosen at run time")  # the cause first
        assert spec["location"]["line"] == where
    summary = out.split("Ascend compile =", 1)[1]
    assert (
        f"ascend_ops/blend.py:{where}: blend_kernel (ttadapter): a pointer chosen at run time"
        in summary
    )
    assert "Stack dump" not in out and "Program arguments" not in out
    assert "Assertion `detail::isPresent(Val)" in summary


def _the_rejection_confirms_the_pointer_choice(project, report):
    """ASC029 predicts the rejection of blend_kernel at its `tl.where` on pointers."""
    where = _line_of(project / "ascend_ops" / "blend.py", "tl.where(")
    [verdict] = [v for v in report["ir_confirmation"] if v["code"] == "ASC029"]
    assert verdict["line"] == where and verdict["status"] == "confirmed", verdict
    assert len(verdict["confirmed_by"]) == 2  # the fp32 and the bf16 specialisation


def _a_branch_in_an_unrolled_static_range_is_not_contradicted(project, out, report):
    line = _line_of(project / "ascend_ops" / "tiles.py", "if tile < n_tiles:")
    [verdict] = [v for v in report["ir_confirmation"] if v["code"] == "ASC003"]
    assert verdict["line"] == line and verdict["unrolled_loop"]
    # tl.static_range(4) leaves four copies of the branch and no scf.for around them
    assert verdict["status"] == "confirmed", verdict
    [spec] = _specs(report, "double_tiles_kernel")
    assert spec["ir"]["branch_copies"][str(line)] == 4
    assert f"ascend_ops/tiles.py:{line}: ASC003 confirmed by the lowered IR in 1 of 1" in out


def _a_platform_switch_is_labelled_at_the_call(project, out, report):
    source = project / "ascend_ops" / "activations.py"
    call = _line_of(source, "r = rsqrt(v)")
    [spec] = _specs(report, "inverse_root_kernel")
    assert spec["status"] == "rejected" and spec["stage"] == "ttir"
    assert spec["cause"] == "platform-switch"
    assert spec["location"]["line"] == call  # not the line that uses its result
    assert "under an import-time condition" in spec["reason"]
    assert (
        f"ascend_ops/activations.py:{call}: inverse_root_kernel (ttir): platform switch: rsqrt()"
        in out
    )


def test_a_run_that_captured_nothing_says_so(pytester, monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess("--ascend-compile=strict", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "0 specialisations captured" in out
    assert "TRITON_INTERPRET is not 1" in out
    assert 'os.environ.setdefault("TRITON_INTERPRET", "1")' in out
    listed = pytester.runpytest_subprocess(
        "--ascend-compile=strict", "--collect-only", "-p", "no:cacheprovider"
    )
    assert "specialisations captured" not in listed.stdout.str()  # nothing ran: no news


# -- the pieces on their own (no triton needed) -----------------------------------------
ADAPTER_ABORT = """triton-adapter-opt was killed by signal 6
%41 = "scf.if"(%40) ({
}) : (i1) -> tensor<32x!tt.ptr<f32>> loc("/src/k.py":50:11)
encountered AddPtrOp produced by unsupported operation
UNREACHABLE executed at /usr1/02/workspace/j_awmZh9cW/triton-ascend/ascend/triton-adapter/lib/TritonToLinalg/BlockPtrAnalysis.cpp:484!
PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.
Stack dump:
0.\tProgram arguments: /a/very/long/venv/lib/python3.11/site-packages/triton/backends/ascend/triton-adapter-opt /tmp/tmpab/kernel.ttir.mlir --triton-to-linalg -o /tmp/tmpab/kernel.ttadapter.mlir
 #0 0x000055e77df940c8 (/a/very/long/venv/lib/python3.11/site-packages/triton/backends/ascend/triton-adapter-opt+0x203e0c8)
 #1 0x00007f7f01ea8eec __pthread_kill_implementation ./nptl/./nptl/pthread_kill.c:44:76
#12 0x000055e77df554cf (/a/very/long/venv/lib/python3.11/site-packages/triton/backends/ascend/triton-adapter-opt+0x1fff4cf)
"""


def test_distil_keeps_the_error_and_drops_frames_command_lines_and_build_paths():
    from ascend_lint.lowering import diagnosis

    text = diagnosis.distil(ADAPTER_ABORT)
    assert "encountered AddPtrOp produced by unsupported operation" in text
    assert "killed by signal 6" in text and 'loc("/src/k.py":50:11)' in text
    for noise in ("Stack dump", "Program arguments", "0x000055e7", "PLEASE submit", "j_awmZh9cW"):
        assert noise not in text, noise
    # a build-machine path keeps its source-tree part
    assert "triton-ascend/ascend/triton-adapter/lib/TritonToLinalg/BlockPtrAnalysis.cpp:484" in text
    assert (
        diagnosis.reason(text, "ttadapter")
        == "encountered AddPtrOp produced by unsupported operation"
    )


def test_distil_keeps_both_ends_of_a_long_message():
    from ascend_lint.lowering import diagnosis

    ir = [f'  %{i} = "tt.splat"(%0) : (f32) -> tensor<32xf32>' for i in range(500)]
    text = diagnosis.distil(
        "\n".join(["triton-adapter-opt exited with status 1", *ir, "error: boom"])
    )
    lines = text.splitlines()
    assert lines[0] == "triton-adapter-opt exited with status 1" and lines[-1] == "error: boom"
    assert len(lines) == 2 * diagnosis.KEEP_LINES + 1
    assert "lines left out" in lines[diagnosis.KEEP_LINES]


def test_reason_puts_the_probable_cause_first_and_unquotes_python_errors():
    from ascend_lint.lowering import diagnosis

    ttir = 'loc("/src/k.py":13:9): AssertionError: Both inputs must be 2D\n    w = tl.dot(v, v)'
    assert diagnosis.reason(ttir, "ttir") == "AssertionError: Both inputs must be 2D"
    assert (
        diagnosis.plain_error("AttributeError(\"'x' has no 'y'\")")
        == "AttributeError: 'x' has no 'y'"
    )
    hinted = ADAPTER_ABORT + 'probable cause: loc("/src/k.py":7:3): a pointer chosen at run time\n'
    assert diagnosis.reason(diagnosis.distil(hinted), "ttadapter") == "a pointer chosen at run time"
    switched = 'platform switch: loc("/src/k.py":9:9): rsqrt() is libdevice\'s\n' + ttir
    assert diagnosis.reason(switched, "ttir") == "platform switch: rsqrt() is libdevice's"
    assertion = (
        "triton-adapter-opt: llvm-project/llvm/include/llvm/Support/Casting.h:650: "
        "decltype(auto) llvm::dyn_cast(const From &): Assertion `isPresent(Val)' failed."
    )
    assert (
        diagnosis.reason(assertion, "ttadapter")
        == "Assertion `isPresent(Val)' failed (Casting.h:650)"
    )


UNROLLED = """\
module {
  func.func @k(%arg2: memref<?xf32>) {
    scf.if %c0 {
      memref.copy %a, %b : memref<16xf32> to memref<16xf32> loc(#loc1)
    } loc(#loc2)
    scf.if %c1 {
      memref.copy %a, %b : memref<16xf32> to memref<16xf32> loc(#loc1)
    } loc(#loc2)
    scf.if %pad {
      linalg.fill ins(%cst : f32) outs(%alloc : memref<16xf32>) loc(#loc3)
    } {hivm.unlikely_condition} loc(#loc3)
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc("/src/k.py":1:0)
#loc1 = loc("/src/k.py":6:12)
#loc2 = loc("/src/k.py":5:8)
#loc3 = loc("/src/k.py":4:8)
"""


def test_ir_reader_counts_the_copies_of_an_unrolled_branch():
    from ascend_lint.lowering import ir_facts

    lowered = ir_facts.parse(UNROLLED, "/src/k.py")
    assert lowered.branch_copies == {5: 2}  # padding ifs are not the kernel's branches
    assert not [f for f in lowered.facts if f.kind == "runtime-branch-in-loop"]


STATIC_BRANCH = """import triton
import triton.language as tl


@triton.jit
def k(x, n, TILES: tl.constexpr):
    pid = tl.program_id(0)
    for t in tl.static_range(TILES):
        if pid * TILES + t < n:
            tl.store(x + t, 1.0)
"""


def test_a_static_range_branch_is_unverifiable_without_copies_never_contradicted(tmp_path):
    from ascend_lint.pytest_plugin import confirm

    path = tmp_path / "k.py"
    path.write_text(STATIC_BRANCH)
    spec = {
        "status": "ok",
        "file": str(path),
        "kernel": "k",
        "key": "k[fp32]",
        "def_line": 6,
        "last_line": 10,
        "ir": {"facts": [], "lines_seen": [7, 9, 10], "branch_copies": {}},
    }
    [verdict] = confirm.judge([spec])[0]
    assert verdict["code"] == "ASC003" and verdict["unrolled_loop"]
    assert verdict["status"] == "unverifiable" and verdict["contradicted_by"] == []
    spec["ir"]["branch_copies"] = {"9": 4}
    [verdict] = confirm.judge([spec])[0]
    assert verdict["status"] == "confirmed"


def test_an_autotuner_made_without_a_driver_runs_each_config_once(monkeypatch):
    from ascend_lint.cpu_device import autotune

    class Autotuner:
        def __init__(self, fn, configs, do_bench=None):
            self.do_bench = do_bench

    fake = type("module", (), {"Autotuner": Autotuner, "Config": dict})
    monkeypatch.setattr(autotune, "_interpreter_accepts_config_options", lambda config: None)
    autotune._patch(fake)
    autotune._patch(fake)  # once only
    monkeypatch.setattr(autotune, "_driver_available", lambda: False)
    assert Autotuner(None, []).do_bench is autotune.run_each_config_once
    mine = object()
    assert Autotuner(None, [], do_bench=mine).do_bench is mine  # the user's own stays
    monkeypatch.setattr(autotune, "_driver_available", lambda: True)
    assert Autotuner(None, []).do_bench is None  # a device: triton's own benchmarker

    calls = []
    timings = [autotune.run_each_config_once(lambda: calls.append(1), quantiles=(0.5, 0.2, 0.8))]
    assert calls == [1] and timings == [[0.0, 0.0, 0.0]]


HELPER_ERROR = """import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # as a kernel test module may do itself

import triton
import triton.language as tl


@triton.jit
def _square(v):
    return tl.dot(v, v)


@triton.jit
def _twice(v):
    return v * 2.0


@triton.jit
def good(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, _twice(tl.load(x + offs)))


@triton.jit
def bad(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(x + offs, _square(v))
"""


@needs_kernel_deps
def test_helpers_compile_and_a_helpers_error_is_reported_where_it_happened(tmp_path):
    """A module that turns the interpreter on itself still gets real @triton.jit helpers
    in the worker; an error inside a helper names the helper's line, then the call."""
    from ascend_lint.lowering.client import WorkerClient

    path = tmp_path / "helper_kernels.py"
    path.write_text(HELPER_ERROR)
    client = WorkerClient(timeout_s=120, cwd=str(tmp_path))
    request = {
        "module": "helper_kernels",
        "file": str(path),
        "sys_path": [str(tmp_path)],
        "args": [{"tensor": "float32", "address": 4096}],
        "kwargs": {"BLOCK": 16},
        "grid": [1, 1, 1],
    }
    try:
        good = client.compile({**request, "qualname": "good"})
        bad = client.compile({**request, "qualname": "bad"})
    finally:
        client.close()
    assert good["ok"], good
    assert not bad["ok"] and bad["stage"] == "ttir"
    first, source, call = bad["error"].splitlines()
    dot = _line_of(path, "return tl.dot(v, v)")
    assert first.startswith(f'loc("{path}":{dot}:') and "AssertionError: Both inputs" in first
    assert source.strip() == "return tl.dot(v, v)"
    assert call.startswith(f'  called from loc("{path}":{_line_of(path, "_square(v))")}:')
