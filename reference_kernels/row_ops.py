"""Row operations that stay on the vector unit and inside their rows.

Four habits of GPU kernels that Triton-Ascend turns into scalar loops, rejected kernels
or copies that spill into the next row, each with the form that avoids it:

* **Lookups from a small table** (ASC027).  ``tl.load(codebook + idx)`` with ``idx`` a
  vector loaded by the same kernel has one address per lane; the compiler lowers it to
  a scalar loop of one-element loads.  :func:`nf4_dequant_kernel` loads the 16-entry
  NF4 codebook once per program into the Unified Buffer and picks from it with
  ``tl.gather``.
* **Integer bit tricks in a loop** (ASC032).  Unpacking 4-bit codes with ``>>`` and
  ``&`` on an integer vector runs on the Scalar unit; :func:`nf4_dequant_kernel`
  splits each byte ``q`` into ``hi = floor(q / 16)`` and ``lo = q - 16 * hi`` in
  float32 (exact for bytes).  Likewise a select on an integer column predicate
  (``tl.where(cols < N, ...)``) runs element by element; :func:`row_variance_kernel`
  compares the columns as float32 (``cols.to(tl.float32) < N``, exact below 2**24),
  as the Triton-Ascend profiling guide recommends, and keeps the integer compare for
  the load masks, which the compiler turns into the copy's bounds.
* **Rows that are not a multiple of 32 bytes** (ASC028).  The DMA moves a row in
  32-byte units; a row of ``D = 123`` float32 values (492 bytes) has its copy rounded
  into the next row.  :func:`row_variance` pads the rows on the host to a pitch
  ``D_PAD`` that is a multiple of 32 bytes, and the kernel reads ``D`` values of each
  row at that pitch.
* **A pointer chosen between two tensors** (ASC029).  ``tl.where(c, a + o, b + o)``
  makes one pointer from two tensors; Triton-Ascend's front end rejects it.
  :func:`blend_kernel` loads each tensor where its lanes are wanted and stores each
  under its own mask: every pointer stays offset from one tensor.

The launches are core-count grids with a task loop over row blocks (``core_grid.py``).

Under triton-ascend 3.2's interpreter (``TRITON_INTERPRET=1``) ``tl.gather`` is
missing from the interpreter's builder; the project's kernel tests supply it
(``tests/kernels/conftest.py``), and the compile gate lowers the kernel through the
Ascend front end, where ``tl.gather`` is a library call.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .core_grid import num_vector_cores

__all__ = [
    "LEVELS",
    "blend",
    "blend_kernel",
    "nf4_dequant",
    "nf4_dequant_kernel",
    "padded_pitch",
    "row_variance",
    "row_variance_kernel",
]

#: Entries of an NF4 codebook (4-bit codes).
LEVELS = 16
#: The DMA and Unified Buffer alignment of a row, in bytes.
ROW_ALIGN_BYTES = 32


def padded_pitch(n_cols: int, element_bytes: int) -> int:
    """The smallest row pitch (in elements) not below ``n_cols`` whose bytes are a
    multiple of :data:`ROW_ALIGN_BYTES`."""
    per = ROW_ALIGN_BYTES // element_bytes if ROW_ALIGN_BYTES % element_bytes == 0 else 1
    return -(-n_cols // per) * per


@triton.jit(do_not_specialize=["n_rows"])
def nf4_dequant_kernel(
    packed,
    codebook,
    scale,
    out,
    n_rows,
    NB: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    LEVELS: tl.constexpr,
):
    """``out[r, j] = codebook[lo(packed[r, j])] * scale[r]`` and
    ``out[r, NB + j] = codebook[hi(packed[r, j])] * scale[r]``.

    ``packed`` is ``[n_rows, NB]`` uint8 (two 4-bit codes per byte, the low nibble
    first), ``out`` ``[n_rows, 2 * NB]`` float32, ``scale`` ``[n_rows]`` float32.
    The codebook is read once per program; each code picks its entry from the
    Unified Buffer with ``tl.gather``.
    """
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    book = tl.load(codebook + tl.arange(0, LEVELS)).to(tl.float32)
    o_mm = tl.arange(0, BM)
    o_n = tl.arange(0, BN)
    for task in range(pid, tl.cdiv(n_rows, BM), n_programs):
        o_m = task * BM + o_mm
        m_x = (o_m < n_rows)[:, None] & (o_n < NB)[None, :]
        r_p = tl.cast(o_m, tl.int64)
        q = tl.load(packed + r_p[:, None] * NB + o_n[None, :], mask=m_x, other=0)
        q = q.to(tl.float32)
        hi = tl.floor(q * (1.0 / LEVELS))
        lo = q - hi * LEVELS
        s = tl.load(scale + o_m, mask=o_m < n_rows, other=0.0)[:, None]
        v_lo = tl.gather(book, tl.reshape(lo.to(tl.int32), [BM * BN]), 0)
        v_hi = tl.gather(book, tl.reshape(hi.to(tl.int32), [BM * BN]), 0)
        p_y = r_p[:, None] * (2 * NB) + o_n[None, :]
        tl.store(out + p_y, tl.reshape(v_lo, [BM, BN]) * s, mask=m_x)
        tl.store(out + p_y + NB, tl.reshape(v_hi, [BM, BN]) * s, mask=m_x)


def nf4_dequant(
    packed: torch.Tensor, codebook: torch.Tensor, scale: torch.Tensor, block_m: int = 8
) -> torch.Tensor:
    """Dequantise ``packed [n_rows, NB]`` (uint8) with a 16-entry ``codebook`` and a
    per-row ``scale`` into ``[n_rows, 2 * NB]`` float32 (low nibbles, then high)."""
    assert packed.dtype == torch.uint8 and codebook.numel() == LEVELS
    packed = packed.contiguous()
    n_rows, NB = packed.shape
    out = torch.empty(n_rows, 2 * NB, dtype=torch.float32, device=packed.device)
    if n_rows == 0:
        return out
    BN = triton.next_power_of_2(NB)
    grid = (min(num_vector_cores(packed), triton.cdiv(n_rows, block_m)),)
    nf4_dequant_kernel[grid](
        packed,
        codebook.contiguous(),
        scale.float().contiguous(),
        out,
        n_rows,
        NB=NB,
        BM=block_m,
        BN=BN,
        LEVELS=LEVELS,
    )
    return out


@triton.jit(do_not_specialize=["n_rows"])
def row_variance_kernel(
    x,
    var,
    n_rows,
    D: tl.constexpr,
    D_PAD: tl.constexpr,
    BM: tl.constexpr,
    BD: tl.constexpr,
):
    """``var[r] = mean((x[r, :D] - mean(x[r, :D])) ** 2)`` for rows stored at a pitch
    of ``D_PAD`` elements (a multiple of 32 bytes, ``D <= D_PAD``).

    Two passes over column blocks of ``BD``: the sum, then the squared deviations.
    The loads are masked by integer compares (the compiler makes them the copy's
    bounds); the select that drops the padding lanes compares in float32.
    """
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    o_mm = tl.arange(0, BM)
    o_dd = tl.arange(0, BD)
    for task in range(pid, tl.cdiv(n_rows, BM), n_programs):
        o_m = task * BM + o_mm
        m_m = o_m < n_rows
        r_x = tl.cast(o_m, tl.int64) * D_PAD
        b_s = tl.zeros([BM], dtype=tl.float32)
        for i_d in range(0, D, BD):
            o_d = i_d + o_dd
            m_x = m_m[:, None] & (o_d < D)[None, :]
            b_x = tl.load(x + r_x[:, None] + o_d[None, :], mask=m_x, other=0.0)
            b_s += tl.sum(b_x.to(tl.float32), axis=1)
        mean = b_s / D
        b_v = tl.zeros([BM], dtype=tl.float32)
        for i_d in range(0, D, BD):
            o_d = i_d + o_dd
            m_x = m_m[:, None] & (o_d < D)[None, :]
            b_x = tl.load(x + r_x[:, None] + o_d[None, :], mask=m_x, other=0.0)
            keep = o_d.to(tl.float32) < D
            b_c = tl.where(keep[None, :], b_x.to(tl.float32) - mean[:, None], 0.0)
            b_v += tl.sum(b_c * b_c, axis=1)
        tl.store(var + o_m, b_v / D, mask=m_m)


def row_variance(x: torch.Tensor, block_m: int = 4, block_d: int = 64) -> torch.Tensor:
    """The population variance of each row of ``x [..., D]`` (float32), read from rows
    padded on the host to a 32-byte pitch."""
    D = x.shape[-1]
    rows = x.reshape(-1, D)
    n_rows = rows.shape[0]
    D_PAD = padded_pitch(D, rows.element_size())
    if D_PAD != D:
        padded = rows.new_zeros(n_rows, D_PAD)
        padded[:, :D] = rows
        rows = padded
    rows = rows.contiguous()
    var = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    if n_rows == 0:
        return var.reshape(x.shape[:-1])
    BD = min(block_d, triton.next_power_of_2(D))
    grid = (min(num_vector_cores(rows), triton.cdiv(n_rows, block_m)),)
    row_variance_kernel[grid](rows, var, n_rows, D=D, D_PAD=D_PAD, BM=block_m, BD=BD)
    return var.reshape(x.shape[:-1])


@triton.jit(do_not_specialize=["n", "split"])
def blend_kernel(a, b, out, n, split, BLOCK: tl.constexpr):
    """``out[i] = a[i]`` for ``i < split``, ``b[i]`` otherwise (``i < n``): each tensor
    is loaded where its elements are wanted and stored under the same mask, so no
    pointer is chosen between the two tensors (and no select is needed)."""
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    o_bb = tl.arange(0, BLOCK)
    for task in range(pid, tl.cdiv(n, BLOCK), n_programs):
        o = task * BLOCK + o_bb
        m = o < n
        m_a = m & (o < split)
        m_b = m & (o >= split)
        tl.store(out + o, tl.load(a + o, mask=m_a), mask=m_a)
        tl.store(out + o, tl.load(b + o, mask=m_b), mask=m_b)


def blend(a: torch.Tensor, b: torch.Tensor, split: int, block: int = 64) -> torch.Tensor:
    """The first ``split`` elements of ``a`` followed by the rest of ``b`` (same shape
    and dtype)."""
    assert a.shape == b.shape and a.dtype == b.dtype
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    if n == 0:
        return out
    grid = (min(num_vector_cores(a), triton.cdiv(n, block)),)
    blend_kernel[grid](a, b, out, n, split, BLOCK=block)
    return out
