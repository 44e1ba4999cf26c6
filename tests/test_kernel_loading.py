"""Loading a kernel from its file when its module does not import on this machine
(`ascend_lint/lowering/kernel_loading.py`), and `ascend-lint compile` on such a kernel."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lint.lowering.kernel_loading import LoadError, Replaced, load_from_source, load_kernel

FIXTURE = Path(__file__).parent / "fixtures" / "load_package"
NORM = FIXTURE / "heavy_pkg" / "ops" / "norm.py"
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None, reason="needs triton-ascend"
)


def test_a_kernel_of_a_package_that_does_not_import_is_loaded_from_its_source():
    loaded = load_kernel(str(NORM), "scale_kernel")
    assert loaded.from_source
    assert loaded.replaced == [
        "missing_tensor_library",
        "missing_wrapper.triton_utils",
        "missing_wrapper.profiling",
        "another_missing_library",
    ]
    import triton

    module = loaded.module
    assert module.triton is triton  # the wrapper's re-export of triton is triton
    assert module.twice.fn.__module__ == "heavy_pkg.ops.common"  # the sibling's own helper
    assert module.WIDTH.value == 64
    assert isinstance(module.DEVICE_CORES, Replaced)
    assert module.scale.__name__ == "scale"  # a decorator from a missing library keeps it
    assert type(loaded.kernel).__name__ in ("JITFunction", "InterpretedFunction")


def test_a_kernel_that_reads_a_stand_in_is_refused_with_the_import_behind_it():
    with pytest.raises(LoadError) as raised:
        load_from_source(str(NORM), "cores_kernel")
    message = str(raised.value)
    assert "cores_kernel reads `DEVICE_CORES`" in message
    assert "another_missing_library" in message


WRAPPED = FIXTURE / "heavy_pkg" / "ops" / "wrapped.py"


def test_a_stand_in_decorator_over_a_jit_function_keeps_it_for_the_autotuner():
    # `@entry_cache()` from a missing library once returned a stand-in for the jit
    # function, and triton.autotune's walk down `.fn` never reached a function
    loaded = load_from_source(str(WRAPPED), "tuned_kernel")
    assert type(loaded.kernel).__name__ == "Autotuner"
    assert type(loaded.kernel.fn).__name__ in ("JITFunction", "InterpretedFunction")


def test_a_decorator_that_fails_here_is_left_out_and_said_so():
    loaded = load_from_source(str(WRAPPED), "cached_kernel")
    assert type(loaded.kernel).__name__ in ("JITFunction", "InterpretedFunction")
    assert any("decorator left out: RuntimeError: no NPU" in s for s in loaded.skipped)


def test_a_failing_submodule_import_leaves_its_package_bound():
    loaded = load_from_source(str(WRAPPED), "late_kernel")
    assert type(loaded.kernel).__name__ in ("JITFunction", "InterpretedFunction")
    assert "triton.backends.no_such_backend.runtime" in loaded.replaced
    assert "triton" not in loaded.replaced


def test_a_name_the_file_does_not_define_says_what_stopped_it():
    with pytest.raises(LoadError, match="defines no no_such_kernel"):
        load_from_source(str(NORM), "no_such_kernel")


def run_compile(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ascend_lint", "compile", *args],
        capture_output=True,
        text=True,
        cwd=FIXTURE,
        timeout=600,
    )


def test_compile_lowers_it_and_names_what_was_stood_in():
    done = run_compile(f"{NORM}::scale_kernel", "--constexpr", "BLOCK=256")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "loaded from its source: its module does not import here" in out
    assert (
        "stood in for: missing_tensor_library, missing_wrapper.triton_utils, "
        "missing_wrapper.profiling"
    ) in out
    assert "UB fits" in out
