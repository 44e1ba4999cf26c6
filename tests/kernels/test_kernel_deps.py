"""Always collected: reports (as a skip) why the kernel tests did not run."""

import subprocess
import sys

import pytest
from _kernel_env import MISSING, REPO_ROOT, SKIP_REASON

needs_kernels = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)


@needs_kernels
def test_kernel_dependencies_present():
    """Skipped, with the missing packages named, when the kernel tests cannot run."""


def test_package_imports_without_torch_or_triton():
    # `import reference_kernels` must stay cheap: the linter imports it to find the
    # kernel sources on machines without torch / triton.
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['triton'] = None; "
        "import reference_kernels; print(reference_kernels.KERNEL_DIR)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def test_reference_sources_carry_no_gpu_knobs_or_suppressions():
    for path in sorted((REPO_ROOT / "reference_kernels").glob("*.py")):
        text = path.read_text()
        for needle in ("num_warps", "num_stages", "num_ctas", "maxnreg", "autotune", "noqa"):
            assert needle not in text, f"{path.name} mentions {needle!r}"


@pytest.mark.parametrize("missing", ["torch", "triton"])
def test_kernel_module_without_its_dependencies_names_the_extra(missing):
    code = (
        f"import sys; sys.modules[{missing!r}] = None\n"
        "try:\n"
        "    import reference_kernels.chunk_o\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert f"needs `{missing}`" in out.stdout
    assert 'pip install "ascend-lint[kernels]"' in out.stdout


def test_kernel_modules_are_every_module_of_the_folder():
    import reference_kernels

    on_disk = sorted(
        p.name
        for p in (REPO_ROOT / "reference_kernels").glob("*.py")
        if not p.name.startswith("_") and p.name != "torch_reference.py"
    )
    assert list(reference_kernels.KERNEL_MODULES) == on_disk
