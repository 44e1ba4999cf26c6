"""Two kernels written for an Ascend NPU: a grid sized from the device's vector cores,
launched with triton-ascend's options.

`seq_lengths_kernel` reads one element before `cu_ends` (the look-back of vllm-ascend
#16275): its test passes, because the select throws the value away, but on the NPU the
load is issued and faults when that address is unmapped.  `rms_norm_kernel` masks its
last tile with `rows < n_rows`, an ordinary tail."""

import torch
import triton
import triton.language as tl


def vector_cores() -> int:
    device = torch.npu.current_device()
    return triton.runtime.driver.active.utils.get_device_properties(device)["num_vectorcore"]


@triton.jit
def seq_lengths_kernel(cu_ends, lengths, n_seqs, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n_seqs
    end = tl.load(cu_ends + i, mask=m)
    start = tl.where(i == 0, 0, tl.load(cu_ends + i - 1, mask=m))
    tl.store(lengths + i, end - start, mask=m)


def seq_lengths(cu_ends: torch.Tensor) -> torch.Tensor:
    """The length of each sequence, from the cumulative ends [3, 7, 12] -> [3, 4, 5]."""
    n = cu_ends.numel()
    lengths = torch.empty_like(cu_ends)
    seq_lengths_kernel[(triton.cdiv(n, 16),)](cu_ends, lengths, n, BLOCK=16)
    return lengths


@triton.jit
def rms_norm_kernel(x, w, y, n_rows, eps, N: tl.constexpr, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, N)
    weight = tl.load(w + cols)
    for tile in range(pid, tl.cdiv(n_rows, BLOCK_M), programs):
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
        m = (rows < n_rows)[:, None]
        offs = rows[:, None] * N + cols[None, :]
        v = tl.load(x + offs, mask=m, other=0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=1) / N + eps)
        tl.store(y + offs, v * rstd[:, None] * weight[None, :], mask=m)


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n_rows, n = x.shape
    y = torch.empty_like(x)
    grid = (min(vector_cores(), triton.cdiv(n_rows, 8)),)
    rms_norm_kernel[grid](x, w, y, n_rows, eps, N=n, BLOCK_M=8, multibuffer=True)
    return y
