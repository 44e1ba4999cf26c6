"""Depthwise causal convolution over time (the short "shift window" of Mamba / GDN layers).

``causal_conv1d_fwd(x, weight, bias, cu_seqlens)`` returns, for every channel ``d``,

    y[b, t, d] = bias[d] + sum_{w < W} weight[d, w] * x[b, t - (W - 1) + w, d]

where tokens before the start of ``t``'s sequence count as zero.  ``x`` is
``[B, T, D]``; with ``cu_seqlens`` (int64, packed ``B == 1``) every sequence restarts
the window.  ``W <= 4`` (the widths these layers use).

What the kernel shows (the fixed side of ASC018, ASC019, ASC020 and ASC012):

* **2-D tile indexing.**  A program works on a ``[BT, BD]`` tile built from one
  ``tl.arange`` per axis (``o_t`` over time, ``o_d`` over channels).  A GPU port
  often takes one flat ``tl.arange(0, BT * BD)`` and recovers the row and column
  with ``// D`` and ``% D``; with a runtime ``D`` Triton-Ascend turns that into a
  scalar loop per element.
* **Clamped look-back.**  Tap ``w`` reads ``W - 1 - w`` tokens back, so near a
  sequence start its time offset is negative.  Triton-Ascend issues the access of
  masked-out lanes too, so the mask alone does not keep the address inside the
  tensor: the offset is clamped with ``tl.maximum(o, 0)`` and the mask is kept for
  the value (rows past the sequence end and channels past ``D`` are clamped to the
  last valid index the same way).
* **Conditions as pairs.**  The load mask is three conditions: ``(a & b)[:, None] &
  c[None, :]``, never a chained ``and``/``or`` that Triton-Ascend 3.2 rejects.
* **Core grid.**  The launch grid is the vector-core count (capped by the number of
  tiles) and each program walks its share of the tiles in a task loop, instead of
  one program per tile.  The sequence length is a runtime argument, so a new ``T``
  does not compile the kernel again.
* The weight is handed to the kernel as ``[W, D]`` so that each tap is one
  contiguous row of channels (a stride-1 DMA).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .core_grid import num_vector_cores

__all__ = ["MAX_WIDTH", "causal_conv1d_fwd", "causal_conv1d_fwd_kernel"]

#: Widest window the kernel supports (Mamba2 / GDN use 4).
MAX_WIDTH = 4


@triton.jit(do_not_specialize=["T", "n_tiles", "n_t_tiles"])
def causal_conv1d_fwd_kernel(
    x,
    weight,
    bias,
    y,
    cu_seqlens,
    chunk_indices,
    T,
    n_tiles,
    n_t_tiles,
    D: tl.constexpr,
    W: tl.constexpr,
    BT: tl.constexpr,
    BD: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """One program per vector core; tile ``task`` = (time chunk ``i_c``, channel block ``i_d``).

    ``x``/``y``: ``[B, T, D]`` (``B == 1`` packed when varlen); ``weight``: ``[W, D]``.
    Fixed length: ``n_t_tiles`` chunks per sequence, chunk ``i_c`` is ``(i_c //
    n_t_tiles, i_c % n_t_tiles)``.  Varlen: ``chunk_indices`` holds int32
    ``(sequence, chunk)`` pairs.  ``n_tiles`` = number of chunks x channel blocks.
    """
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    ND: tl.constexpr = (D + BD - 1) // BD
    o_tt = tl.arange(0, BT)
    o_dd = tl.arange(0, BD)
    for task in range(pid, n_tiles, n_programs):
        # scalar task decomposition (program-id arithmetic, not per element)
        i_c = task // ND
        i_d = task % ND
        if IS_VARLEN:
            i_n = tl.load(chunk_indices + i_c * 2)
            i_t = tl.load(chunk_indices + i_c * 2 + 1)
            bos = tl.load(cu_seqlens + i_n)
            eos = tl.load(cu_seqlens + i_n + 1)
            T_cur = (eos - bos).to(tl.int32)
        else:
            i_b = i_c // n_t_tiles
            i_t = i_c % n_t_tiles
            bos = tl.cast(i_b, tl.int64) * T
            T_cur = T

        o_t = i_t * BT + o_tt
        o_d = i_d * BD + o_dd
        m_t = o_t < T_cur
        m_d = o_d < D
        # addresses of masked-out lanes are still issued: keep every index in range
        c_t = tl.minimum(o_t, T_cur - 1)
        c_d = tl.minimum(o_d, D - 1)

        b_y = tl.zeros([BT, BD], dtype=tl.float32)
        if HAS_BIAS:
            b_y += tl.load(bias + c_d, mask=m_d, other=0.0).to(tl.float32)[None, :]
        for i_w in tl.static_range(W):
            # tap i_w looks W - 1 - i_w tokens back; before the sequence start it is zero
            o_src = c_t - (W - 1 - i_w)
            m_x = (m_t & (o_src >= 0))[:, None] & m_d[None, :]
            r_src = bos + tl.maximum(o_src, 0)
            b_x = tl.load(x + r_src[:, None] * D + c_d[None, :], mask=m_x, other=0.0)
            b_w = tl.load(weight + i_w * D + c_d, mask=m_d, other=0.0)
            b_y += b_x.to(tl.float32) * b_w.to(tl.float32)[None, :]

        r_out = bos + o_t
        m_y = m_t[:, None] & m_d[None, :]
        tl.store(y + r_out[:, None] * D + o_d[None, :], b_y.to(y.dtype.element_ty), mask=m_y)


def _varlen_chunks(cu_seqlens: torch.Tensor, chunk_size: int) -> torch.Tensor:
    """int32 ``[n_chunks, 2]`` table of (sequence, chunk) pairs over all sequences."""
    lens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
    rows = [(n, c) for n, length in enumerate(lens) for c in range(triton.cdiv(length, chunk_size))]
    return torch.tensor(rows, dtype=torch.int32, device=cu_seqlens.device).view(-1, 2)


def causal_conv1d_fwd(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    cu_seqlens: torch.LongTensor | None = None,
    chunk_size: int = 64,
) -> torch.Tensor:
    """Depthwise causal conv of ``x [B, T, D]`` with ``weight [D, W]`` (``W <= 4``).

    ``bias [D]`` is optional; ``cu_seqlens`` (int64, ``B == 1``) packs several
    sequences, each convolved on its own.  Returns ``y`` in ``x``'s dtype;
    accumulation is fp32.
    """
    if weight.dim() != 2:
        raise ValueError(f"weight must be [D, W], got shape {tuple(weight.shape)}")
    # channels and width come from the weight: model constants, fixed for every call
    D, W = weight.shape
    if x.dim() != 3 or x.shape[2] != D:
        raise ValueError(f"x must be [B, T, D={D}], got shape {tuple(x.shape)}")
    B, T = x.shape[0], x.shape[1]
    if not 1 <= W <= MAX_WIDTH:
        raise ValueError(f"window width {W} is outside 1..{MAX_WIDTH}")
    if bias is not None and bias.shape != (D,):
        raise ValueError(f"bias must be [D={D}], got shape {tuple(bias.shape)}")
    if chunk_size < 16 or chunk_size & (chunk_size - 1):
        raise ValueError(f"chunk_size={chunk_size} must be a power of two >= 16")
    x = x.contiguous()
    # [W, D]: each tap is one contiguous row of channels
    weight_rows = weight.t().contiguous()
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    BD = min(triton.next_power_of_2(D), 128)
    n_d_tiles = triton.cdiv(D, BD)
    if cu_seqlens is None:
        chunk_indices = None
        n_t_tiles = triton.cdiv(T, chunk_size)
        n_chunks = B * n_t_tiles
    else:
        if B != 1 or cu_seqlens.dtype != torch.int64:
            raise ValueError("cu_seqlens needs B == 1 and an int64 tensor")
        chunk_indices = _varlen_chunks(cu_seqlens, chunk_size)
        n_t_tiles = 0  # unused on the varlen path
        n_chunks = chunk_indices.shape[0]
    n_tiles = n_chunks * n_d_tiles
    if n_tiles == 0:
        return y  # sequences of no tokens: a grid of 0 programs aborts on triton-ascend 3.2.0
    grid = (min(num_vector_cores(x), n_tiles),)
    causal_conv1d_fwd_kernel[grid](
        x,
        weight_rows,
        bias,
        y,
        cu_seqlens,
        chunk_indices,
        T,
        n_tiles,
        n_t_tiles,
        D=D,
        W=W,
        BT=chunk_size,
        BD=BD,
        HAS_BIAS=bias is not None,
        IS_VARLEN=cu_seqlens is not None,
    )
    return y
