"""pytest --ascend-sanitize, run on a small test project with pytest's pytester.

tests/fixtures/sanitize_project: one kernel per finding kind (a look-back read before
the tensor, a masked ``-1`` slot, programs sharing one workspace), a clean kernel with an
ordinary tail mask, one whose overlapping tiles store some elements twice with the same
bytes (counted, not a finding), a test that makes a finding on purpose (marked) and a
kernel that fails in the interpreter part-way through.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

FIXTURE = Path(__file__).parent / "fixtures" / "sanitize_project"
HAVE_KERNEL_DEPS = all(importlib.util.find_spec(m) for m in ("triton", "torch"))
pytestmark = pytest.mark.skipif(
    not HAVE_KERNEL_DEPS,
    reason="--ascend-sanitize needs torch and triton-ascend (pip install -e '.[kernels]')",
)
QUIET = ("-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning")
DEFECTIVE = {
    "test_kernels.py::test_shift_right",
    "test_kernels.py::test_gather",
    "test_kernels.py::test_shared_sum",
}


@pytest.fixture
def project(pytester):
    for path in FIXTURE.iterdir():
        if path.is_file():
            shutil.copy(path, pytester.path / path.name)
    return pytester


def line_of(needle: str) -> int:
    lines = (FIXTURE / "kernels.py").read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if needle in text)


def failed(result) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^FAILED (\S+)", result.stdout.str(), re.MULTILINE)}


def test_report_mode_lists_each_finding_once_and_fails_nothing(project):
    result = project.runpytest_subprocess(
        "--ascend-sanitize", "--ascend-compile-report=r.json", *QUIET
    )
    # the failing kernel's own test fails with the interpreter's error, nothing else
    assert failed(result) == {"test_kernels.py::test_failing_kernel"}
    out = result.stdout.str()
    assert "= Ascend sanitize =" in out
    look_back = line_of("prev = tl.load(x + o - 1")
    assert re.search(
        rf"^kernels.py:{look_back}: out-of-bounds: load of x \(float32\[10\]\) in "
        r"shift_right_kernel: 1 lane outside the storage, first at 1 element before its "
        r"storage start$",
        out,
        re.MULTILINE,
    )
    assert f"kernels.py:{line_of('tl.load(table + i')}: masked-out-of-bounds: load of table" in out
    assert f"kernels.py:{line_of('tl.store(ws + cols')}: race: store of ws (float32[8])" in out
    assert (
        "launched by: test_kernels.py::test_shift_right, test_kernels.py::test_shift_right_on_purpose (accepted by its marker)"
        in out
    )
    # the finding made before the kernel failed is kept; the tail mask stays silent
    assert f"kernels.py:{line_of('tl.load(x + o - 1, mask=o < n)')}: out-of-bounds" in out
    assert "scale_kernel" not in out.split("= Ascend sanitize =")[1]
    # the same bytes stored twice: counted on the summary line and listed, not a finding
    assert re.search(
        r"checked \(.*\): 4 findings \(.*\); 8 lanes stored twice with the same bytes$",
        out,
        re.MULTILINE,
    )
    overlap = line_of("tl.store(y + o, tl.load(x + o, mask=o < n), mask=o < n)")
    assert (
        f"kernels.py:{overlap}: 8 lanes of stores to y in overlap_copy_kernel stored twice with "
        "the same bytes by programs of one launch (duplicate work, not a finding)"
    ) in out

    report = json.loads((project.path / "r.json").read_text())
    assert set(report) == {"version", "sanitizer", "sanitizer_summary"}
    by_kind = {(f["kind"], f["kernel"]): f for f in report["sanitizer"]}
    assert set(by_kind) == {
        ("out-of-bounds", "shift_right_kernel"),
        ("masked-out-of-bounds", "gather_kernel"),
        ("race", "shared_sum_kernel"),
        ("out-of-bounds", "failing_kernel"),
    }
    race = by_kind["race", "shared_sum_kernel"]
    assert race["path"].endswith("kernels.py") and race["line"] == line_of("tl.store(ws + cols")
    assert (race["tensor"], race["shape"], race["dtype"]) == ("ws", [8], "float32")
    assert race["program"] == [1, 0, 0] and race["other_program"] == [0, 0, 0]
    assert race["element_offset"] == 0 and race["occurrences"] == 3
    assert race["tests"] == ["test_kernels.py::test_shared_sum"]
    gathered = by_kind["masked-out-of-bounds", "gather_kernel"]
    assert gathered["element_offset"] == -1 and gathered["lanes"] == 2
    shifted = by_kind["out-of-bounds", "shift_right_kernel"]
    assert shifted["allowed_by"] == ["test_kernels.py::test_shift_right_on_purpose"]
    assert shifted["allowed"] is False  # test_shift_right makes it too, unmarked
    summary = report["sanitizer_summary"]
    assert (summary["mode"], summary["findings"], summary["race"]) == ("report", 4, 1)
    assert summary["launches"] == 10 and summary["kernels"] == 6
    assert summary["duplicate_store_lanes"] == 8
    (twice,) = summary["duplicate_stores"]
    assert (twice["kernel"], twice["tensor"], twice["line"]) == (
        "overlap_copy_kernel",
        "y",
        overlap,
    )
    assert (twice["lanes"], twice["occurrences"]) == (8, 2)
    assert twice["tests"] == ["test_kernels.py::test_overlap_copy"]


def test_strict_fails_exactly_the_tests_that_launch_a_defect(project):
    result = project.runpytest_subprocess("--ascend-sanitize=strict", *QUIET)
    assert failed(result) == DEFECTIVE | {"test_kernels.py::test_failing_kernel"}
    out = result.stdout.str()
    assert "a kernel touched memory it does not own (--ascend-sanitize=strict)" in out
    # the marked test passes; so do the clean ones and the one that only stores twice
    result.assert_outcomes(passed=6, failed=4)
    assert "8 lanes stored twice with the same bytes" in out


def test_ini_strict_with_the_compile_gate_and_xdist_writes_one_report(project):
    project.makeini("[pytest]\nascend_sanitize = strict\n")
    result = project.runpytest_subprocess(
        "--ascend-compile", "--ascend-compile-report=r.json", "-n", "2", *QUIET
    )
    assert failed(result) == DEFECTIVE | {"test_kernels.py::test_failing_kernel"}
    out = result.stdout.str()
    assert "= Ascend compile =" in out and "= Ascend sanitize =" in out
    report = json.loads((project.path / "r.json").read_text())
    assert report["specialisations"] and report["sanitizer_summary"]["mode"] == "strict"
    assert {f["kind"] for f in report["sanitizer"]} == {
        "out-of-bounds",
        "masked-out-of-bounds",
        "race",
    }
    # the workers' findings are merged: one entry per (kind, kernel, line, tensor)
    keys = [(f["kind"], f["kernel"], f["line"], f["tensor"]) for f in report["sanitizer"]]
    assert len(keys) == len(set(keys)) == 4
    (twice,) = report["sanitizer_summary"]["duplicate_stores"]
    assert twice["lanes"] == report["sanitizer_summary"]["duplicate_store_lanes"] == 8


def test_a_marker_with_an_unknown_kind_is_a_usage_error(project):
    project.makepyfile(
        test_marker="""
        import pytest

        @pytest.mark.ascend_sanitize_allow(kind="out-of-bound")
        def test_x():
            pass
        """
    )
    result = project.runpytest_subprocess("test_marker.py", "--ascend-sanitize", *QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ascend_sanitize_allow(kind='out-of-bound')" in result.stderr.str()
    assert "out-of-bounds, masked-out-of-bounds, race" in result.stderr.str()


def test_a_run_that_launches_nothing_says_so(project):
    project.makepyfile(test_nothing="def test_x():\n    pass\n")
    result = project.runpytest_subprocess("test_nothing.py", "--ascend-sanitize", *QUIET)
    result.assert_outcomes(passed=1)
    assert "0 launches checked" in result.stdout.str()


def test_without_the_option_the_plugin_is_inert(project):
    result = project.runpytest_subprocess(*QUIET)
    assert failed(result) == {"test_kernels.py::test_failing_kernel"}
    assert "Ascend sanitize" not in result.stdout.str()


def test_a_bad_ini_mode_is_a_usage_error(project):
    project.makeini("[pytest]\nascend_sanitize = loud\n")
    result = project.runpytest_subprocess(*QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ascend_sanitize = 'loud'" in result.stderr.str()


# -- the README's walk: an NPU-native suite on a CPU, compiled and sanitized -------------
EXAMPLE = Path(__file__).parents[1] / "examples" / "npu_suite"
README = Path(__file__).parents[1] / "README.md"
WALK = ("--ascend-cpu-device", "--ascend-compile=strict", "--ascend-sanitize=strict")


def readme_block(fence: str, needle: str) -> str:
    blocks = re.findall(rf"^```{fence}\n(.*?)^```", README.read_text(), re.S | re.M)
    return next(b for b in blocks if needle in b)


def assert_shown_lines_in(block: str, out: str) -> None:
    """Every line the README shows is a line of the run's output (rules, timings and the
    elisions aside). A shown line that ends in "..." is pytest's summary cut to the
    terminal's width; pytest does not cut it where the CI variable is set, so it matches
    any output line that starts with what it shows."""
    lines = out.splitlines()
    for line in block.splitlines():
        if not line or line == "..." or line.startswith(("===", "___")):
            continue
        if line.endswith("..."):
            assert any(shown.startswith(line[:-3]) for shown in lines), line
        else:
            assert line in lines, line


def test_the_readme_walk_on_the_npu_suite_example(pytester):
    for path in EXAMPLE.iterdir():
        if path.is_file():
            shutil.copy(path, pytester.path / path.name)
    result = pytester.runpytest_subprocess(*WALK, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    assert_shown_lines_in(readme_block("text", "seq_lengths_kernel: 1 lane"), result.stdout.str())

    # the fix the README gives, applied to the kernel
    diff = readme_block("diff", "cu_ends").splitlines()
    (before,) = [line[1:] for line in diff if line.startswith("-")]
    (after,) = [line[1:] for line in diff if line.startswith("+")]
    kernels = pytester.path / "kernels.py"
    assert kernels.read_text().count(before + "\n") == 1
    kernels.write_text(kernels.read_text().replace(before + "\n", after + "\n"))
    fixed = pytester.runpytest_subprocess(*WALK, "-p", "no:cacheprovider")
    fixed.assert_outcomes(passed=2)
    assert_shown_lines_in(readme_block("text", "0 findings"), fixed.stdout.str())
