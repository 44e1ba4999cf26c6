"""Kernels that touch memory they do not own, each beside its fix: the sanitizer's inputs.

Each defect is one a kernel's own tests pass with on a GPU or under the interpreter at
the shapes they use.  A line the sanitizer must report carries ``# expect: <kind>``;
``test_sanitizer_kernels.py`` compares the findings with exactly those comments, so a
finding on any other line (or on a fixed kernel) fails it.
"""

import torch
import triton
import triton.language as tl


# -- a look-back load inside a tl.where arm (vllm-ascend #16275) ---------------------------
@triton.jit
def shift_right_where_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    # the select does not guard the load: lane 0 reads x[-1] on every device
    prev = tl.load(x + o - 1, mask=m)  # expect: out-of-bounds
    tl.store(y + o, tl.where(o == 0, 0.0, prev), mask=m)


@triton.jit
def shift_right_clamped_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    prev = tl.load(x + tl.maximum(o - 1, 0), mask=m)
    tl.store(y + o, tl.where(o == 0, 0.0, prev), mask=m)


def shift_right(x: torch.Tensor, kernel=shift_right_where_kernel) -> torch.Tensor:
    y = torch.empty_like(x)
    kernel[(triton.cdiv(x.numel(), 8),)](x, y, x.numel(), BLOCK=8)
    return y


# -- the same look-back in a @triton.jit helper ---------------------------------------------
@triton.jit
def _previous(p, o, m):
    return tl.load(p + o - 1, mask=m)  # expect: out-of-bounds


@triton.jit
def diff_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    d = tl.load(x + o, mask=m) - tl.where(o == 0, 0.0, _previous(x, o, m))
    tl.store(y + o, d, mask=m)


def diff(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    diff_kernel[(triton.cdiv(x.numel(), 8),)](x, y, x.numel(), BLOCK=8)
    return y


# -- an ordinary tail: masked lanes at most a block past the end (must stay silent) ---------
@triton.jit
def scale_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m) * 2.0, mask=m)


def scale(x: torch.Tensor, block: int = 16) -> torch.Tensor:
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)
    return y


# -- a -1 padding slot masked out but not clamped ------------------------------------------
@triton.jit
def gather_rows_kernel(table, idx, out, n_idx, D: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    valid = o < n_idx
    row = tl.load(idx + o, mask=valid, other=-1)
    cols = tl.arange(0, D)
    keep = (row >= 0)[:, None]
    # masked, but Ascend still issues the read of row -1: D elements before the table
    rows = table + row[:, None] * D + cols[None, :]
    v = tl.load(rows, mask=keep, other=0.0)  # expect: masked-out-of-bounds
    tl.store(out + o[:, None] * D + cols[None, :], v, mask=valid[:, None])


@triton.jit
def gather_rows_clamped_kernel(table, idx, out, n_idx, D: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    valid = o < n_idx
    row = tl.load(idx + o, mask=valid, other=-1)
    cols = tl.arange(0, D)
    keep = (row >= 0)[:, None]
    safe = tl.maximum(row, 0)
    v = tl.load(table + safe[:, None] * D + cols[None, :], mask=keep, other=0.0)
    tl.store(out + o[:, None] * D + cols[None, :], v, mask=valid[:, None])


def gather_rows(table: torch.Tensor, idx: torch.Tensor, kernel=gather_rows_kernel) -> torch.Tensor:
    n, D = idx.numel(), table.shape[1]
    out = torch.empty(n, D, dtype=table.dtype)
    kernel[(1,)](table, idx, out, n, D=D, BLOCK=triton.next_power_of_2(n))
    return out


# -- a workspace smaller than what the kernel stores into it -------------------------------
@triton.jit
def outer_square_kernel(x, ws, out, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.load(x + o)
    tile = v[:, None] * v[None, :]
    tl.store(ws + o[:, None] * BLOCK + o[None, :], tile)  # expect: out-of-bounds
    tl.store(out, tl.sum(tl.sum(tile, axis=1), axis=0))


def outer_square_sum(x: torch.Tensor, workspace_elements: int) -> torch.Tensor:
    block = x.numel()
    ws = torch.empty(workspace_elements, dtype=x.dtype)
    out = torch.empty(1, dtype=x.dtype)
    outer_square_kernel[(1,)](x, ws, out, BLOCK=block)
    return out


# -- a host-chosen tile larger than the grid's per-program slice ---------------------------
@triton.jit
def scale_row_slices_kernel(x, y, n_rows, N: tl.constexpr, SLICE: tl.constexpr, BM: tl.constexpr):
    rows = tl.program_id(0) * SLICE + tl.arange(0, BM)
    cols = tl.arange(0, N)
    m = (rows < n_rows)[:, None]
    offs = rows[:, None] * N + cols[None, :]
    # with BM > SLICE every program also writes the first rows of its neighbour's slice:
    # in place, it reads rows its neighbour may already have scaled
    tl.store(y + offs, tl.load(x + offs, mask=m) * 2.0, mask=m)  # expect: race


def scale_row_slices(
    x: torch.Tensor, tile_rows: int, slice_rows: int = 4, in_place: bool = False
) -> torch.Tensor:
    n_rows, N = x.shape
    y = x if in_place else torch.empty_like(x)
    grid = (triton.cdiv(n_rows, slice_rows),)
    scale_row_slices_kernel[grid](x, y, n_rows, N=N, SLICE=slice_rows, BM=tile_rows)
    return y


# -- every program writing one shared global workspace and reading it back ------------------
@triton.jit
def row_sums_shared_kernel(x, ws, out, N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    tl.store(ws + cols, tl.load(x + row * N + cols) * 2.0)  # expect: race
    tl.store(out + row, tl.sum(tl.load(ws + cols), axis=0))


@triton.jit
def row_sums_own_slice_kernel(x, ws, out, N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    tl.store(ws + row * N + cols, tl.load(x + row * N + cols) * 2.0)
    tl.store(out + row, tl.sum(tl.load(ws + row * N + cols), axis=0))


def row_sums(x: torch.Tensor, shared: bool) -> torch.Tensor:
    n_rows, N = x.shape
    out = torch.empty(n_rows, dtype=x.dtype)
    if shared:
        ws = torch.empty(N, dtype=x.dtype)
        row_sums_shared_kernel[(n_rows,)](x, ws, out, N=N)
    else:
        ws = torch.empty(n_rows * N, dtype=x.dtype)
        row_sums_own_slice_kernel[(n_rows,)](x, ws, out, N=N)
    return out


# -- unmasked loads that read up to a tile past the end when rows % tile != 0 --------------
@triton.jit
def copy_rows_unmasked_kernel(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    v = tl.load(x + offs)  # expect: out-of-bounds
    tl.store(y + offs, v, mask=(rows < n_rows)[:, None])


@triton.jit
def copy_rows_masked_kernel(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    m = (rows < n_rows)[:, None]
    tl.store(y + offs, tl.load(x + offs, mask=m), mask=m)


def copy_rows(
    x: torch.Tensor,
    kernel=copy_rows_unmasked_kernel,
    tile_rows: int = 32,
    programs: int | None = None,
) -> torch.Tensor:
    """``programs``: a grid sized from the device (a core count), not from the rows: the
    programs past the last tile start past the end, every lane masked out."""
    n_rows, N = x.shape
    y = torch.empty_like(x)
    grid = (programs or triton.cdiv(n_rows, tile_rows),)
    kernel[grid](x, y, n_rows, N=N, BM=tile_rows)
    return y


# -- a look-back behind a lower-bound mask (triton-ascend #2332's reproducer) --------------
@triton.jit
def causal_shift_kernel(x, y, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = o - SHIFT
    # `src >= 0` compares a subtraction, which the compiler's mask analysis does not
    # follow: it loads the whole block, the first block's lanes below x and the last
    # block's lanes past its end included
    v = tl.load(x + src, mask=(src >= 0) & (o < n), other=0.0)  # expect: masked-out-of-bounds
    tl.store(y + o, v, mask=o < n)


@triton.jit
def causal_shift_clipped_kernel(x, y, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    # the same bounds put on the tl.arange offset itself: a box the copy is clipped to
    v = tl.load(x + o - SHIFT, mask=(o >= SHIFT) & (o < n), other=0.0)
    tl.store(y + o, v, mask=o < n)


def causal_shift(x: torch.Tensor, shift: int, kernel=causal_shift_kernel) -> torch.Tensor:
    y = torch.empty_like(x)
    kernel[(triton.cdiv(x.numel(), 16),)](x, y, x.numel(), SHIFT=shift, BLOCK=16)
    return y


# -- that look-back with its mask built each way the compiler does or does not clip by ----
@triton.jit
def look_back_kernel(x, y, n, SHIFT: tl.constexpr, MASK: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MASK == "at least, at most":
        m = (o >= SHIFT) & (o <= n - 1)
    elif MASK == "literal on the left":  # folded to `o >= SHIFT`
        m = (SHIFT <= o) & (o < n)  # noqa: SIM300 (the literal on the left is the point)
    elif MASK == "greater than":
        m = (o > SHIFT - 1) & (o < n)
    elif MASK == "bound on the left":
        m = (o >= SHIFT) & (n > o)
    elif MASK == "or":
        m = (o >= SHIFT) & ((o < n) | (o < 0))
    elif MASK == "where":
        m = tl.where(o < n, o >= SHIFT, False)
    else:  # "not"
        m = ~((o < SHIFT) | (o >= n))
    v = tl.load(x + o - SHIFT, mask=m, other=0.0)  # expect: masked-out-of-bounds
    tl.store(y + o, v, mask=o < n)


def look_back(x: torch.Tensor, shift: int, mask: str) -> torch.Tensor:
    y = torch.empty_like(x)
    look_back_kernel[(triton.cdiv(x.numel(), 16),)](
        x, y, x.numel(), SHIFT=shift, MASK=mask, BLOCK=16
    )
    return y


# -- the last rows of a tensor read in one tile that starts before it (vLLM-Ascend's
# lightning attention: `kv_index[:, None] >= left_bound`) ---------------------------------
@triton.jit
def last_rows_kernel(k, out, n, D: tl.constexpr, C: tl.constexpr):
    shift = C - n  # rows of the tile before k, when k has fewer than C rows
    rows = tl.arange(0, C)
    cols = tl.arange(0, D)
    tile = k + rows[:, None] * D + cols[None, :] - shift * D
    # a lower bound on the tl.arange: the copy starts at row `shift`, nothing before k is read
    v = tl.load(tile, mask=rows[:, None] >= shift, other=0.0)
    tl.store(out + rows[:, None] * D + cols[None, :], v)


def last_rows(k: torch.Tensor, tile_rows: int) -> torch.Tensor:
    n, D = k.shape
    out = torch.empty(tile_rows, D, dtype=k.dtype)
    last_rows_kernel[(1,)](k, out, n, D=D, C=tile_rows)
    return out


# -- a row per token id, an id outside the vocabulary masked by a scalar flag -------------
@triton.jit
def embedding_rows_kernel(table, ids, out, V, D: tl.constexpr):
    i = tl.program_id(0)
    t = tl.load(ids + i)
    ok = (t >= 0) & (t <= V - 1)
    cols = tl.arange(0, D)
    # a scalar condition and'ed with a compare of the tl.arange: the copy is clipped to the
    # whole row or none of it, and a bad id's row is not read
    row = tl.load(table + t * D + cols, mask=ok & (cols < D), other=0.0)
    tl.store(out + i * D + cols, row)


@triton.jit
def embedding_pairs_kernel(table, ids, out, V, D: tl.constexpr):
    i = tl.program_id(0)
    t = tl.load(ids + i)
    ok = (t >= 0) & (t <= V - 1)
    # the even and odd columns apart, as an NF4 dequantiser reads them (mojo_opset): `j < D`
    # compares a multiplied tl.arange, a mask the compiler does not clip by, so the whole
    # row is read at a bad id's address
    j = tl.arange(0, D // 2) * 2
    row = table + t * D
    even = tl.load(row + j, mask=ok & (j < D), other=0.0)  # expect: masked-out-of-bounds
    odd = tl.load(row + j + 1, mask=ok & (j + 1 < D), other=0.0)  # expect: masked-out-of-bounds
    tl.store(out + i * D + j, even)
    tl.store(out + i * D + j + 1, odd)


def embedding(table: torch.Tensor, ids: torch.Tensor, kernel=embedding_rows_kernel) -> torch.Tensor:
    V, D = table.shape
    out = torch.empty(ids.numel(), D, dtype=table.dtype)
    kernel[(ids.numel(),)](table, ids, out, V, D=D)
    return out


# -- token ids read one per slot, the slots past the last token masked --------------------
@triton.jit
def id_sums_kernel(ids, sums, n, SLOTS: tl.constexpr):
    total = 0
    for s in range(SLOTS):
        i = tl.program_id(0) * SLOTS + s
        # a scalar load: issued whatever its mask, so a spare slot reads past the ids
        total += tl.load(ids + i, mask=i < n, other=0)  # expect: masked-out-of-bounds
    tl.store(sums + tl.program_id(0), total)


@triton.jit
def id_sums_clamped_kernel(ids, sums, n, SLOTS: tl.constexpr):
    total = 0
    for s in range(SLOTS):
        i = tl.program_id(0) * SLOTS + s
        total += tl.load(ids + tl.minimum(i, n - 1), mask=i < n, other=0)
    tl.store(sums + tl.program_id(0), total)


def id_sums(ids: torch.Tensor, programs: int, kernel=id_sums_kernel) -> torch.Tensor:
    sums = torch.empty(programs, dtype=ids.dtype)
    kernel[(programs,)](ids, sums, ids.numel(), SLOTS=triton.cdiv(ids.numel(), programs))
    return sums


# -- tiles of rows masked by their flattened offset ----------------------------------------
@triton.jit
def copy_rows_flat_mask_kernel(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    # an offset over two dimensions, made of a product: no box the compiler clips by, so
    # the last tile is read and written whole, past the end
    m = offs < n_rows * N
    tl.store(y + offs, tl.load(x + offs, mask=m), mask=m)  # expect: masked-out-of-bounds


# -- dropped slots masked by a loaded flag, their ids not clamped --------------------------
@triton.jit
def gather_kept_rows_kernel(table, idx, keep, out, n_idx, D: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    valid = o < n_idx
    row = tl.load(idx + o, mask=valid, other=0)
    use = tl.load(keep + o, mask=valid, other=0) != 0
    cols = tl.arange(0, D)
    # a mask the compiler cannot turn into a clipped copy: the dropped slot between two
    # kept ones is issued, at whatever row its id names
    rows = table + row[:, None] * D + cols[None, :]
    v = tl.load(rows, mask=use[:, None], other=0.0)  # expect: masked-out-of-bounds
    tl.store(out + o[:, None] * D + cols[None, :], v, mask=valid[:, None])


@triton.jit
def gather_kept_rows_clamped_kernel(
    table, idx, keep, out, n_idx, D: tl.constexpr, BLOCK: tl.constexpr
):
    o = tl.arange(0, BLOCK)
    valid = o < n_idx
    row = tl.load(idx + o, mask=valid, other=0)
    use = tl.load(keep + o, mask=valid, other=0) != 0
    cols = tl.arange(0, D)
    safe = tl.where(use, row, 0)
    v = tl.load(table + safe[:, None] * D + cols[None, :], mask=use[:, None], other=0.0)
    tl.store(out + o[:, None] * D + cols[None, :], v, mask=valid[:, None])


def gather_kept_rows(
    table: torch.Tensor, idx: torch.Tensor, keep: torch.Tensor, kernel=gather_kept_rows_kernel
) -> torch.Tensor:
    n, D = idx.numel(), table.shape[1]
    out = torch.empty(n, D, dtype=table.dtype)
    kernel[(1,)](table, idx, keep, out, n, D=D, BLOCK=triton.next_power_of_2(n))
    return out


# -- a block pointer past the end: without and with boundary_check -------------------------
@triton.jit
def block_copy_unchecked_kernel(x, y, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    p_x = tl.make_block_ptr(x, (n,), (1,), (start,), (BLOCK,), (0,))
    p_y = tl.make_block_ptr(y, (n,), (1,), (start,), (BLOCK,), (0,))
    v = tl.load(p_x)  # expect: out-of-bounds
    tl.store(p_y, v, boundary_check=(0,))


@triton.jit
def block_copy_checked_kernel(x, y, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    p_x = tl.make_block_ptr(x, (n,), (1,), (start,), (BLOCK,), (0,))
    p_y = tl.make_block_ptr(y, (n,), (1,), (start,), (BLOCK,), (0,))
    tl.store(p_y, tl.load(p_x, boundary_check=(0,), padding_option="zero"), boundary_check=(0,))


def block_copy(
    x: torch.Tensor, kernel=block_copy_unchecked_kernel, block: int = 16
) -> torch.Tensor:
    y = torch.zeros_like(x)
    kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)
    return y


# -- an atomic whose index comes from the data, unchecked ----------------------------------
@triton.jit
def histogram_kernel(values, hist, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(values + o, mask=m, other=0)
    tl.atomic_add(hist + v, 1, mask=m)  # expect: out-of-bounds


@triton.jit
def histogram_checked_kernel(values, hist, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(values + o, mask=m, other=0)
    ok = m & (v >= 0) & (v < BINS)
    tl.atomic_add(hist + tl.where(ok, v, 0), 1, mask=ok)


def histogram(values: torch.Tensor, bins: int, checked: bool) -> torch.Tensor:
    hist = torch.zeros(bins, dtype=torch.int32)
    grid = (triton.cdiv(values.numel(), 16),)
    if checked:
        histogram_checked_kernel[grid](values, hist, values.numel(), BINS=bins, BLOCK=16)
    else:
        histogram_kernel[grid](values, hist, values.numel(), BLOCK=16)
    return hist


# -- a look-back in a loop: one finding, counted ------------------------------------------
@triton.jit
def running_diff_kernel(x, y, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    for step in range(STEPS):
        # (a program-id term: the front end rejects a constant negative offset outright)
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = o < n
        prev = tl.load(x + o - 1, mask=m)  # expect: out-of-bounds
        tl.store(y + o, tl.where(o == 0, 0.0, prev) + step, mask=m)


def running_diff(x: torch.Tensor, steps: int) -> torch.Tensor:
    y = torch.empty_like(x)
    running_diff_kernel[(1,)](x, y, x.numel(), STEPS=steps, BLOCK=triton.next_power_of_2(x.numel()))
    return y


# -- a pointer rebuilt from an integer address (no tensor argument behind it) --------------
@triton.jit
def pointer_from_address_kernel(x, y, x_address, n, BLOCK: tl.constexpr):
    src = x_address.to(tl.pointer_type(tl.float32))
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(src + o, mask=m), mask=m)
