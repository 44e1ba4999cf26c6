"""Core-count grids for Triton-Ascend: how many programs a 1-D core-grid launch uses.

An Ascend NPU has few, large cores (on a 910B: 24 AI cores, each with one cube unit
and two vector units, so 48 vector cores).  A kernel launched on one program per
core, with a task loop inside (``for task in range(tl.program_id(0), n_tasks,
tl.num_programs(0))``), runs in one round; a problem-sized grid runs in many, and a
grid over 65,535 programs is rejected by triton-ascend 3.2.

Which count to use:

* :func:`num_ai_cores` for kernels with ``tl.dot`` (they run on the cube units);
* :func:`num_vector_cores` for vector-only kernels.

Where the counts come from, first match wins:

1. the environment variables ``ASCEND_LINT_AI_CORES`` / ``ASCEND_LINT_VECTOR_CORES``
   (a positive integer): to use part of a device, to exercise the task loops with few
   programs in tests, or to give the count of resident programs on a machine that has
   no NPU (the GPU benchmark in ``benchmarks/bench_kernels.py`` does this);
2. triton's active driver, when it is the NPU one: ``num_aicore`` / ``num_vectorcore``
   from ``driver.active.utils.get_device_properties(device_index)``;
3. the counts of an Ascend 910B, :data:`DEFAULT_AI_CORES` and
   :data:`DEFAULT_VECTOR_CORES` (the interpreter and other non-NPU drivers).

The device is the one that holds the kernel's input tensor; no CUDA API is used.
"""

from __future__ import annotations

import functools
import os

import torch
import triton

__all__ = [
    "AI_CORES_ENV",
    "DEFAULT_AI_CORES",
    "DEFAULT_VECTOR_CORES",
    "VECTOR_CORES_ENV",
    "num_ai_cores",
    "num_vector_cores",
]

#: AI (cube) cores of an Ascend 910B, used when no NPU driver is active.
DEFAULT_AI_CORES = 24
#: Vector cores of an Ascend 910B (two per AI core), used when no NPU driver is active.
DEFAULT_VECTOR_CORES = 48
AI_CORES_ENV = "ASCEND_LINT_AI_CORES"
VECTOR_CORES_ENV = "ASCEND_LINT_VECTOR_CORES"


def _count_from_env(name: str) -> int | None:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{name}={raw!r}: expected a positive integer core count")
    return count


@functools.cache
def _npu_properties(device_index: int | None) -> tuple[int, int] | None:
    """(num_aicore, num_vectorcore) from triton's active driver if it is the NPU one."""
    try:
        driver = triton.runtime.driver.active
        if driver.get_current_target().backend != "npu":
            return None
        index = driver.get_current_device() if device_index is None else device_index
        props = driver.utils.get_device_properties(index)
        return int(props["num_aicore"]), int(props["num_vectorcore"])
    except Exception:
        # No active driver (interpreter, CPU-only machine) or one without these keys.
        return None


def _device_index(device: torch.device | torch.Tensor | int | None) -> int | None:
    if isinstance(device, torch.Tensor):
        device = device.device
    if isinstance(device, torch.device):
        return device.index
    return device


def num_ai_cores(device: torch.device | torch.Tensor | int | None = None) -> int:
    """AI-core count of ``device`` (a tensor, a device or an index): the grid of a
    core-grid kernel that uses ``tl.dot``."""
    count = _count_from_env(AI_CORES_ENV)
    if count is not None:
        return count
    props = _npu_properties(_device_index(device))
    return DEFAULT_AI_CORES if props is None else props[0]


def num_vector_cores(device: torch.device | torch.Tensor | int | None = None) -> int:
    """Vector-core count of ``device``: the grid of a vector-only core-grid kernel."""
    count = _count_from_env(VECTOR_CORES_ENV)
    if count is not None:
        return count
    props = _npu_properties(_device_index(device))
    return DEFAULT_VECTOR_CORES if props is None else props[1]
