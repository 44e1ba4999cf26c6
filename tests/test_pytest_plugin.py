"""pytest --ascend-compile, run on small test projects with pytest's pytester.

tests/fixtures/compile_project: kernels that pass under the interpreter, three of them
rejected by the Ascend front end (a pointer chosen with tl.where, a runtime `if` in a
loop building different pointers, a grid over 65,535 programs), and clean ones.
tests/fixtures/compile_examples: drives examples/gpu_habits and reference_kernels with
small inputs, for the IR confirmation of static findings.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lint.lowering import ir_facts

pytest_plugins = ("pytester",)

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
HAVE_KERNEL_DEPS = all(importlib.util.find_spec(m) for m in ("triton", "torch"))
needs_kernel_deps = pytest.mark.skipif(
    not HAVE_KERNEL_DEPS,
    reason="--ascend-compile needs torch and triton-ascend (pip install -e '.[kernels]')",
)
QUIET = ("-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning")
REJECTED = {
    "check_rejected.py::test_pointer_chosen_with_where",
    "check_rejected.py::test_runtime_if_in_loop_builds_two_pointers",
    "check_rejected.py::test_grid_over_65535_programs",
    "check_rejected.py::test_same_rejected_specialisation_launched_again",
}


def _copy_project(name: str, dest: Path) -> None:
    for path in (FIXTURES / name).iterdir():
        if path.is_file():
            shutil.copy(path, dest / path.name)


def _line_of(path: Path, needle: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def _failed_tests(result) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^FAILED (\S+)", result.stdout.str(), re.MULTILINE)}


@needs_kernel_deps
def test_strict_fails_exactly_the_tests_that_launch_rejected_kernels(pytester):
    _copy_project("compile_project", pytester.path)
    kernels = pytester.path / "kernels.py"
    result = pytester.runpytest_subprocess(
        "--ascend-compile=strict", "--ascend-compile-report=report.json", *QUIET
    )
    result.assert_outcomes(passed=5, failed=4)
    assert _failed_tests(result) == REJECTED
    out = result.stdout.str()

    where_line = _line_of(kernels, "tl.where(offs < split, a + offs, b + offs)")
    branch_lines = {
        _line_of(kernels, "if i < switch_at:"),
        _line_of(kernels, "src = a + offs"),
        _line_of(kernels, "src = b + offs"),
    }
    launch_line = _line_of(kernels, "mark_last_program_kernel[(n_programs,)]")
    assert f"kernels.py:{where_line}: pick_source_kernel (ttadapter)" in out
    assert "a pointer chosen at run time" in out
    assert re.search(
        r"kernels\.py:(\d+): switch_source_in_loop_kernel \(ttadapter\): "
        r"encountered AddPtrOp produced by unsupported operation",
        out,
    )
    branch_at = int(re.search(r"kernels\.py:(\d+): switch_source_in_loop_kernel", out).group(1))
    assert branch_at in branch_lines
    assert f"kernels.py:{launch_line}: mark_last_program_kernel (launch)" in out
    assert "grid should be less than 65536" in out

    report = json.loads((pytester.path / "report.json").read_text())
    assert report["mode"] == "strict" and report["summary"]["rejected"] == 3
    rejected = {s["kernel"]: s for s in report["specialisations"] if s["status"] == "rejected"}
    assert set(rejected) == {
        "pick_source_kernel",
        "switch_source_in_loop_kernel",
        "mark_last_program_kernel",
    }
    assert rejected["pick_source_kernel"]["location"]["line"] == where_line
    assert rejected["mark_last_program_kernel"]["location"]["line"] == launch_line
    assert rejected["mark_last_program_kernel"]["tests"] == [
        "check_rejected.py::test_grid_over_65535_programs"
    ]
    assert sorted(rejected["pick_source_kernel"]["tests"]) == [
        "check_rejected.py::test_pointer_chosen_with_where",
        "check_rejected.py::test_same_rejected_specialisation_launched_again",
    ]
    clean = [s for s in report["specialisations"] if s["status"] == "ok"]
    # the same kernel with a small grid compiles; the constexpr branch gives two
    assert {s["kernel"] for s in clean} >= {
        "add_kernel",
        "scale_rows_kernel",
        "mark_last_program_kernel",
    }
    assert len([s for s in clean if s["kernel"] == "scale_rows_kernel"]) == 2
    assert len([s for s in clean if s["kernel"] == "add_kernel"]) == 2  # fp32 and fp16
    assert report["summary"]["worker_restarts"] == 0  # adapter aborts stay in its process
    [local] = [s for s in report["specialisations"] if s["status"] == "not-compiled"]
    assert local["kernel"].endswith("<locals>.fill_kernel")
    assert "defined inside a function" in local["message"]
    assert "fill_kernel: not compiled" in out


GRID_MISSES_WORK = {
    "check_grids.py::test_second_axis_missing_from_the_grid",
    "check_grids.py::test_core_grid_without_task_loop",
    "check_grids.py::test_unbounded_task_index",
}


@needs_kernel_deps
def test_strict_fails_the_tests_whose_launch_grid_misses_work(pytester):
    """The grid each launch used against the lowered kernel's program ids: a missing
    axis, more tiles than programs with no task loop, an unbounded task index."""
    _copy_project("grid_project", pytester.path)
    kernels = pytester.path / "kernels.py"
    result = pytester.runpytest_subprocess(
        "--ascend-compile=strict", "--ascend-compile-report=report.json", *QUIET
    )
    # each wrong launch fails its test; the marked test that shows the defect on purpose
    # passes, and the marked one whose grid covers the work fails for want of a finding
    assert _failed_tests(result) == GRID_MISSES_WORK | {
        "check_grids.py::test_marked_but_the_grid_covers_the_work"
    }
    result.assert_outcomes(passed=6, failed=4)
    out = result.stdout.str()
    axis_1 = _line_of(kernels, "pid_n = tl.program_id(1)")
    mask = _line_of(kernels, "mask = offs < n")
    task_loop = _line_of(kernels, "for i in range(tl.cdiv(n_rows, nprog)):")
    launches = {
        "missing-axis": _line_of(kernels, "tile_2d_kernel[(triton.cdiv(M, 4),)]"),
        "tiles-beyond-grid": _line_of(kernels, "one_tile_kernel[(num_cores,)]"),
        "unbounded-task-index": _line_of(kernels, "unbounded_task_kernel[(num_cores,)]"),
    }
    assert (
        f"kernels.py:{launches['missing-axis']}: tile_2d_kernel (grid): the grid (2,) has "
        f"1 axis but the kernel reads tl.program_id(1) (line {axis_1})" in out
    )
    assert (
        f"kernels.py:{launches['tiles-beyond-grid']}: one_tile_kernel (grid): axis 0 of the "
        f"grid (3,) has 3 programs but the kernel's masks admit 7 tiles (n=100, line {mask})" in out
    )
    assert f"the task loop (line {task_loop}) never checks row against n_rows=7" in out

    report = json.loads((pytester.path / "report.json").read_text())
    found = report["grid_coverage"]
    assert report["summary"]["grid_findings"] == len(found) == 4
    by_test = {t: f for f in found for t in f["tests"]}
    assert set(by_test) == GRID_MISSES_WORK | {
        "check_grids.py::test_marked_launch_that_misses_work"
    }
    missing = by_test["check_grids.py::test_second_axis_missing_from_the_grid"]
    assert (missing["check"], missing["axis"], missing["grid"], missing["kernel_line"]) == (
        "missing-axis",
        1,
        [2],
        axis_1,
    )
    for check, line in launches.items():
        assert any(f["check"] == check and f["launch_site"]["line"] == line for f in found), check
    # the covering launches of the same kernels are not findings
    assert not {f["check"] for f in found if f["grid"] == [2, 4]}


@needs_kernel_deps
def test_report_mode_under_xdist_fails_nothing_and_merges_the_nodes(pytester):
    pytest.importorskip("xdist")
    _copy_project("compile_project", pytester.path)
    result = pytester.runpytest_subprocess(
        "-n", "2", "--ascend-compile", "--ascend-compile-report=report.json", *QUIET
    )
    result.assert_outcomes(passed=9)
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["mode"] == "report"
    rejected = [s for s in report["specialisations"] if s["status"] == "rejected"]
    assert {t for s in rejected for t in s["tests"]} == REJECTED
    assert "3 rejected" in result.stdout.str()


@needs_kernel_deps
def test_ir_confirms_the_gpu_habits_and_finds_nothing_in_the_reference_kernels(
    pytester, monkeypatch
):
    _copy_project("compile_examples", pytester.path)
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))
    result = pytester.runpytest_subprocess(
        "--ascend-compile=strict", "--ascend-compile-report=report.json", *QUIET
    )
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / "report.json").read_text())
    habits = str(REPO_ROOT / "examples" / "gpu_habits" / "chunk_o.py")
    verdicts = [v for v in report["ir_confirmation"] if v["file"] == habits]
    strided = [v for v in verdicts if v["code"] == "ASC001"]
    # every gate load / dg store the rule flags is a strided DMA in the IR
    assert len(strided) >= 4 and all(v["status"] == "confirmed" for v in strided), strided
    dv_branch = {v["code"]: v["status"] for v in verdicts if v["code"] in ("ASC003", "ASC005")}
    assert dv_branch == {"ASC003": "confirmed", "ASC005": "confirmed"}
    assert not [f for f in report["ir_only"] if f["file"] == habits]

    reference = [s for s in report["specialisations"] if "reference_kernels" in s["file"]]
    assert {s["kernel"] for s in reference} == {
        "chunk_fwd_kernel_o",
        "chunk_bwd_kernel_dv_local",
        "chunk_bwd_kernel_dqkwg",  # dg is fused into it
        "chunk_local_cumsum_kernel",
    }
    assert all(s["status"] == "ok" for s in reference)
    assert all(s["ir"]["facts"] == [] for s in reference)
    assert not [v for v in report["ir_confirmation"] if "reference_kernels" in v["file"]]


def test_plugin_is_inert_without_the_option(pytester):
    pytester.makepyfile(
        test_inert="""
        import sys

        def test_nothing_imported(pytestconfig):
            assert pytestconfig.pluginmanager.hasplugin("ascend_compile")
            assert not pytestconfig.pluginmanager.hasplugin("ascend-compile-gate")
            assert "triton" not in sys.modules and "torch" not in sys.modules
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "Ascend compile" not in result.stdout.str()


def test_a_path_after_the_bare_option_is_a_usage_error_that_says_why(pytester):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--ascend-compile", "test_x.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "put the paths before --ascend-compile" in result.stderr.str()


def test_unknown_mode_in_config_is_a_usage_error(pytester):
    pytester.makeini("[pytest]\nascend_compile = always\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ascend_compile = 'always'" in result.stderr.str()


@needs_kernel_deps
def test_worker_that_dies_is_reported_and_restarted(tmp_path):
    from ascend_lint.lowering.client import WorkerClient

    (tmp_path / "dies_on_import.py").write_text("import os\nos.abort()\n")
    kernels = FIXTURES / "compile_project" / "kernels.py"
    client = WorkerClient(timeout_s=120, cwd=str(tmp_path))
    try:
        died = client.compile(
            {
                "module": "dies_on_import",
                "qualname": "k",
                "file": str(tmp_path / "dies_on_import.py"),
                "sys_path": [str(tmp_path)],
                "args": [],
                "kwargs": {},
                "grid": [1, 1, 1],
            }
        )
        assert not died["ok"] and died["stage"] == "abort"
        assert "signal 6" in died["error"]
        lowered = client.compile(
            {
                "module": "kernels",
                "qualname": "mark_last_program_kernel",
                "file": str(kernels),
                "sys_path": [str(kernels.parent)],
                "args": [{"tensor": "int32", "address": 4096}, 8],
                "kwargs": {},
                "grid": [8, 1, 1],
            }
        )
        assert lowered["ok"], lowered
        assert client.restarts == 1
    finally:
        client.close()


def test_static_linter_never_imports_the_plugin_machinery():
    code = (
        "import sys, ascend_lint.cli, ascend_lint.pytest_plugin; "
        "bad = [m for m in ('triton', 'torch', 'ascend_lint.pytest_plugin.gate') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ}
    )
    assert out.returncode == 0, out.stdout + out.stderr


# -- the IR reader on its own ------------------------------------------------------------
LOWERED = """\
#loc = loc("/src/k.py":1:0)
module {
  func.func @k(%arg2: memref<?xf32>, %arg3: memref<?xf32>) {
    %rc = memref.reinterpret_cast %arg2 to offset: [%0], sizes: [16], strides: [4] : memref<?xf32> to memref<16xf32, strided<[4], offset: ?>> loc(#loc1)
    %rc1 = memref.reinterpret_cast %arg3 to offset: [%0], sizes: [16, 8], strides: [8, 1] : memref<?xf32> to memref<16x8xf32, strided<[8, 1], offset: ?>> loc(#loc5)
    %alloc = memref.alloc() : memref<16xf32> loc(#loc2)
    scf.if %pad {
      linalg.fill ins(%cst : f32) outs(%alloc : memref<16xf32>) loc(#loc2)
    } {hivm.unlikely_condition} loc(#loc2)
    %sv = memref.subview %rc[0] [%n] [1] : memref<16xf32, strided<[4], offset: ?>> to memref<?xf32, strided<[4], offset: ?>> loc(#loc2)
    memref.copy %sv, %alloc : memref<?xf32, strided<[4], offset: ?>> to memref<?xf32, strided<[1]>> loc(#loc2)
    scf.for %i = %c0 to %c2 step %c1 {
      scf.if %pad2 {
        linalg.fill ins(%cst : f32) outs(%alloc : memref<16xf32>) loc(#loc3)
      } {hivm.unlikely_condition} loc(#loc3)
      %r = scf.if %c -> (tensor<16x8xf32>) {
        memref.copy %rc1, %a2 : memref<16x8xf32, strided<[8, 1], offset: ?>> to memref<16x8xf32> loc(#loc4)
        scf.yield %t : tensor<16x8xf32> loc(#loc4)
      } else {
        memref.copy %rc1, %a3 : memref<16x8xf32, strided<[8, 1], offset: ?>> to memref<16x8xf32> loc(#loc6)
        scf.yield %t : tensor<16x8xf32> loc(#loc6)
      } loc(#loc7)
    } loc(#loc8)
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/src/k.py":5:10)
#loc2 = loc("/src/k.py":6:10)
#loc3 = loc(callsite(#loc9 at #loc10))
#loc4 = loc("/src/k.py":12:12)
#loc5 = loc("/src/k.py":4:10)
#loc6 = loc("/src/k.py":14:12)
#loc7 = loc("/src/k.py":11:8)
#loc8 = loc("/src/k.py":10:4)
#loc9 = loc("/src/helpers.py":3:4)
#loc10 = loc("/src/k.py":9:4)
"""


def test_ir_reader_finds_strided_copies_and_two_path_branches_in_loops():
    lowered = ir_facts.parse(LOWERED, "/src/k.py")
    facts = {(f.kind, f.lines, f.dma_both_sides) for f in lowered.facts}
    assert facts == {
        ("strided-load", (6, 5), False),  # the copy's line, then its view's
        ("runtime-branch-in-loop", (11,), True),  # padding ifs are not branches
    }
    assert {4, 5, 6, 9, 10, 11, 12, 14} <= lowered.lines_seen  # callsite: the kernel's frame
    assert 3 not in lowered.lines_seen  # helpers.py:3 is another file's line


HELPER_GATHER = """import triton
import triton.language as tl


@triton.jit
def _row(g, i_t, T, HV: tl.constexpr, BT: tl.constexpr):
    p = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    return tl.load(p, boundary_check=(0,))


@triton.jit
def k(g, o, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    b = _row(g + i_b * T * HV + i_h, i_t, T, HV, BT)
    tl.store(o + i_bh * BT + tl.arange(0, BT), b)


@triton.jit
def other(x):
    tl.store(x, 1.0)
"""


def _spec(path, kernel, def_line, last_line, facts, seen):
    return {
        "status": "ok",
        "file": str(path),
        "kernel": kernel,
        "key": f"{kernel}[fp32]",
        "def_line": def_line,
        "last_line": last_line,
        "ir": {"facts": facts, "lines_seen": seen},
    }


def test_a_finding_in_a_helper_is_judged_by_the_kernels_that_inline_it(tmp_path):
    """The compiler inlines `_row` into `k`, so `k`'s IR carries the helper's lines: the
    helper's ASC001 is confirmed there (not left unjudged while the IR fact is listed as
    unpredicted), and `other`, which never calls the helper, does not contradict it."""
    from ascend_lint.pytest_plugin import confirm

    path = tmp_path / "helper_gather.py"
    path.write_text(HELPER_GATHER)
    strided = {"kind": "strided-load", "lines": [8, 7], "detail": "memref.copy"}
    specs = [
        _spec(path, "k", 11, 16, [strided], [7, 8, 13, 14, 15, 16]),
        _spec(path, "other", 19, 21, [], [21]),
    ]
    verdicts, ir_only = confirm.judge(specs)
    [helper] = [v for v in verdicts if v["code"] == "ASC001" and v["line"] == 7]
    assert helper["status"] == "confirmed" and helper["kernel"] == "k"
    assert helper["specialisations"] == 1
    assert ir_only == []


def test_ttir_reader_finds_program_id_axes_and_task_loops():
    from ascend_lint.lowering.grid_use import grid_use

    kernel = "/src/k.py"
    one_tile = f"""module {{
  tt.func public @k(%arg0: !tt.ptr<f32>, %arg1: i32) {{
    %c4_i32 = arith.constant 4 : i32 loc(#loc1)
    %0 = tt.get_program_id x : i32 loc(#loc2)
    %1 = tt.get_program_id y : i32 loc(#loc3)
    %2 = arith.muli %0, %c4_i32 : i32 loc(#loc4)
    tt.return loc(#loc)
  }} loc(#loc)
}} loc(#loc)
#loc = loc("{kernel}":3:0)
#loc1 = loc(unknown)
#loc2 = loc("{kernel}":4:10)
#loc3 = loc("{kernel}":5:10)
#loc4 = loc("{kernel}":6:10)
"""
    assert grid_use(one_tile, kernel) == {
        "program_id_axes": {"0": 4, "1": 5},
        "reads_num_programs": False,
        "loops_over_programs": False,
    }
    task_loop = f"""module {{
  tt.func public @k(%arg0: !tt.ptr<f32>, %arg1: i32) {{
    %c1_i32 = arith.constant 1 : i32 loc(#loc1)
    %0 = tt.get_program_id x : i32 loc(#loc2)
    %1 = tt.get_num_programs x : i32 loc(#loc3)
    %2 = arith.addi %arg1, %c1_i32 : i32 loc(#loc3)
    %3:2 = scf.for %arg2 = %0 to %2 step %1 iter_args(%a = %c1_i32, %b = %c1_i32) -> (i32, i32)  : i32 {{
      scf.yield %a, %b : i32, i32 loc(#loc3)
    }} loc(#loc3)
    tt.return loc(#loc)
  }} loc(#loc)
}} loc(#loc)
#loc = loc("{kernel}":3:0)
#loc1 = loc(unknown)
#loc2 = loc("{kernel}":4:10)
#loc3 = loc("{kernel}":7:5)
"""
    found = grid_use(task_loop, kernel)
    assert found["program_id_axes"] == {"0": 4}
    assert found["reads_num_programs"] and found["loops_over_programs"]
