"""The per-access check: every lane of one load, store or atomic against the storage its
pointer derives from, and every stored element against the program that stored it
first in the launch.

Which masked-out lanes count as issued.  triton-ascend lowers a masked access in one of
two ways: a mask it can parse (comparisons of a ``tl.arange`` with a bound, and'ed
together; ``MaskAnalysis``) becomes a copy clipped to the box of lanes the mask keeps,
and the lanes outside it are never issued; a mask it cannot parse (a loaded mask,
``offs % 2 == 0``) loads the whole block and selects, clipped only by whatever parseable
factor it is and'ed with.  Either way every lane inside the box spanned by the access's
active lanes (in its lane index space: per dimension, from the first to the last index
with an active lane) is issued; lanes outside it may be clipped.  So a masked-out lane is
reported (``masked-out-of-bounds``)
* when it lies before the storage start, always (a lower-bound mask such as
  ``o - 1 >= 0`` or a ``-1`` slot: triton-ascend #2332's reproducer, which faults);
* when it lies past the storage end, only if it is inside the box of the active lanes
  (no clipped copy of the active lanes stops before it), and then only beyond the tail
  allowance (``TAIL_ALLOWANCE``): one footprint of the active lanes past the end, the
  footprint being the distance from the lowest to the highest active lane address plus
  one element.

An access entirely masked out is an empty clipped copy (a tile that starts past the
end under a ``rows < n`` mask), and a row or column tail masked by ``offs < n`` leaves its
masked lanes outside the active box: neither is reported, however far past the end the
block reaches.  Inside the box, a masked lane past the end comes from addresses that do
not grow with the lane index (a gather whose masked slots hold a large sentinel id); a
short overshoot there (a flattened 2-D tile's padding columns in its last row) stays
within the allowance.  Stores and atomics follow the same rules as loads.

Lanes of a block pointer outside its ``shape`` along a ``boundary_check`` dimension are
not issued (the DMA is clipped to the shape): they are not checked.  Along the other
dimensions they are active lanes like any other.

Two programs of one launch storing to one element: a ``race`` when the second stores
bytes other than those already there; when it stores the same bytes it is duplicate
work (a tile that overlaps its neighbour's rows and computes them again), counted apart
(``DUPLICATE_STORE``) and never a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_lint.sanitizer.findings import (
    DUPLICATE_STORE,
    MASKED_OUT_OF_BOUNDS,
    OUT_OF_BOUNDS,
    RACE,
)
from ascend_lint.sanitizer.provenance import UNKNOWN, lanes
from ascend_lint.sanitizer.storage import Storage

TAIL_ALLOWANCE = (
    "a masked-out lane past the storage end is reported only when it lies between the "
    "access's active lanes (inside the box they span in its lane index space) and more "
    "than one footprint of the active lanes past the end"
)
# the largest storage (in elements) whose stores are tracked for races: the table costs
# 4 bytes per element
RACE_TRACKING_LIMIT = 1 << 28


@dataclass
class Violation:
    kind: str  # a finding kind, or DUPLICATE_STORE
    storage_index: int
    lanes: int
    element_offset: int  # the first offending lane's element, from the storage start
    detail: str
    other_program: int | None = None  # race: the linear id of the program that stored first


@dataclass
class Launch:
    """One launch's bookkeeping: the storages of its tensor arguments and, per storage
    stored to, which program stored each element first."""

    kernel: str
    kernel_file: str
    kernel_code: object  # the interpreted kernel's code object (finds its frame)
    storages: list[Storage]
    grid: tuple[int, int, int] = (1, 1, 1)
    owners: dict = field(default_factory=dict)  # (start, nbytes, element bytes) -> int32 table
    untracked: set = field(default_factory=set)  # storages too large to track races on

    def attribute(self, addr: np.ndarray, tag) -> np.ndarray:
        """One storage index per lane: the tag where the pointer has one, else the
        argument whose storage holds the address, else UNKNOWN."""
        sid = lanes(tag, addr.shape).ravel().astype(np.int32, copy=True)
        unknown = sid == UNKNOWN
        if unknown.any():
            for index, s in enumerate(self.storages):
                inside = unknown & (addr >= np.uint64(s.start)) & (addr < np.uint64(s.end))
                sid[inside] = index
                unknown &= ~inside
        return sid

    def check(
        self,
        addr: np.ndarray,
        active: np.ndarray | None,
        tag,
        element_bytes: int,
        *,
        masked_issued: bool,
        track_stores: bool,
        program: int,
        values: np.ndarray | None = None,
        shape: tuple[int, ...] | None = None,
    ) -> tuple[list[Violation], np.ndarray | None, int]:
        """Check one access.  ``addr`` holds one address per lane (flat, in the order of
        the access's lanes of ``shape``; None: one dimension), ``active`` the lanes the
        mask keeps (None: all).  Returns the violations, the mask the access must run
        with instead (active out-of-bounds lanes removed; None: unchanged) and the
        number of lanes no storage could be attributed to."""
        violations: list[Violation] = []
        if isinstance(tag, (int, np.integer)) and tag != UNKNOWN:
            groups = [(int(tag), None)]
            unattributed = 0
        else:
            sid = self.attribute(addr, tag)
            groups = [(int(i), np.nonzero(sid == i)[0]) for i in np.unique(sid) if i != UNKNOWN]
            unattributed = int(np.count_nonzero(sid == UNKNOWN))
        new_active = None
        for index, picked in groups:
            s = self.storages[index]
            lane_addr = addr if picked is None else addr[picked]
            lane_active = None if active is None else (active if picked is None else active[picked])
            # byte offset from the storage start, signed (a negative offset wraps in uint64)
            off = (lane_addr - np.uint64(s.start)).view(np.int64)
            last_ok = s.nbytes - element_bytes
            if int(off.min()) < 0 or int(off.max()) > last_ok:
                outside = (off < 0) | (off > last_ok)
                bad = outside if lane_active is None else outside & lane_active
                if bad.any():
                    violations.append(_violation(OUT_OF_BOUNDS, index, off, bad, element_bytes, s))
                    if new_active is None:
                        new_active = (
                            np.ones(addr.shape, dtype=bool) if active is None else active.copy()
                        )
                    if picked is None:
                        new_active &= ~bad
                    else:
                        new_active[picked[bad]] = False
                if masked_issued and lane_active is not None:
                    issued, allowance = _issued_masked_lanes(
                        off, lane_active, picked, addr.size, shape, s.nbytes, element_bytes
                    )
                    if issued.any():
                        violations.append(
                            _violation(
                                MASKED_OUT_OF_BOUNDS,
                                index,
                                off,
                                issued,
                                element_bytes,
                                s,
                                allowance,
                            )
                        )
            else:
                outside = None
            if track_stores:
                stored = lane_active
                if outside is not None:
                    stored = ~outside if stored is None else stored & ~outside
                lane_values = (
                    None if values is None else (values if picked is None else values[picked])
                )
                violations.extend(
                    self._track(
                        s, index, off, stored, element_bytes, program, lane_addr, lane_values
                    )
                )
        return violations, new_active, unattributed

    def _track(
        self, s, index, off, stored, element_bytes, program, lane_addr, lane_values
    ) -> list[Violation]:
        """Record which program stored each element; a second program storing other
        bytes to an element of this launch is a race, storing the same bytes is
        duplicate work."""
        key = (s.start, s.nbytes, element_bytes)
        table = self.owners.get(key)
        if table is None:
            count = s.nbytes // element_bytes
            if count > RACE_TRACKING_LIMIT:
                self.untracked.add(s.param)
                return []
            table = self.owners[key] = np.full(count, -1, dtype=np.int32)
        keep = off % element_bytes == 0
        if stored is not None:
            keep &= stored
        if not keep.all():
            off, lane_addr = off[keep], lane_addr[keep]
            lane_values = None if lane_values is None else lane_values[keep]
        element = off // element_bytes
        before = table[element]
        clash = (before != -1) & (before != program)
        out = []
        if clash.any():
            same = np.zeros(clash.shape, dtype=bool)
            if lane_values is not None:
                same[clash] = _same_bytes(lane_addr[clash], lane_values[clash], element_bytes)
            differ = clash & ~same
            if differ.any():
                first = int(np.argmax(differ))
                hit = int(np.count_nonzero(differ))
                out.append(
                    Violation(
                        RACE,
                        index,
                        hit,
                        int(element[first]),
                        f"{hit:,} {'element' if hit == 1 else 'elements'} already stored by "
                        "another program of the same launch, with other bytes, first at "
                        f"element {int(element[first]):,}",
                        other_program=int(before[first]),
                    )
                )
            if same.any():
                first = int(np.argmax(same))
                hit = int(np.count_nonzero(same))
                out.append(
                    Violation(
                        DUPLICATE_STORE,
                        index,
                        hit,
                        int(element[first]),
                        "stored again with the bytes already there",
                        other_program=int(before[first]),
                    )
                )
        table[element] = program
        return out


def _issued_masked_lanes(
    off: np.ndarray,
    lane_active: np.ndarray,
    picked: np.ndarray | None,
    size: int,
    shape: tuple[int, ...] | None,
    nbytes: int,
    element_bytes: int,
) -> tuple[np.ndarray, int]:
    """The masked-out lanes of one storage's part of an access that the device issues
    and that may fault (see the module docstring), and the tail allowance in bytes."""
    masked = ~lane_active
    issued = masked & (off < 0)
    past = masked & (off > nbytes - element_bytes)
    if not past.any() or not lane_active.any():
        return issued, 0
    if picked is None:
        box = _active_box(lane_active.reshape(shape or (size,))).reshape(-1)
    else:  # the storage's lanes among others': the box of its own active lanes
        everywhere = np.zeros(size, dtype=bool)
        everywhere[picked] = lane_active
        box = _active_box(everywhere.reshape(shape or (size,))).reshape(-1)[picked]
    between = past & box
    if not between.any():
        return issued, 0
    active_off = off[lane_active]
    allowance = int(active_off.max()) - int(active_off.min()) + element_bytes
    return issued | (between & (off + element_bytes - nbytes > allowance)), allowance


def _active_box(active: np.ndarray) -> np.ndarray:
    """The lanes inside the box the active lanes span: per dimension, from the first to
    the last index that holds an active lane (``active`` holds at least one)."""
    box = np.ones((1,) * active.ndim, dtype=bool)
    for axis in range(active.ndim):
        others = tuple(a for a in range(active.ndim) if a != axis)
        along = np.flatnonzero(active.any(axis=others) if others else active)
        span = np.zeros(active.shape[axis], dtype=bool)
        span[along[0] : along[-1] + 1] = True
        box = box & span.reshape([-1 if a == axis else 1 for a in range(active.ndim)])
    return np.broadcast_to(box, active.shape)


def _violation(kind, index, off, bad, element_bytes, s: Storage, allowance: int = 0) -> Violation:
    first = int(np.argmax(bad))
    offset = int(off[first])
    element = offset // element_bytes  # floor: one element before the start is -1
    count = int(np.count_nonzero(bad))
    total = s.nbytes // element_bytes if element_bytes else 0
    lanes_word = f"{count:,} {'lane' if count == 1 else 'lanes'}"
    if offset < 0:
        where = (
            f"{-element:,} {'element' if -element == 1 else 'elements'} before its storage start"
        )
    else:
        where = f"element {element:,} of a {total:,}-element storage"
    if kind == OUT_OF_BOUNDS:
        detail = f"{lanes_word} outside the storage, first at {where}"
    else:
        beyond = (
            ""
            if offset < 0
            else f", between the access's active lanes and beyond the tail allowance of "
            f"{allowance:,} bytes"
        )
        detail = f"{lanes_word} masked out but still issued on Ascend, first at {where}{beyond}"
    return Violation(kind, index, count, element, detail)


def _same_bytes(addr: np.ndarray, values: np.ndarray, element_bytes: int) -> np.ndarray:
    """Per racing lane: does it store the bytes the earlier program left there?"""
    from triton._C.libtriton import interpreter as native

    as_uint = np.dtype(f"u{element_bytes}") if element_bytes in (1, 2, 4, 8) else None
    if as_uint is None or values.dtype.itemsize != element_bytes:
        return np.zeros(addr.shape, dtype=bool)
    current = native.load(
        np.ascontiguousarray(addr, dtype=np.uint64),
        np.ones(addr.shape, dtype=bool),
        np.zeros(addr.shape, dtype=as_uint),
        as_uint,
    )
    return current == np.ascontiguousarray(values).view(as_uint)
