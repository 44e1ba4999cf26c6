"""Kernel tests: run the Triton kernels on CPU through the triton-ascend interpreter.

TRITON_INTERPRET must be set before triton (or any module defining @triton.jit
kernels) is imported, so it is set here, at the top of the first file pytest loads
in this directory.  Without torch or triton every test here is skipped with the
reason (see test_kernel_deps.py).
"""

import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"

_HERE = Path(__file__).resolve().parent
for _p in (str(_HERE.parents[1]), str(_HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from _kernel_env import MISSING  # noqa: E402  (the path and env must be set first)


def pytest_ignore_collect(collection_path, config):
    # The kernel test modules import torch at module level.  Without it they are not
    # collected at all; test_kernel_deps.py stays and reports the skip reason.
    if MISSING and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return collection_path.name != "test_kernel_deps.py"
    return None


if not MISSING:
    # triton-ascend 3.2's interpreter lacks ops Ascend kernels use (`tl.gather` among
    # them: the corrected gathers in reference_kernels/row_ops.py need it); the CPU
    # stand-in's fills give them the NPU's semantics.
    from ascend_lint.cpu_device import interpreter_gaps

    interpreter_gaps.install()
