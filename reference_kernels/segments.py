"""Segment starts and lengths from an inclusive cumulative count, on the vector-core grid.

``segment_lengths(cu_counts)`` returns ``(starts, lengths)`` with, for every segment
``i``,

    starts[i] = cu_counts[i - 1]  (0 for i == 0),    lengths[i] = cu_counts[i] - starts[i]

the bookkeeping a speculative-decoding sampler does with ``cu_num_draft_tokens`` (one
segment of draft tokens per request) before it walks each request's tokens.

What the kernel shows (the fixed side of ASC024, and of ASC012 and ASC013):

* **Clamp and select.**  The start of segment ``i`` is the previous entry, except for
  ``i == 0``.  ``tl.where(o == 0, 0, tl.load(cu + o - 1))`` reads that entry for every
  lane, lane 0 included: a select computes both arms before it picks one, so lane 0
  loads ``cu[-1]``, before the tensor (vLLM-Ascend hit device error 507035 in
  production this way).  The index is clamped, ``tl.maximum(o - 1, 0)``, and the
  select kept: lane 0 loads ``cu[0]`` and the select throws it away.  Lanes past the
  last segment are masked: an ordinary tail, at most a tile past the end.
* **Core grid.**  The grid is the vector-core count (capped by the number of tiles) and
  each program walks its share of the tiles; the segment count is a runtime argument,
  so a new batch size does not compile the kernel again.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .core_grid import num_vector_cores

__all__ = ["BLOCK", "segment_lengths", "segment_lengths_kernel"]

#: Segments one program handles per task.
BLOCK = 1024


@triton.jit(do_not_specialize=["n", "n_tiles"])
def segment_lengths_kernel(cu_counts, starts, lengths, n, n_tiles, BLOCK: tl.constexpr):
    for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        o = tile * BLOCK + tl.arange(0, BLOCK)
        m = o < n
        end = tl.load(cu_counts + o, mask=m, other=0)
        # the previous entry, clamped: lane 0 reads entry 0 and the select drops it
        # (compared in float32: an integer vector compare in a loop runs on the Scalar unit)
        start = tl.where(
            o.to(tl.float32) == 0, 0, tl.load(cu_counts + tl.maximum(o - 1, 0), mask=m, other=0)
        )
        tl.store(starts + o, start, mask=m)
        tl.store(lengths + o, end - start, mask=m)


def segment_lengths(cu_counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Starts and lengths of the segments an inclusive cumulative count ``cu_counts``
    (1-D, integer) describes; both have its dtype and length."""
    if cu_counts.dim() != 1 or cu_counts.dtype.is_floating_point:
        raise ValueError(
            f"cu_counts must be a 1-D integer tensor, got {cu_counts.dtype} "
            f"of shape {tuple(cu_counts.shape)}"
        )
    cu_counts = cu_counts.contiguous()
    starts = torch.empty_like(cu_counts)
    lengths = torch.empty_like(cu_counts)
    n = cu_counts.numel()
    if n == 0:
        return starts, lengths
    n_tiles = triton.cdiv(n, BLOCK)
    grid = (min(num_vector_cores(cu_counts), n_tiles),)
    segment_lengths_kernel[grid](cu_counts, starts, lengths, n, n_tiles, BLOCK=BLOCK)
    return starts, lengths
