"""Copying whole tensors byte for byte through a table of their addresses, the way
triton-ascend lowers it.

Serving code copies state blocks between caches by address: the host gathers
``data_ptr()`` values into an ``int64`` table, and the kernel turns each into a pointer.
Written the GPU way, the kernel adds the byte offsets to the integer address first and
casts the whole vector to pointers (``(addr + i + offsets).to(tl.pointer_type(tl.uint8))``):
upstream Triton accepts it, triton-ascend aborts while lowering it (vllm-ascend PRs
#10888 / #10959; ASC031). :func:`copy_rows_kernel` casts the one scalar address of a copy
once and adds the offsets to the pointer, which both compilers lower.

The launch is a 1-D grid of the vector cores (the kernel has no ``tl.dot``) capped by the
number of copies, with a task loop over the copies, and returns before launching when
there is nothing to copy (a grid of 0 programs aborts on triton-ascend 3.2.0; ASC025).
Masked-out lanes of the tail read the block's last byte instead of past the end of the
source (triton-ascend issues the access of masked-out lanes).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .core_grid import num_vector_cores

__all__ = ["copy_rows", "copy_rows_kernel"]

#: Bytes one program moves per step.
BLOCK_BYTES = 1024


@triton.jit(do_not_specialize=["n_copies"])
def copy_rows_kernel(src_addrs, dst_addrs, n_bytes, n_copies, BLOCK: tl.constexpr):
    """Copy ``n_bytes[t]`` bytes from address ``src_addrs[t]`` to ``dst_addrs[t]`` for
    every copy ``t``; program ``pid`` takes the copies ``pid, pid + num_programs, ...``."""
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    o_b = tl.arange(0, BLOCK)
    for task in range(pid, n_copies, n_programs):
        # one scalar address per copy, cast to a pointer once: the offsets go onto it
        src = tl.load(src_addrs + task).to(tl.pointer_type(tl.uint8))
        dst = tl.load(dst_addrs + task).to(tl.pointer_type(tl.uint8))
        size = tl.load(n_bytes + task)
        for start in range(0, size, BLOCK):
            o = start + o_b
            m = o < size
            c = tl.minimum(o, size - 1)
            tl.store(dst + o, tl.load(src + c, mask=m, other=0), mask=m)


def copy_rows(srcs: list[torch.Tensor], dsts: list[torch.Tensor]) -> None:
    """Copy each ``srcs[i]`` into ``dsts[i]`` (contiguous tensors of the same number of
    bytes, any dtypes) in one launch."""
    if len(srcs) != len(dsts):
        raise ValueError(f"{len(srcs)} sources for {len(dsts)} destinations")
    for s, d in zip(srcs, dsts):
        if not (s.is_contiguous() and d.is_contiguous()):
            raise ValueError("copy_rows copies contiguous tensors")
        if s.numel() * s.element_size() != d.numel() * d.element_size():
            raise ValueError(f"sizes differ: {tuple(s.shape)} {s.dtype} vs {tuple(d.shape)}")
    pairs = [(s, d) for s, d in zip(srcs, dsts) if s.numel() > 0]
    n_copies = len(pairs)
    if n_copies == 0:
        return
    device = pairs[0][0].device
    src_addrs = torch.tensor([s.data_ptr() for s, _ in pairs], dtype=torch.int64, device=device)
    dst_addrs = torch.tensor([d.data_ptr() for _, d in pairs], dtype=torch.int64, device=device)
    n_bytes = torch.tensor(
        [s.numel() * s.element_size() for s, _ in pairs], dtype=torch.int64, device=device
    )
    grid = (min(num_vector_cores(device), n_copies),)
    copy_rows_kernel[grid](src_addrs, dst_addrs, n_bytes, n_copies, BLOCK=BLOCK_BYTES)
