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
   (a positive integer): an override, to use part of a device or to exercise the task
   loops with few programs in tests;
2. triton's active driver, when it is the NPU one: ``num_aicore`` / ``num_vectorcore``
   from ``driver.active.utils.get_device_properties(device_index)``;
3. triton's active driver, when it is the CUDA one (the same kernels run unchanged on a
   GPU): :data:`PROGRAMS_PER_SM` programs per streaming multiprocessor for both counts.
   A GPU has no AI cores; several resident programs per SM hide memory latency the way
   several resident blocks do.  On an H200 (132 SMs) the reference kernels at 4 programs
   per SM run at 0.78x-1.2x flash-linear-attention's CUDA kernels, while the 910B's 24
   programs left them 4.7x-8.8x slower (https://github.com/ascend-lint/ascend-lint/blob/main/benchmarks/KERNELS_RESULTS.md);
4. the counts of an Ascend 910B, :data:`DEFAULT_AI_CORES` and
   :data:`DEFAULT_VECTOR_CORES` (the interpreter and other drivers).

The device is the one that holds the kernel's input tensor; no CUDA API is used.

:func:`rms_norm_fwd` / :func:`rms_norm_fwd_kernel` show the whole pattern on a
vector kernel: a grid of :func:`num_vector_cores` (capped by the number of row
blocks), a task loop over row blocks in the kernel, the row count a runtime
argument (``do_not_specialize``) so a new token count does not compile again, block
sizes bucketed with ``triton.next_power_of_2`` of the hidden size, fp32
accumulation and plain loads and stores without GPU cache hints.
"""

from __future__ import annotations

import functools
import os

import torch
import triton
import triton.language as tl

__all__ = [
    "AI_CORES_ENV",
    "DEFAULT_AI_CORES",
    "DEFAULT_VECTOR_CORES",
    "PROGRAMS_PER_SM",
    "VECTOR_CORES_ENV",
    "num_ai_cores",
    "num_vector_cores",
    "rms_norm_fwd",
    "rms_norm_fwd_kernel",
]

#: AI (cube) cores of an Ascend 910B, used when no NPU driver is active.
DEFAULT_AI_CORES = 24
#: Vector cores of an Ascend 910B (two per AI core), used when no NPU driver is active.
DEFAULT_VECTOR_CORES = 48
#: Programs per streaming multiprocessor of a core-grid launch on a CUDA GPU (see above).
PROGRAMS_PER_SM = 4
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
def _driver_core_counts(device_index: int | None) -> tuple[int, int] | None:
    """(AI cores, vector cores) of the device triton's active driver runs on: the NPU's
    own counts, or :data:`PROGRAMS_PER_SM` x the SM count of a CUDA GPU for both."""
    try:
        driver = triton.runtime.driver.active
        backend = driver.get_current_target().backend
        index = driver.get_current_device() if device_index is None else device_index
        props = driver.utils.get_device_properties(index)
        if backend == "npu":
            return int(props["num_aicore"]), int(props["num_vectorcore"])
        if backend == "cuda":
            programs = PROGRAMS_PER_SM * int(props["multiprocessor_count"])
            return programs, programs
    except Exception:
        # No active driver (interpreter, CPU-only machine) or one without these keys.
        return None
    return None


def _device_index(device: torch.device | torch.Tensor | int | None) -> int | None:
    if isinstance(device, torch.Tensor):
        device = device.device
    if isinstance(device, torch.device):
        return device.index
    return device


def _core_counts(device: torch.device | torch.Tensor | int | None) -> tuple[int, int] | None:
    return _driver_core_counts(_device_index(device))


def num_ai_cores(device: torch.device | torch.Tensor | int | None = None) -> int:
    """AI-core count of ``device`` (a tensor, a device or an index): the grid of a
    core-grid kernel that uses ``tl.dot``."""
    count = _count_from_env(AI_CORES_ENV)
    if count is not None:
        return count
    counts = _core_counts(device)
    return DEFAULT_AI_CORES if counts is None else counts[0]


def num_vector_cores(device: torch.device | torch.Tensor | int | None = None) -> int:
    """Vector-core count of ``device``: the grid of a vector-only core-grid kernel."""
    count = _count_from_env(VECTOR_CORES_ENV)
    if count is not None:
        return count
    counts = _core_counts(device)
    return DEFAULT_VECTOR_CORES if counts is None else counts[1]


# ---------------------------------------------------------------------------
# RMSNorm forward on the vector-core grid
# ---------------------------------------------------------------------------
#: fp32 elements of one [BM, BN] row tile: 32 KiB, a sixth of a 910B vector core's UB.
TILE_ELEMENTS = 8192
#: Widest column block; rows wider than this are normalised in two passes.
MAX_BLOCK_N = 4096


@triton.jit(do_not_specialize=["n_rows"])
def rms_norm_fwd_kernel(
    x,
    weight,
    y,
    n_rows,
    eps,
    N: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    ONE_PASS: tl.constexpr,
):
    """``y = x * rsqrt(mean(x**2) + eps) * weight`` over rows of ``x [n_rows, N]``.

    One program per vector core; program ``pid`` normalises the row blocks ``pid,
    pid + num_programs, ...`` (a task loop), so the grid never depends on ``n_rows``.
    ``n_rows`` and ``eps`` are runtime arguments: a new token count reuses the
    compiled kernel.  ``ONE_PASS`` (``N <= BN``) keeps a whole row in the tile;
    otherwise the squares are summed over column blocks first and each block is
    read again to be scaled.  Every masked-out lane's address is clamped into the
    tensor (Triton-Ascend still issues the access of masked-out lanes).
    """
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    n_tasks = tl.cdiv(n_rows, BM)
    o_mm = tl.arange(0, BM)
    o_nn = tl.arange(0, BN)
    if ONE_PASS:
        m_n = o_nn < N
        c_n = tl.minimum(o_nn, N - 1)
        # the weight is the same for every row: load it once per program
        b_w = tl.load(weight + c_n, mask=m_n, other=0.0).to(tl.float32)
        for task in range(pid, n_tasks, n_programs):
            o_m = task * BM + o_mm
            m_m = o_m < n_rows
            r_x = tl.cast(tl.minimum(o_m, n_rows - 1), tl.int64) * N
            r_y = tl.cast(o_m, tl.int64) * N
            m_x = m_m[:, None] & m_n[None, :]
            b_x = tl.load(x + r_x[:, None] + c_n[None, :], mask=m_x, other=0.0).to(tl.float32)
            b_rstd = 1.0 / tl.sqrt(tl.sum(b_x * b_x, axis=1) / N + eps)
            b_y = b_x * b_rstd[:, None] * b_w[None, :]
            tl.store(y + r_y[:, None] + o_nn[None, :], b_y.to(y.dtype.element_ty), mask=m_x)
    else:
        for task in range(pid, n_tasks, n_programs):
            o_m = task * BM + o_mm
            m_m = o_m < n_rows
            r_x = tl.cast(tl.minimum(o_m, n_rows - 1), tl.int64) * N
            r_y = tl.cast(o_m, tl.int64) * N
            b_ss = tl.zeros([BM], dtype=tl.float32)
            for i_n in range(0, N, BN):
                o_n = i_n + o_nn
                m_x = m_m[:, None] & (o_n < N)[None, :]
                c_n = tl.minimum(o_n, N - 1)
                b_x = tl.load(x + r_x[:, None] + c_n[None, :], mask=m_x, other=0.0)
                b_x = b_x.to(tl.float32)
                b_ss += tl.sum(b_x * b_x, axis=1)
            b_rstd = 1.0 / tl.sqrt(b_ss / N + eps)
            for i_n in range(0, N, BN):
                o_n = i_n + o_nn
                m_n = o_n < N
                m_x = m_m[:, None] & m_n[None, :]
                c_n = tl.minimum(o_n, N - 1)
                b_x = tl.load(x + r_x[:, None] + c_n[None, :], mask=m_x, other=0.0)
                b_w = tl.load(weight + c_n, mask=m_n, other=0.0).to(tl.float32)
                b_y = b_x.to(tl.float32) * b_rstd[:, None] * b_w[None, :]
                tl.store(y + r_y[:, None] + o_n[None, :], b_y.to(y.dtype.element_ty), mask=m_x)


def rms_norm_fwd(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm of ``x [..., N]`` over its last dimension with ``weight [N]``.

    Returns ``y`` in ``x``'s dtype (fp32 accumulation).  The launch is a 1-D grid of
    the vector cores of ``x``'s device, capped by the number of row blocks; block
    sizes depend only on ``N`` (``triton.next_power_of_2``), so a new number of rows
    never compiles the kernel again.
    """
    if weight.dim() != 1 or x.dim() == 0:
        raise ValueError(
            f"x [..., N] and weight [N] expected, got {x.dim()}-d and {weight.dim()}-d"
        )
    if x.shape[-1] != weight.shape[0]:
        raise ValueError(
            f"x [..., N] and weight [N] do not match: {tuple(x.shape)} vs {tuple(weight.shape)}"
        )
    N = weight.shape[0]
    x_rows = x.reshape(-1, N).contiguous()
    n_rows = x_rows.shape[0]
    y = torch.empty_like(x_rows)
    if n_rows == 0 or N == 0:
        return y.view(x.shape)
    BN = min(triton.next_power_of_2(N), MAX_BLOCK_N)
    BM = TILE_ELEMENTS // BN
    n_tasks = triton.cdiv(n_rows, BM)
    grid = (min(num_vector_cores(x), n_tasks),)
    rms_norm_fwd_kernel[grid](
        x_rows,
        weight.contiguous(),
        y,
        n_rows,
        eps,
        N=N,
        BM=BM,
        BN=BN,
        ONE_PASS=N <= BN,
    )
    return y.view(x.shape)
