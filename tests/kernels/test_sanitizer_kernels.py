"""The sanitizer on kernels that touch memory they do not own, and on their fixes.

Each defective kernel must be reported with exactly the kinds and lines its
``# expect:`` comments name (a finding anywhere else fails), and its fix must be clean
and give the right numbers.  The defective launches are marked
``ascend_sanitize_allow``: this project runs its tests under ``--ascend-sanitize=strict``,
and these tests make their findings on purpose.
"""

import re
from pathlib import Path

import _sanitizer_kernels as k
import pytest
import torch

from ascend_lint.sanitizer import MASKED_OUT_OF_BOUNDS, OUT_OF_BOUNDS, RACE, Sanitizer

SOURCE = Path(k.__file__).resolve()
EXPECT = re.compile(r"#\s*expect:\s*([a-z-]+)")


def expected(*kernels) -> set[tuple[str, int]]:
    """The (kind, line) pairs the ``# expect:`` comments of these jit functions name."""
    lines = SOURCE.read_text().splitlines()
    found = set()
    for kernel in kernels:
        code = kernel.fn.__code__
        first = code.co_firstlineno
        last = max(n for _, _, n in code.co_lines() if n is not None)
        for number in range(first, last + 1):
            m = EXPECT.search(lines[number - 1])
            if m:
                found.add((m.group(1), number))
    return found


def reported(sanitizer: Sanitizer) -> set[tuple[str, int]]:
    assert all(f.site.path == str(SOURCE) for f in sanitizer.findings.values())
    return {(f.kind, f.site.line) for f in sanitizer.findings.values()}


def run(fn, *args, **kwargs):
    with Sanitizer() as sanitizer:
        result = fn(*args, **kwargs)
    return sanitizer, result


def ramp(n, dtype=torch.float32):
    return torch.arange(n, dtype=dtype) + 1


# -- the defects, each against its comments ------------------------------------------------
@pytest.mark.ascend_sanitize_allow(kind=OUT_OF_BOUNDS)
def test_where_arm_look_back_reads_before_the_tensor():
    x = ramp(20)
    sanitizer, y = run(k.shift_right, x)
    assert reported(sanitizer) == expected(k.shift_right_where_kernel)
    # the select hides it from the numbers: they are right
    torch.testing.assert_close(y, torch.cat([torch.zeros(1), x[:-1]]))
    (found,) = sanitizer.findings.values()
    assert (found.storage.param, found.storage.shape, found.storage.dtype) == (
        "x",
        (20,),
        "float32",
    )
    assert found.element_offset == -1
    assert found.program == (0, 0, 0)
    assert found.lanes == 1 and found.program_count == 1
    assert found.op == "load" and found.site.kernel == "shift_right_where_kernel"


def test_clamped_look_back_is_clean():
    x = ramp(20)
    sanitizer, y = run(k.shift_right, x, kernel=k.shift_right_clamped_kernel)
    assert not sanitizer.findings
    torch.testing.assert_close(y, torch.cat([torch.zeros(1), x[:-1]]))


@pytest.mark.ascend_sanitize_allow(kind=OUT_OF_BOUNDS)
def test_an_access_in_a_helper_names_the_helper_line_and_the_kernel_call():
    sanitizer, _ = run(k.diff, ramp(12))
    assert reported(sanitizer) == expected(k._previous)
    (found,) = sanitizer.findings.values()
    assert found.site.function == "_previous" and found.site.kernel == "diff_kernel"
    source = SOURCE.read_text().splitlines()
    assert "_previous(x, o, m)" in source[found.site.call_line - 1]


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100])
def test_an_ordinary_tail_mask_is_silent(n):
    x = ramp(n)
    sanitizer, y = run(k.scale, x)
    assert not sanitizer.findings and not sanitizer.unattributed
    torch.testing.assert_close(y, x * 2)


@pytest.mark.ascend_sanitize_allow(kind=MASKED_OUT_OF_BOUNDS)
def test_a_padding_slot_masked_but_not_clamped():
    table = ramp(5 * 4).reshape(5, 4)
    idx = torch.tensor([3, -1, 0, 4, -1], dtype=torch.int32)
    sanitizer, out = run(k.gather_rows, table, idx)
    assert reported(sanitizer) == expected(k.gather_rows_kernel)
    (found,) = sanitizer.findings.values()
    assert found.element_offset == -4  # row -1 of a 4-wide table
    # two padding slots and the three lanes of the 8-wide block past n_idx (other=-1),
    # four columns each
    assert found.lanes == (2 + 3) * 4
    clean, fixed = run(k.gather_rows, table, idx, kernel=k.gather_rows_clamped_kernel)
    assert not clean.findings
    torch.testing.assert_close(fixed, out)
    want = torch.where((idx >= 0)[:, None], table[idx.clamp(min=0).long()], torch.zeros(1))
    torch.testing.assert_close(fixed, want)


@pytest.mark.ascend_sanitize_allow(kind=OUT_OF_BOUNDS)
def test_an_undersized_workspace():
    x = ramp(8)
    sanitizer, out = run(k.outer_square_sum, x, workspace_elements=8)
    assert reported(sanitizer) == expected(k.outer_square_kernel)
    (found,) = sanitizer.findings.values()
    assert (found.storage.param, found.op, found.element_offset) == ("ws", "store", 8)
    assert found.lanes == 64 - 8
    clean, right = run(k.outer_square_sum, x, workspace_elements=64)
    assert not clean.findings
    torch.testing.assert_close(right, out)
    torch.testing.assert_close(right[0], x.sum() ** 2)


@pytest.mark.ascend_sanitize_allow(kind=RACE)
def test_a_tile_larger_than_the_programs_slice_races_with_the_neighbour():
    x = torch.randn(14, 8, generator=torch.Generator().manual_seed(0))
    want = x * 2
    sanitizer, y = run(k.scale_row_slices, x.clone(), tile_rows=8, slice_rows=4, in_place=True)
    assert reported(sanitizer) == expected(k.scale_row_slices_kernel)
    (found,) = sanitizer.findings.values()
    assert found.program == (1, 0, 0) and found.other_program == (0, 0, 0)
    assert found.element_offset == 4 * 8  # the first row of program 1's slice
    # programs 1, 2 and 3 each store the first rows of their slice again, scaled twice
    assert (found.lanes, found.occurrences) == (4 * 8 + 4 * 8 + 2 * 8, 3)
    assert not sanitizer.duplicates
    assert not torch.allclose(y, want)  # the rows scaled twice: wrong here already
    clean, right = run(k.scale_row_slices, x.clone(), tile_rows=4, slice_rows=4, in_place=True)
    assert not clean.findings and not clean.duplicates
    torch.testing.assert_close(right, want)


def test_overlapping_tiles_that_store_the_same_bytes_are_duplicate_work_not_a_finding():
    """Out of place, the overlapped rows get the bytes already there: counted in the
    summary, not a race."""
    x = torch.randn(14, 8, generator=torch.Generator().manual_seed(0))
    sanitizer, y = run(k.scale_row_slices, x, tile_rows=8, slice_rows=4)
    assert not sanitizer.findings
    (twice,) = sanitizer.duplicates.values()
    assert (twice.tensor, twice.kernel) == ("y", "scale_row_slices_kernel")
    assert twice.line == next(line for kind, line in expected(k.scale_row_slices_kernel))
    assert (twice.lanes, twice.occurrences) == (4 * 8 + 4 * 8 + 2 * 8, 3)
    torch.testing.assert_close(y, x * 2)


@pytest.mark.ascend_sanitize_allow(kind=RACE)
def test_programs_sharing_one_global_workspace_race():
    x = torch.randn(6, 16, generator=torch.Generator().manual_seed(1))
    sanitizer, sums = run(k.row_sums, x, shared=True)
    assert reported(sanitizer) == expected(k.row_sums_shared_kernel)
    (found,) = sanitizer.findings.values()
    assert found.storage.param == "ws" and found.element_offset == 0
    assert found.occurrences == 5 and found.program_count == 5  # programs 1..5 overwrite 0's
    assert found.lanes == 5 * 16 and not sanitizer.duplicates  # different rows: other bytes
    # the interpreter runs one program at a time, so the numbers come out right here
    torch.testing.assert_close(sums, (x * 2).sum(dim=1))
    clean, right = run(k.row_sums, x, shared=False)
    assert not clean.findings
    torch.testing.assert_close(right, (x * 2).sum(dim=1))


@pytest.mark.ascend_sanitize_allow(kind=OUT_OF_BOUNDS)
@pytest.mark.parametrize("n_rows", [33, 40])
def test_unmasked_loads_past_the_end_when_rows_are_not_a_tile_multiple(n_rows):
    x = torch.randn(n_rows, 4, generator=torch.Generator().manual_seed(2))
    sanitizer, _ = run(k.copy_rows, x)
    assert reported(sanitizer) == expected(k.copy_rows_unmasked_kernel)
    (found,) = sanitizer.findings.values()
    assert found.element_offset == n_rows * 4  # the first element past the end
    assert found.lanes == (64 - n_rows) * 4
    clean, right = run(k.copy_rows, x, kernel=k.copy_rows_masked_kernel)
    assert not clean.findings
    torch.testing.assert_close(right, x)


@pytest.mark.parametrize("n_rows", [5, 33])
def test_tiles_that_start_past_the_end_under_a_row_mask_are_silent(n_rows):
    """A grid sized from the core count: the programs past the last tile have every lane
    masked out, an empty clipped copy, however far past the end their tile starts."""
    x = torch.randn(n_rows, 4, generator=torch.Generator().manual_seed(5))
    sanitizer, y = run(k.copy_rows, x, kernel=k.copy_rows_masked_kernel, tile_rows=8, programs=40)
    assert not sanitizer.findings
    torch.testing.assert_close(y, x)


CLIPS_NOT = "the mask is not one the compiler clips by: "


@pytest.mark.ascend_sanitize_allow(kind=MASKED_OUT_OF_BOUNDS)
def test_a_lower_bound_mask_on_a_subtraction_issues_the_whole_block():
    x = ramp(40)
    sanitizer, y = run(k.causal_shift, x, shift=3)
    assert reported(sanitizer) == expected(k.causal_shift_kernel)
    (found,) = sanitizer.findings.values()
    assert (found.element_offset, found.program) == (-3, (0, 0, 0))
    # the whole block is issued: the first block's 3 lanes before x, and the last block's
    # lanes o = 43..47, which read x[40..44] past its end
    assert (found.lanes, found.program_count) == (3 + 5, 2)
    assert CLIPS_NOT + "a compare of a tl.arange offset with a value subtracted" in found.detail
    clean, fixed = run(k.causal_shift, x, shift=3, kernel=k.causal_shift_clipped_kernel)
    assert not clean.findings
    torch.testing.assert_close(fixed, y)
    torch.testing.assert_close(fixed, torch.cat([torch.zeros(3), x[:-3]]))


@pytest.mark.parametrize("mask", ["at least, at most", "literal on the left"])
def test_bounds_on_the_tl_arange_offset_clip_the_copy(mask):
    """`o >= SHIFT`, `o <= n - 1` and `SHIFT <= o` (the literal folded to the right): the
    compiler copies the box they describe, so the lanes before x and past its end are
    never read."""
    x = ramp(40)
    sanitizer, y = run(k.look_back, x, 3, mask)
    assert not sanitizer.findings
    torch.testing.assert_close(y, torch.cat([torch.zeros(3), x[:-3]]))


@pytest.mark.ascend_sanitize_allow(kind=MASKED_OUT_OF_BOUNDS)
@pytest.mark.parametrize(
    ("mask", "why"),
    [
        ("greater than", "a `>` compare (the compiler parses <, <=, >= and ==)"),
        ("bound on the left", "a compare with the tl.arange offset on the right (n > offs)"),
        ("or", "masks combined with |"),
        ("where", "a mask built with tl.where"),
        ("not", "a mask negated with ~ or combined with ^"),
    ],
)
def test_masks_the_compiler_does_not_parse_issue_the_whole_block(mask, why):
    x = ramp(40)
    sanitizer, y = run(k.look_back, x, 3, mask)
    assert reported(sanitizer) == expected(k.look_back_kernel)
    (found,) = sanitizer.findings.values()
    assert (found.element_offset, found.lanes) == (-3, 3 + 5)
    assert found.detail.endswith(CLIPS_NOT + why)
    torch.testing.assert_close(y, torch.cat([torch.zeros(3), x[:-3]]))


def test_a_tile_shifted_before_the_tensor_under_a_lower_bound_is_clipped():
    """vLLM-Ascend's lightning attention reads the last rows of a block in a tile that
    starts before K, masked by `rows >= shift`: the copy starts at row `shift`."""
    k_rows = ramp(5 * 8).reshape(5, 8)
    sanitizer, out = run(k.last_rows, k_rows, tile_rows=8)
    assert not sanitizer.findings
    torch.testing.assert_close(out, torch.cat([torch.zeros(3, 8), k_rows]))


def test_a_bad_id_masked_by_a_scalar_flag_on_a_clipped_row_is_not_read():
    table = ramp(10 * 8).reshape(10, 8)
    ids = torch.tensor([3, 10 + 7, -2, 9], dtype=torch.int32)
    sanitizer, out = run(k.embedding, table, ids)
    assert not sanitizer.findings
    valid = (ids >= 0) & (ids < 10)
    want = torch.where(valid[:, None], table[ids.clamp(0, 9).long()], torch.zeros(1))
    torch.testing.assert_close(out, want)


@pytest.mark.ascend_sanitize_allow(kind=MASKED_OUT_OF_BOUNDS)
def test_a_bad_id_masked_by_a_scalar_flag_on_a_multiplied_offset_is_read():
    """mojo_opset's NF4 embedding: the id vocab+7's row lies past the table, every lane
    masked out by the scalar flag, but the compare of `2 * j` leaves the compiler no box:
    the row is read."""
    table = ramp(10 * 8).reshape(10, 8)
    ids = torch.tensor([3, 10 + 7, -2, 9], dtype=torch.int32)
    sanitizer, out = run(k.embedding, table, ids, kernel=k.embedding_pairs_kernel)
    assert reported(sanitizer) == expected(k.embedding_pairs_kernel)
    for found in sanitizer.findings.values():
        # two bad ids, four lanes each: row 17 of a 10-row table first, then row -2
        assert (found.storage.param, found.lanes, found.program_count) == ("table", 8, 2)
        assert found.element_offset in (17 * 8, 17 * 8 + 1)
        assert found.detail.endswith(CLIPS_NOT + "a compare of a multiplied tl.arange offset")
    clean, rows = run(k.embedding, table, ids)
    assert not clean.findings
    torch.testing.assert_close(out, rows)


@pytest.mark.ascend_sanitize_allow(kind=MASKED_OUT_OF_BOUNDS)
def test_a_masked_scalar_load_is_issued():
    """A grid sized from the core count: 10 ids over 4 programs of 3 slots, the last two
    slots spare.  Their id loads read past the ids."""
    ids = torch.arange(10, dtype=torch.int32) + 1
    sanitizer, sums = run(k.id_sums, ids, programs=4)
    assert reported(sanitizer) == expected(k.id_sums_kernel)
    (found,) = sanitizer.findings.values()
    assert (found.op, found.element_offset, found.lanes, found.program) == (
        "load",
        10,
        2,
        (3, 0, 0),
    )
    assert "a masked scalar load is issued whatever its mask" in found.detail
    assert sums.tolist() == [6, 15, 24, 10]
    clean, right = run(k.id_sums, ids, programs=4, kernel=k.id_sums_clamped_kernel)
    assert not clean.findings
    assert right.tolist() == [6, 15, 24, 10]


@pytest.mark.ascend_sanitize_allow(kind=MASKED_OUT_OF_BOUNDS)
def test_a_flattened_offset_mask_issues_the_whole_last_tile():
    x = torch.randn(10, 4, generator=torch.Generator().manual_seed(6))
    sanitizer, y = run(k.copy_rows, x, kernel=k.copy_rows_flat_mask_kernel, tile_rows=8)
    assert reported(sanitizer) == expected(k.copy_rows_flat_mask_kernel)
    found = {f.op: f for f in sanitizer.findings.values()}
    # rows 10..15 of the second tile: read from x, read and written back in y
    assert {op: (f.storage.param, f.element_offset, f.lanes) for op, f in found.items()} == {
        "load": ("x", 40, 6 * 4),
        "store": ("y", 40, 6 * 4),
    }
    assert found["load"].detail.endswith(CLIPS_NOT + "a compare of a multiplied tl.arange offset")
    torch.testing.assert_close(y, x)


@pytest.mark.ascend_sanitize_allow(kind=MASKED_OUT_OF_BOUNDS)
def test_a_loaded_mask_between_kept_slots_reaches_far_past_the_end():
    table = ramp(5 * 4).reshape(5, 4)
    idx = torch.tensor([3, 1_000_000, 0, 4, 2], dtype=torch.int32)  # slot 1 dropped
    keep = torch.tensor([1, 0, 1, 1, 1], dtype=torch.int8)
    sanitizer, out = run(k.gather_kept_rows, table, idx, keep)
    assert reported(sanitizer) == expected(k.gather_kept_rows_kernel)
    (found,) = sanitizer.findings.values()
    assert (found.element_offset, found.lanes) == (1_000_000 * 4, 4)
    assert found.detail.endswith(CLIPS_NOT + "a compare of values loaded from memory")
    clean, fixed = run(
        k.gather_kept_rows, table, idx, keep, kernel=k.gather_kept_rows_clamped_kernel
    )
    assert not clean.findings
    torch.testing.assert_close(fixed, out)
    want = torch.where((keep != 0)[:, None], table[idx.clamp(max=4).long()], torch.zeros(1))
    torch.testing.assert_close(fixed, want)


def test_unmasked_loads_on_a_tile_multiple_are_clean():
    x = torch.randn(64, 4, generator=torch.Generator().manual_seed(3))
    sanitizer, y = run(k.copy_rows, x)
    assert not sanitizer.findings
    torch.testing.assert_close(y, x)


@pytest.mark.ascend_sanitize_allow(kind=OUT_OF_BOUNDS)
def test_a_block_pointer_past_the_end_without_boundary_check():
    x = ramp(20)
    sanitizer, _ = run(k.block_copy, x)
    assert reported(sanitizer) == expected(k.block_copy_unchecked_kernel)
    clean, y = run(k.block_copy, x, kernel=k.block_copy_checked_kernel)
    assert not clean.findings
    torch.testing.assert_close(y, x)


@pytest.mark.ascend_sanitize_allow(kind=OUT_OF_BOUNDS)
def test_an_atomic_indexed_by_data():
    values = torch.tensor([0, 3, 4, 1, 4, 2, 3, 3], dtype=torch.int32)
    sanitizer, hist = run(k.histogram, values, bins=4, checked=False)
    assert reported(sanitizer) == expected(k.histogram_kernel)
    (found,) = sanitizer.findings.values()
    assert (found.op, found.storage.param, found.element_offset, found.lanes) == (
        "atomic",
        "hist",
        4,
        2,
    )
    # the out-of-bounds increments were not performed (nothing outside hist changed)
    assert hist.tolist() == [1, 1, 1, 3]
    clean, right = run(k.histogram, values, bins=4, checked=True)
    assert not clean.findings
    assert right.tolist() == [1, 1, 1, 3]


@pytest.mark.ascend_sanitize_allow(kind=OUT_OF_BOUNDS)
def test_a_defect_in_a_loop_is_one_finding_with_a_count():
    sanitizer, _ = run(k.running_diff, ramp(10), steps=50)
    assert reported(sanitizer) == expected(k.running_diff_kernel)
    (found,) = sanitizer.findings.values()
    assert found.occurrences == 50 and found.lanes == 50


# -- what a kernel may touch: the whole storage behind a view ------------------------------
def test_a_view_may_read_the_storage_before_it():
    base = ramp(21)
    sanitizer, y = run(k.shift_right, base[1:])  # x[-1] of the view is base[0]
    assert not sanitizer.findings
    torch.testing.assert_close(y, torch.cat([torch.zeros(1), base[1:-1]]))


def test_non_contiguous_views_and_aliased_arguments():
    base = torch.randn(8, 6, generator=torch.Generator().manual_seed(4))
    column_major = base.t()  # a strided view: its storage is base's
    out = torch.empty(48)
    with Sanitizer() as sanitizer:
        k.scale_kernel[(3,)](column_major, out, 48, BLOCK=16)
    assert not sanitizer.findings
    torch.testing.assert_close(out, base.reshape(-1) * 2)  # storage order
    # the same tensor as input and output: every program writes only its own block
    x = ramp(40)
    with Sanitizer() as aliased:
        k.scale_kernel[(3,)](x, x, 40, BLOCK=16)
    assert not aliased.findings
    torch.testing.assert_close(x, ramp(40) * 2)


def test_zero_element_tensors():
    x = torch.empty(0)
    sanitizer, y = run(k.scale, x)
    assert not sanitizer.findings and y.numel() == 0
    with Sanitizer() as masked:
        k.scale_kernel[(1,)](x, torch.empty(0), 0, BLOCK=16)
    assert not masked.findings


# -- pointers with no tensor behind them ---------------------------------------------------
def test_pointers_from_integers_are_attributed_by_address():
    """A pointer the kernel rebuilds from an integer carries no tag: its lanes are checked
    against the argument whose storage holds them, and noted when none does."""
    x = ramp(16)
    y = torch.empty_like(x)
    with Sanitizer() as sanitizer:
        k.pointer_from_address_kernel[(1,)](x, y, x.data_ptr(), 16, BLOCK=16)
    assert not sanitizer.findings and not sanitizer.unattributed
    torch.testing.assert_close(y, x)
    elsewhere = ramp(16) * 3  # a tensor the launch was not given
    with Sanitizer() as blind:
        k.pointer_from_address_kernel[(1,)](x, y, elsewhere.data_ptr(), 16, BLOCK=16)
    assert not blind.findings
    (note,) = blind.unattributed.values()
    assert (note.op, note.lanes) == ("load", 16)
    torch.testing.assert_close(y, elsewhere)


# -- the provenance tags through the builder's pointer ops ----------------------------------
def test_a_pointer_selected_from_two_tensors_keeps_one_storage_per_lane():
    """`tl.where(c, a + o, b + o)` mixes two storages (the Ascend front end rejects it, so
    no kernel here launches it): each lane keeps the storage it came from."""
    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle, interpreter_builder

    from ascend_lint.sanitizer import provenance

    undo = provenance.install(interpreter_builder)
    try:
        pointer = tl.pointer_type(tl.float32)
        a = TensorHandle(np.full(4, 1000, dtype=np.uint64), pointer)
        b = TensorHandle(np.full(4, 5000, dtype=np.uint64), pointer)
        provenance.set_tag(a, 0)
        provenance.set_tag(b, 1)
        offsets = TensorHandle(np.arange(4, dtype=np.int32), tl.int32)
        a_lanes = interpreter_builder.create_addptr(a, offsets)
        assert provenance.tag_of(a_lanes) == 0
        cond = TensorHandle(np.array([True, False, True, False]), tl.int1)
        picked = interpreter_builder.create_select(cond, a_lanes, b)
        assert provenance.tag_of(picked).tolist() == [0, 1, 0, 1]
        grown = interpreter_builder.create_expand_dims(picked, 0)
        assert provenance.tag_of(grown).tolist() == [[0, 1, 0, 1]]
        same = interpreter_builder.create_select(cond, a_lanes, a)
        assert provenance.tag_of(same) == 0
        # an offset minus an offset is no address
        assert provenance.tag_of(interpreter_builder.create_sub(offsets, offsets)) is None
    finally:
        undo()  # (under --ascend-sanitize the session's own layers stay)
