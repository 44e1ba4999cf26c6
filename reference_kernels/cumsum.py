"""Chunk-local cumulative sum of a gate, with the tail chunk on its own constexpr path.

``chunk_local_cumsum(g, chunk_size)`` returns ``out[b, t, h] = sum of g[b, s, h]`` over
the tokens ``s <= t`` of t's chunk (chunks of ``chunk_size`` tokens, restarting at
every sequence start when ``cu_seqlens`` is given).  This is how the log-space gate
of the chunk kernels in ``chunk_o.py`` is produced.

The pattern shown (ASC005 runtime-dma-path-split, fixed): a kernel that handles
full chunks and the ragged last chunk with a runtime ``if`` keeps both DMA paths
alive in UB on Ascend.  Here the host launches the kernel twice, once over the full
chunks with ``TAIL_MODE=False`` and once over the tail chunks with
``TAIL_MODE=True``; each compiled specialisation holds exactly one load path.

Layout: the gate stays ``[B, T, H]``; every program loads a ``[BT, BH]`` tile of all
heads through a 2-D block pointer whose inner (head) dimension has unit stride, so
the DMA reads whole contiguous rows instead of a per-head gather along time.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .core_grid import num_vector_cores

__all__ = ["chunk_local_cumsum", "chunk_local_cumsum_kernel"]


@triton.jit(do_not_specialize=["T", "n_chunks", "n_tasks"])
def chunk_local_cumsum_kernel(
    g,
    out,
    initial,
    cu_seqlens,
    chunk_table,
    T,
    n_chunks,
    n_tasks,
    H: tl.constexpr,
    BT: tl.constexpr,
    BH: tl.constexpr,
    TAIL_MODE: tl.constexpr,
    IS_VARLEN: tl.constexpr,
    HAS_INITIAL: tl.constexpr,
):
    # One program per vector core; task = (sequence or batch, chunk of this launch's mode).
    for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        i_c = task % n_chunks
        i_b = tl.cast(task // n_chunks, tl.int64)
        i_n = i_b
        if IS_VARLEN:
            # chunk_table (int32, host-built) lists only the chunks of this launch's mode.
            i_n = tl.load(chunk_table + i_c * 2)
            i_t = tl.load(chunk_table + i_c * 2 + 1)
            bos = tl.load(cu_seqlens + i_n)
            eos = tl.load(cu_seqlens + i_n + 1)
            T_cur = (eos - bos).to(tl.int32)
        else:
            bos = i_b * T
            T_cur = T
            if TAIL_MODE:
                i_t = T // BT
            else:
                i_t = i_c

        g_base = g + bos * H
        out_base = out + bos * H
        p_g = tl.make_block_ptr(g_base, (T_cur, H), (H, 1), (i_t * BT, 0), (BT, BH), (1, 0))
        p_out = tl.make_block_ptr(out_base, (T_cur, H), (H, 1), (i_t * BT, 0), (BT, BH), (1, 0))
        if TAIL_MODE:
            # Ragged chunk: rows past the sequence end are padded with 0 and not stored.
            b_g = tl.load(p_g, boundary_check=(0, 1)).to(tl.float32)
        else:
            # Full chunk: every row is in range, only the head padding needs a check.
            b_g = tl.load(p_g, boundary_check=(1,)).to(tl.float32)
        b_out = tl.cumsum(b_g, axis=0)
        # The optional carry-in pointer is tested on its own constexpr flag (ASC006);
        # "first chunk only" is a mask, not a runtime `if` inside the task loop (ASC003).
        if HAS_INITIAL:
            o_h = tl.arange(0, BH)
            first = (o_h < H) & (i_t == 0)
            b_init = tl.load(initial + i_n * H + o_h, mask=first, other=0.0)
            b_out += b_init.to(tl.float32)[None, :]
        if TAIL_MODE:
            tl.store(p_out, b_out.to(p_out.dtype.element_ty), boundary_check=(0, 1))
        else:
            tl.store(p_out, b_out.to(p_out.dtype.element_ty), boundary_check=(1,))


def _varlen_tables(cu_seqlens: torch.Tensor, chunk_size: int):
    """int32 (sequence, chunk) tables of the full chunks and of the tail chunks."""
    lens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
    full, tail = [], []
    for n, length in enumerate(lens):
        full += [(n, c) for c in range(length // chunk_size)]
        if length % chunk_size:
            tail.append((n, length // chunk_size))

    def table(rows):
        return torch.tensor(rows, dtype=torch.int32, device=cu_seqlens.device).view(-1, 2)

    return table(full), table(tail)


def chunk_local_cumsum(
    g: torch.Tensor,
    chunk_size: int = 64,
    cu_seqlens: torch.LongTensor | None = None,
    output_dtype: torch.dtype = torch.float32,
    initial: torch.Tensor | None = None,
) -> torch.Tensor:
    """Chunk-local cumsum of ``g [B, T, H]`` (``B == 1`` with int64 ``cu_seqlens``).

    ``initial [N, H]`` (one row per sequence: ``B`` rows, or one per ``cu_seqlens``
    sequence) is added to the first chunk of each sequence: a carry-in when a long
    sequence is processed in segments.
    """
    B, T, H = g.shape
    if chunk_size < 16 or chunk_size & (chunk_size - 1):
        raise ValueError(f"chunk_size={chunk_size} must be a power of two >= 16")
    g = g.contiguous()
    out = torch.empty(B, T, H, dtype=output_dtype, device=g.device)
    if g.numel() == 0:
        return out  # nothing to sum: a grid of 0 programs aborts on triton-ascend 3.2.0
    BH = max(triton.next_power_of_2(H), 16)
    if cu_seqlens is None:
        launches = [(False, T // chunk_size, None), (True, 1 if T % chunk_size else 0, None)]
    else:
        if B != 1 or cu_seqlens.dtype != torch.int64:
            raise ValueError("cu_seqlens needs B == 1 and an int64 tensor")
        full, tail = _varlen_tables(cu_seqlens, chunk_size)
        launches = [(False, full.shape[0], full), (True, tail.shape[0], tail)]
    for tail_mode, n_chunks, table in launches:
        if n_chunks == 0:
            continue
        n_tasks = n_chunks * B
        chunk_local_cumsum_kernel[(min(n_tasks, num_vector_cores(g)),)](
            g,
            out,
            initial,
            cu_seqlens,
            table,
            T,
            n_chunks,
            n_tasks,
            H=H,
            BT=chunk_size,
            BH=BH,
            TAIL_MODE=tail_mode,
            IS_VARLEN=cu_seqlens is not None,
            HAS_INITIAL=initial is not None,
        )
    return out
