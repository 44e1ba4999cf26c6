"""The sanitizer's per-access check on addresses alone: masked-out lanes the device does
not issue are never reported, issued ones outside the storage always are (with why they
are issued), which lanes an access keeps, how stores of one launch are told apart by
program and by the bytes they store; and the reversible patches it is installed with."""

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


ISSUED = "the mask is not one the compiler clips by: a compare of values loaded from memory"


def check(
    addr,
    active=None,
    tag=0,
    *,
    masked_issued=ISSUED,
    track=False,
    program=0,
    on=None,
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


@pytest.mark.parametrize(
    ("first", "active"),
    [
        (12, [i < 4 for i in range(16)]),  # an `offs < n` tail
        (40, [False] * 16),  # a tile that starts past the end
        (1000, [False]),
        (-8, [i >= 8 for i in range(16)]),  # a window shifted before the start, `offs >= lo`
        (-(1 << 40), [False]),  # far below the start: the offset wraps in uint64
    ],
)
def test_masked_lanes_the_device_does_not_issue_are_silent_wherever_they_point(first, active):
    """A mask the compiler clips the copy by (and a block pointer's boundary_check)."""
    count = len(active)
    violations, new_mask, _ = check(lanes(first, count), np.array(active), masked_issued=None)
    assert (violations, new_mask) == ([], None)


@pytest.mark.parametrize(
    ("first", "active", "count", "element", "where"),
    [
        # the tail of the block, past the end
        (12, [i < 4 for i in range(16)], 12, 16, "element 16 of a 16-element storage"),
        # every lane masked: the whole block is still issued
        (40, [False] * 16, 16, 40, "element 40 of a 16-element storage"),
        (-2, [False, False, True, True], 2, -2, "2 elements before its storage start"),
        (-(1 << 40), [False], 1, -(1 << 40), "1,099,511,627,776 elements before its storage start"),
    ],
)
def test_issued_masked_lanes_outside_the_storage_are_reported(first, active, count, element, where):
    violations, new_mask, _ = check(lanes(first, len(active)), np.array(active))
    (v,) = violations
    assert (v.kind, v.lanes, v.element_offset) == (MASKED_OUT_OF_BOUNDS, count, element)
    assert v.detail.endswith(f"masked out but still issued on Ascend, first at {where}: {ISSUED}")
    assert new_mask is None  # masked lanes stay masked: nothing is performed there


def test_issued_masked_lanes_inside_the_storage_are_silent():
    """A gather whose dropped slot keeps an id inside the table: read, but harmless."""
    addr = np.array([START + 4 * e for e in (0, 15, 3)], dtype=np.uint64)
    assert check(addr, np.array([True, False, True]))[0] == []


def test_masked_stores_follow_the_rules_of_loads():
    one = launch(X, Y)
    addr = np.array([START + 4 * e for e in (0, 1000, 1)], dtype=np.uint64)
    violations, _, _ = check(addr, np.array([True, False, True]), track=True, on=one)
    assert [v.kind for v in violations] == [MASKED_OUT_OF_BOUNDS]
    clipped = check(
        lanes(40, 16), np.zeros(16, dtype=bool), masked_issued=None, track=True, program=1, on=one
    )
    assert clipped[0] == []
    (v,), _, _ = check(lanes(-2, 4), np.array([False] * 4), track=True, program=2, on=one)
    assert (v.kind, v.element_offset) == (MASKED_OUT_OF_BOUNDS, -2)


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
