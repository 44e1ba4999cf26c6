"""The sanitizer's per-access check on addresses alone (no interpreter): where the tail
allowance ends, what "before the start" is, which lanes an access keeps, how stores of
one launch are told apart by program; and the reversible patches it is installed with."""

from __future__ import annotations

import types

import numpy as np
import pytest

from ascend_lint import reversible_patch
from ascend_lint.sanitizer.checks import Launch
from ascend_lint.sanitizer.findings import MASKED_OUT_OF_BOUNDS, OUT_OF_BOUNDS, RACE
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


def check(addr, active=None, tag=0, *, masked_issued=True, track=False, program=0, on=None):
    return (on or launch(X, Y)).check(
        addr,
        active,
        tag,
        4,
        masked_issued=masked_issued,
        track_stores=track,
        program=program,
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
    ("first", "count", "reported"),
    [
        # a 16-lane block over the last 4 elements: 12 masked lanes, within one footprint
        (12, 16, False),
        # the block starts exactly at the end: its last lane is one footprint past it
        (16, 16, False),
        # one element further: the last lane is past the allowance
        (17, 16, True),
        # a scalar (a 4-byte footprint) two elements past the end
        (17, 1, True),
        (16, 1, False),
    ],
)
def test_the_tail_allowance_is_one_footprint_past_the_end(first, count, reported):
    addr = lanes(first, count)
    active = np.array([first + i < 16 for i in range(count)])
    violations, new_mask, _ = check(addr, active)
    assert new_mask is None  # masked lanes are never performed
    assert [v.kind for v in violations] == ([MASKED_OUT_OF_BOUNDS] if reported else [])


def test_any_masked_lane_before_the_start_is_reported():
    addr = lanes(-1, 4)
    (v,), _, _ = check(addr, np.array([False, True, True, True]))
    assert (v.kind, v.lanes, v.element_offset) == (MASKED_OUT_OF_BOUNDS, 1, -1)


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
