"""Two GPU habits that give wrong numbers or no binary on Ascend, in one row kernel.

* The launcher moved to a core-count grid (ASC012's advice) but the kernel still maps one
  program to one sequence and has no task loop: with more sequences than cores, the
  sequences past the grid are never written (ASC023). Small test inputs pass.
* The whole sequence is one tile, `BLOCK_T = triton.next_power_of_2(max_len)` with no cap: fine
  on a GPU, a `ub overflow` compile failure on Ascend once a sequence is long (ASC022).

The corrected patterns: `reference_kernels/core_grid.py` (a task loop over row blocks) and
`reference_kernels/ub_rows.py` (a block from the UB budget and a loop over the rest).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def gate_cumsum_kernel(g, out, cu_seqlens, n_seqs, BLOCK_T: tl.constexpr):
    i_n = tl.program_id(0)
    bos = tl.load(cu_seqlens + i_n).to(tl.int64)
    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    cols = tl.arange(0, BLOCK_T)
    mask = (cols < eos - bos) & (i_n < n_seqs)
    b_g = tl.load(g + bos + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + bos + cols, tl.cumsum(b_g, axis=0), mask=mask)


def gate_cumsum(g: torch.Tensor, cu_seqlens: torch.Tensor, num_cores: int = 24) -> torch.Tensor:
    """Per-sequence cumulative sum of the packed gate `g` [total_tokens]."""
    n_seqs = cu_seqlens.numel() - 1
    max_len = int((cu_seqlens[1:] - cu_seqlens[:-1]).max().item())
    out = torch.empty_like(g, dtype=torch.float32)
    BLOCK_T = triton.next_power_of_2(max_len)
    gate_cumsum_kernel[(num_cores,)](g, out, cu_seqlens, n_seqs, BLOCK_T=BLOCK_T)
    return out
