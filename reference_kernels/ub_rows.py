"""Row softmax sized to the Unified Buffer: a block size that cannot overflow, for any
row width.

``ub overflow, requires N bits while 1572864 bits available`` is the compile error an
Ascend kernel author meets most: the tiles a program keeps live at once exceed one
vector core's Unified Buffer (UB, 192 KB on 910B/A2/A3).  A GPU kernel that sizes its
block as ``triton.next_power_of_2(n_cols)`` keeps a whole row in one tile: it compiles
for a 4,096-wide row and fails for a 65,536-wide one.

Here the tile size comes from :func:`ub_block_size`, which inverts the UB model of
``ascend_lint/ub_model.py`` for the target: the largest power-of-two tile whose
buffers, counted as the compile gate counts them (every tile-sized buffer the kernel
keeps live at its peak, rows padded to 32 bytes, DMA buffers twice under
multibuffer), fit the target's UB.  A row wider than one tile is walked by a column
loop (an online max and sum, then a second pass that writes), so the tile, and with
it the UB use, does not grow with the row.

The launch is the core-count grid of ``core_grid.py``: one program per vector core
(capped by the number of row blocks), a task loop over row blocks inside, the row
count a runtime argument so a new batch does not compile again.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ascend_lint.ub_model import BITS_PER_BYTE, DEFAULT_TARGET, get_target

from .core_grid import num_vector_cores

__all__ = ["LIVE_TILES", "softmax_blocks", "softmax_fwd", "softmax_fwd_kernel", "ub_block_size"]

#: Tile-sized fp32 buffers :func:`softmax_fwd_kernel` keeps live at its peak, as the
#: compile gate's upper bound counts them: in the column loop with fp32 input, the
#: loaded tile (twice: multibuffer), ``x - max``, its ``exp``, the scratch of the exp
#: and of the row sum, and the stored tile.  Measured on the lowered kernel with
#: ``ascend-lint compile reference_kernels/ub_rows.py::softmax_fwd_kernel --constexpr
#: N=65536 --constexpr BM=1 --constexpr BN=4096 --constexpr ONE_PASS=False``: 918,016
#: bits, 224 bits (7 fp32 values) per element, plus a few row vectors; the other
#: paths and dtypes need less.
LIVE_TILES = 7
#: The narrowest column block: one 32-byte row of fp32 values.
MIN_BLOCK_N = 8


def ub_block_size(target: str | None = DEFAULT_TARGET, live_tiles: int = LIVE_TILES) -> int:
    """The most fp32 elements one tile of :func:`softmax_fwd_kernel` may hold on
    ``target`` (``ascend910b``, ``ascend910_93``, ``ascend910_95`` or an alias): the
    largest power of two ``E`` with ``live_tiles * 4 * E * 8 <= capacity_bits``.

    The tile's rows are at least :data:`MIN_BLOCK_N` wide, so 32-byte padding adds
    nothing, and ``live_tiles`` already counts the multibuffered copies; the result is
    a power of two so that ``BM * BN`` tiles of it keep ``tl.arange`` extents powers
    of two.
    """
    capacity_bits = get_target(target or DEFAULT_TARGET).capacity_bits
    per_element_bits = live_tiles * 4 * BITS_PER_BYTE
    elements = capacity_bits // per_element_bits
    if elements < MIN_BLOCK_N:
        raise ValueError(f"{live_tiles} live tiles leave no room in {capacity_bits} bits")
    return 1 << (elements.bit_length() - 1)


def softmax_blocks(n_cols: int, target: str | None = DEFAULT_TARGET) -> tuple[int, int, bool]:
    """``(BM, BN, ONE_PASS)`` of :func:`softmax_fwd_kernel` for rows of ``n_cols``: a
    tile of :func:`ub_block_size` elements, ``BN`` the whole (power-of-two padded) row
    when it fits, else the widest column block that does; ``BM`` rows fill the rest.
    Depends on the row width and the target only, never on the number of rows."""
    tile = ub_block_size(target)
    BN = min(max(triton.next_power_of_2(n_cols), MIN_BLOCK_N), tile)
    return tile // BN, BN, n_cols <= BN


@triton.jit(do_not_specialize=["n_rows"])
def softmax_fwd_kernel(
    x,
    y,
    n_rows,
    N: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    ONE_PASS: tl.constexpr,
):
    """``y = softmax(x)`` over each row of ``x [n_rows, N]``, in fp32.

    Program ``pid`` handles the row blocks ``pid, pid + num_programs, ...``.  With
    ``ONE_PASS`` (``N <= BN``) a row is one tile; otherwise a first column loop keeps
    the running max ``b_m`` and the running sum of ``exp(x - b_m)`` (rescaled when the
    max grows), and a second one writes ``exp(x - b_m) / b_s``.  Loads and stores are
    masked by ``row < n_rows`` and ``column < N`` alone, the form the compiler turns
    into one contiguous DMA of the valid part (a clamped address, ``tl.minimum(col,
    N - 1)``, would make it a loop of scalar loads); masked-out lanes read ``-inf``,
    whose exp is 0, and rows past ``n_rows`` are never stored.
    """
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    n_tasks = tl.cdiv(n_rows, BM)
    o_mm = tl.arange(0, BM)
    o_nn = tl.arange(0, BN)
    for task in range(pid, n_tasks, n_programs):
        o_m = task * BM + o_mm
        m_m = o_m < n_rows
        r_x = tl.cast(o_m, tl.int64) * N
        if ONE_PASS:
            m_x = m_m[:, None] & (o_nn < N)[None, :]
            p_x = r_x[:, None] + o_nn[None, :]
            b_x = tl.load(x + p_x, mask=m_x, other=-float("inf")).to(tl.float32)
            b_e = tl.exp(b_x - tl.max(b_x, axis=1)[:, None])
            b_y = b_e / tl.sum(b_e, axis=1)[:, None]
            tl.store(y + p_x, b_y.to(y.dtype.element_ty), mask=m_x)
        else:
            b_m = tl.full([BM], -float("inf"), dtype=tl.float32)
            b_s = tl.zeros([BM], dtype=tl.float32)
            for i_n in range(0, N, BN):
                o_n = i_n + o_nn
                m_x = m_m[:, None] & (o_n < N)[None, :]
                p_x = r_x[:, None] + o_n[None, :]
                b_x = tl.load(x + p_x, mask=m_x, other=-float("inf")).to(tl.float32)
                b_new = tl.maximum(b_m, tl.max(b_x, axis=1))
                b_s = b_s * tl.exp(b_m - b_new) + tl.sum(tl.exp(b_x - b_new[:, None]), axis=1)
                b_m = b_new
            for i_n in range(0, N, BN):
                o_n = i_n + o_nn
                m_x = m_m[:, None] & (o_n < N)[None, :]
                p_x = r_x[:, None] + o_n[None, :]
                b_x = tl.load(x + p_x, mask=m_x, other=-float("inf")).to(tl.float32)
                b_y = tl.exp(b_x - b_m[:, None]) / b_s[:, None]
                tl.store(y + p_x, b_y.to(y.dtype.element_ty), mask=m_x)


def softmax_fwd(x: torch.Tensor, target: str | None = DEFAULT_TARGET) -> torch.Tensor:
    """Softmax of ``x [..., N]`` over its last dimension, in ``x``'s dtype (fp32 math).

    The tile holds :func:`ub_block_size` elements for ``target``: ``BN`` columns (the
    whole row when it fits, else the widest power of two that does) by ``BM`` rows.
    The grid is the vector-core count capped by the row blocks.
    """
    if x.dim() == 0:
        raise ValueError("x [..., N] expected, got a 0-d tensor")
    N = x.shape[-1]
    rows = x.reshape(-1, N).contiguous()
    n_rows = rows.shape[0]
    y = torch.empty_like(rows)
    if n_rows == 0 or N == 0:
        return y.view(x.shape)
    BM, BN, one_pass = softmax_blocks(N, target)
    n_tasks = triton.cdiv(n_rows, BM)
    grid = (min(num_vector_cores(x), n_tasks),)
    softmax_fwd_kernel[grid](rows, y, n_rows, N=N, BM=BM, BN=BN, ONE_PASS=one_pass)
    return y.view(x.shape)
