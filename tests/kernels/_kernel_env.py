"""Environment facts shared by conftest.py and the kernel tests (no torch import here)."""

import importlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]


def _missing_kernel_deps():
    missing = []
    for name in ("torch", "triton"):
        try:
            importlib.import_module(name)
        except Exception as exc:  # ImportError, or a broken install raising anything else
            missing.append(f"{name} ({type(exc).__name__}: {exc})")
    return missing


MISSING = _missing_kernel_deps()
SKIP_REASON = (
    "kernel tests need torch and triton-ascend (pip install -e '.[kernels]'); not importable: "
    + ", ".join(MISSING)
)
