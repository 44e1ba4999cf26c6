"""The sanitizer's per-access check on addresses alone: which masked-out lanes count as
issued (before the start always; past the end only between the access's active lanes,
beyond the tail allowance), which lanes an access keeps, how stores of one launch are
told apart by program and by the bytes they store; and the reversible patches it is
installed with."""

from __future__ import annotations

import types

import numpy as np
import pytest

from ascend_lint import reversible_patch
from ascend_lint.sanitizer.checks import Launch
from ascend_lint.sanitizer.findings import (
    DUPLICATE_STORE,
    MASKED_OUT_OF_BOUNDS,
    OUT_OF_BOUNDS,
    RACE,
)
from ascend_lint.sanitizer.storage import Storage

START = 1 << 20  # a storage of 16 float32 at this address
X = Storage("x", (16,), "float32", START, 64, 0)
Y = Storage("y", (8,), "float32", START + 4096, 32, 0)


def launch(*storages: Storage) -> Launch:
    return Launch("k", "/k.py", None, list(storages))


def lanes(first_element: int, count: int, storage: Storage = X) -> np.ndarray:
    return np.array(
        [(storage.start + 4 * (first_element + i)) % (1 << 64) for i in range(count)],
        dtype=np.uint64,
    )


def check(
    addr,
    active=None,
    tag=0,
    *,
    masked_issued=True,
    track=False,
    program=0,
    on=None,
    shape=None,
    values=None,
):
    return (on or launch(X, Y)).check(
        addr,
        active,
        tag,
        4,
        masked_issued=masked_issued,
        track_stores=track,
        program=program,
        shape=shape,
        values=values,
    )


def test_lanes_inside_the_storage_are_silent():
    violations, new_mask, unattributed = check(lanes(0, 16))
    assert (violations, new_mask, unattributed) == ([], None, 0)


def test_an_active_lane_past_the_end_is_out_of_bounds_and_is_not_performed():
    violations, new_mask, _ = check(lanes(12, 8))
    (v,) = violations
    assert (v.kind, v.lanes, v.element_offset, v.storage_index) == (OUT_OF_BOUNDS, 4, 16, 0)
    assert new_mask.tolist() == [True] * 4 + [False] * 4


def test_an_active_lane_before_the_start():
    (v,), new_mask, _ = check(lanes(-1, 4))
    assert (v.kind, v.element_offset) == (OUT_OF_BOUNDS, -1)
    assert "1 element before its storage start" in v.detail
    assert new_mask.tolist() == [False, True, True, True]


@pytest.mark.parametrize(("first", "count"), [(16, 16), (17, 16), (1000, 16), (17, 1)])
def test_an_access_entirely_masked_out_is_silent_however_far_past_the_end(first, count):
    """A tile that starts past the end under a ``rows < n`` mask: an empty clipped copy."""
    violations, new_mask, _ = check(lanes(first, count), np.zeros(count, dtype=bool))
    assert (violations, new_mask) == ([], None)


@pytest.mark.parametrize(("first", "count"), [(12, 16), (14, 1024)])
def test_masked_lanes_after_the_active_ones_are_a_clipped_copy(first, count):
    """An ``offs < n`` tail: the masked lanes all lie after the active ones, however far
    the block reaches past the end."""
    active = np.array([first + i < 16 for i in range(count)])
    violations, new_mask, _ = check(lanes(first, count), active)
    assert (violations, new_mask) == ([], None)


def test_a_row_mask_with_padding_columns_on_a_2d_tile_is_a_clipped_copy():
    """Rows 2..5 x columns 0..7 of a 4x4 tensor, masked ``(r < 4) & (c < 4)``: the
    masked padding columns of row 2 lie below row 3's active lanes in memory, but
    outside the box of the active lanes in the tile."""
    rows, cols = np.arange(2, 6)[:, None], np.arange(8)[None, :]
    addr = (START + 4 * (rows * 4 + cols)).astype(np.uint64).reshape(-1)
    active = ((rows < 4) & (cols < 4)).reshape(-1)
    violations, _, _ = check(addr, active, shape=(4, 8))
    assert violations == []


def gather(elements, active):
    return np.array([START + 4 * e for e in elements], dtype=np.uint64), np.array(active)


def test_a_masked_lane_between_active_lanes_far_past_the_end_is_reported():
    """A gather whose masked slot holds a large sentinel id: any copy that keeps the
    active lanes issues the lanes between them."""
    addr, active = gather([0, 1, 1000, 2], [True, True, False, True])
    (v,), new_mask, _ = check(addr, active)
    assert (v.kind, v.lanes, v.element_offset) == (MASKED_OUT_OF_BOUNDS, 1, 1000)
    assert new_mask is None
    # the allowance is the active lanes' footprint: elements 0..2, 12 bytes
    assert "beyond the tail allowance of 12 bytes" in v.detail


@pytest.mark.parametrize(("element", "reported"), [(19, False), (20, True)])
def test_the_tail_allowance_is_one_footprint_of_the_active_lanes(element, reported):
    # active lanes at elements 0 and 3: a 16-byte footprint; element 19 of a 16-element
    # storage ends 16 bytes past the end, element 20 ends 20 bytes past it
    addr, active = gather([0, element, 3], [True, False, True])
    violations, _, _ = check(addr, active)
    assert [v.kind for v in violations] == ([MASKED_OUT_OF_BOUNDS] if reported else [])


def test_the_box_of_the_active_lanes_is_taken_per_dimension():
    # active lanes on the diagonal of a 2x2 access: the box is the whole access
    addr, active = gather([0, 1000, 2000, 3], [True, False, False, True])
    (v,), _, _ = check(addr, active, shape=(2, 2))
    assert (v.kind, v.lanes) == (MASKED_OUT_OF_BOUNDS, 2)
    # active lanes in the first row only: the second row lies outside the box
    addr, active = gather([0, 1, 1000, 2000], [True, True, False, False])
    assert check(addr, active, shape=(2, 2))[0] == []


def test_masked_stores_follow_the_rules_of_loads():
    one = launch(X, Y)
    addr, active = gather([0, 1000, 1], [True, False, True])
    violations, _, _ = check(addr, active, track=True, on=one)
    assert [v.kind for v in violations] == [MASKED_OUT_OF_BOUNDS]
    assert check(lanes(40, 16), np.zeros(16, dtype=bool), track=True, program=1, on=one)[0] == []
    (v,), _, _ = check(lanes(-2, 4), np.array([False] * 4), track=True, program=2, on=one)
    assert (v.kind, v.element_offset) == (MASKED_OUT_OF_BOUNDS, -2)


def test_any_masked_lane_before_the_start_is_reported():
    addr = lanes(-1, 4)
    (v,), _, _ = check(addr, np.array([False, True, True, True]))
    assert (v.kind, v.lanes, v.element_offset) == (MASKED_OUT_OF_BOUNDS, 1, -1)


def test_a_masked_lane_before_the_start_is_reported_even_with_every_lane_masked():
    (v,), _, _ = check(lanes(-3, 1), np.array([False]))
    assert (v.kind, v.element_offset) == (MASKED_OUT_OF_BOUNDS, -3)
    assert "3 elements before its storage start" in v.detail


def test_a_negative_offset_far_below_the_start_wraps_and_is_still_before_it():
    (v,), _, _ = check(lanes(-(1 << 40), 1), np.array([False]))
    assert v.kind == MASKED_OUT_OF_BOUNDS and v.element_offset == -(1 << 40)


def test_masked_lanes_the_device_does_not_issue_are_not_checked():
    # block-pointer lanes clipped by boundary_check
    violations, _, _ = check(
        lanes(-8, 32), np.array([0 <= i - 8 < 16 for i in range(32)]), masked_issued=False
    )
    assert violations == []


def test_untagged_lanes_are_attributed_by_address_and_the_rest_noted():
    addr = np.concatenate([lanes(0, 2), lanes(0, 2, Y), np.array([12345], dtype=np.uint64)])
    violations, _, unattributed = check(addr, tag=None)
    assert violations == [] and unattributed == 1


def test_a_per_lane_tag_checks_each_lane_against_its_own_storage():
    # lane 0 from x, lane 1 from y: y's lane is one element past y's end
    addr = np.array([START, Y.start + 32], dtype=np.uint64)
    (v,), new_mask, _ = check(addr, tag=np.array([0, 1], dtype=np.int32))
    assert (v.kind, v.storage_index, v.element_offset) == (OUT_OF_BOUNDS, 1, 8)
    assert new_mask.tolist() == [True, False]


def test_stores_of_two_programs_to_one_element_race():
    one = launch(X, Y)
    check(lanes(0, 8), track=True, program=0, on=one)
    check(lanes(0, 8), track=True, program=0, on=one)  # the same program again: fine
    assert check(lanes(8, 8), track=True, program=1, on=one)[0] == []
    (v,), _, _ = check(lanes(6, 4), track=True, program=2, on=one)
    assert (v.kind, v.lanes, v.element_offset, v.other_program) == (RACE, 4, 6, 0)


def test_masked_out_and_out_of_bounds_lanes_store_nothing():
    one = launch(X, Y)
    check(lanes(0, 16), np.array([i < 4 for i in range(16)]), track=True, program=0, on=one)
    assert check(lanes(4, 12), track=True, program=1, on=one)[0] == []
    # program 2's lanes past the end are out of bounds, not a race
    violations, _, _ = check(
        lanes(14, 4), np.array([False, False, True, True]), track=True, program=2, on=one
    )
    assert [v.kind for v in violations] == [OUT_OF_BOUNDS]


def test_a_second_program_storing_the_same_bytes_is_duplicate_work_not_a_race():
    pytest.importorskip("triton")  # the stored bytes are read back through its interpreter
    memory = np.arange(16, dtype=np.float32)
    real = Storage("x", (16,), "float32", memory.ctypes.data, 64, 0)
    one = launch(real)

    def store(first, count, program, values):
        addr = np.array([real.start + 4 * (first + i) for i in range(count)], dtype=np.uint64)
        found = check(addr, track=True, program=program, on=one, values=values)[0]
        memory[first : first + count] = values  # what the store then does
        return found

    assert store(0, 8, 0, memory[0:8].copy()) == []
    # program 1 stores elements 4..11; 4..7 with the bytes program 0 left there
    (twice,) = store(4, 8, 1, memory[4:12].copy())
    assert (twice.kind, twice.lanes, twice.element_offset) == (DUPLICATE_STORE, 4, 4)
    assert twice.other_program == 0
    # program 2 stores elements 6..9: 6 and 7 with other bytes, 8 and 9 with the same
    race, same = store(6, 4, 2, np.array([60, 70, 8, 9], dtype=np.float32))
    assert (race.kind, race.lanes, race.element_offset, race.other_program) == (RACE, 2, 6, 1)
    assert (same.kind, same.lanes, same.element_offset) == (DUPLICATE_STORE, 2, 8)


def test_a_new_launch_starts_with_no_owners():
    check(lanes(0, 4), track=True, program=0)
    assert check(lanes(0, 4), track=True, program=1)[0] == []  # another Launch


# -- reversible patches ------------------------------------------------------------------
def test_patches_undone_in_any_order_leave_the_original():
    owner = types.SimpleNamespace(f=lambda x: x)
    calls = []

    def layer(name):
        def make(inner):
            def wrapped(x):
                calls.append(name)
                return inner(x)

            return wrapped

        return make

    undo_a = reversible_patch.wrap(owner, "f", layer("a"))
    undo_b = reversible_patch.wrap(owner, "f", layer("b"))
    assert owner.f(1) == 1 and calls == ["b", "a"]
    undo_a()  # the inner layer first: it turns into a pass-through
    calls.clear()
    assert owner.f(2) == 2 and calls == ["b"]
    undo_b()
    calls.clear()
    assert owner.f(3) == 3 and calls == []
    undo_b()  # twice is harmless


def test_a_patch_on_an_instance_is_removed_again():
    class Builder:
        def op(self):
            return "class"

    builder = Builder()
    undo = reversible_patch.wrap(builder, "op", lambda inner: lambda: "patched " + inner())
    assert builder.op() == "patched class"
    undo()
    assert "op" not in vars(builder) and builder.op() == "class"
