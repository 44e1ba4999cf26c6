"""Two row-scaling kernels launched on a core-count grid: one program per row block
(wrong whenever there are more row blocks than programs) and the same body in a task
loop (right for any grid). Shared by the interpreter test and the ASC023 check of this
very file."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows_one_tile_kernel(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BM + tl.arange(0, BM)
    cols = tl.arange(0, N)
    mask = rows[:, None] < n_rows
    offs = rows[:, None] * N + cols[None, :]
    tl.store(y + offs, tl.load(x + offs, mask=mask) * 2.0, mask=mask)


@triton.jit
def scale_rows_task_loop_kernel(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    cols = tl.arange(0, N)
    for task in range(tl.program_id(0), tl.cdiv(n_rows, BM), tl.num_programs(0)):
        rows = task * BM + tl.arange(0, BM)
        mask = rows[:, None] < n_rows
        offs = rows[:, None] * N + cols[None, :]
        tl.store(y + offs, tl.load(x + offs, mask=mask) * 2.0, mask=mask)


def scale_rows_one_tile(x: torch.Tensor, num_cores: int) -> torch.Tensor:
    n_rows, N = x.shape
    y = torch.full_like(x, float("nan"))
    scale_rows_one_tile_kernel[(num_cores,)](x, y, n_rows, N=N, BM=4)
    return y


def scale_rows_task_loop(x: torch.Tensor, num_cores: int) -> torch.Tensor:
    n_rows, N = x.shape
    y = torch.full_like(x, float("nan"))
    scale_rows_task_loop_kernel[(num_cores,)](x, y, n_rows, N=N, BM=4)
    return y


@triton.jit
def split_id_copy_kernel(
    x, y, n, NUM_CBLOCK: tl.constexpr, BLOCK: tl.constexpr, CBLOCK: tl.constexpr
):
    """vLLM-Ascend's lightning attention tiling: the id is split into a block and a
    sub-block, each program copying CBLOCK rows of a BLOCK."""
    off_nc = tl.program_id(0)
    off_n = off_nc // NUM_CBLOCK
    off_c = off_nc % NUM_CBLOCK
    rows = off_n * BLOCK + off_c * CBLOCK + tl.arange(0, CBLOCK)
    m = rows < n
    tl.store(y + rows, tl.load(x + rows, mask=m), mask=m)


def split_id_copy(x: torch.Tensor, block: int = 64, cblock: int = 32) -> torch.Tensor:
    n = x.numel()
    y = torch.full_like(x, float("nan"))
    grid = (triton.cdiv(n, block) * (block // cblock),)
    # a grid over the sub-blocks, as the original launches it (its ASC012 is not this test's)
    split_id_copy_kernel[grid](x, y, n, NUM_CBLOCK=block // cblock, BLOCK=block, CBLOCK=cblock)  # noqa: ASC012
    return y
