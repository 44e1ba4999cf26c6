"""The per-access check: every lane of one load, store or atomic against the storage its
pointer derives from, and every stored element against the program that stored it
first in the launch.

What counts as an ordinary tail (``TAIL_ALLOWANCE``): a masked-out lane past the end
of its storage is not reported when it lies within one footprint of the access past
the end, the footprint being the distance from the access's lowest to its highest lane
address plus one element.  A ``tl.load(x + offs, mask=offs < n)`` over a block has its
masked lanes at most a block past the end; a 2-D tile masked on rows has them at most a
tile past it.  Such tails land in the allocator's mapped space in practice; a masked-out
lane before the storage start (look-back ``o - 1``, a ``-1`` slot times a stride) or
further out (a tile that starts past the end) is the address Ascend issues and faults on.

Lanes of a block pointer outside its ``shape`` along a ``boundary_check`` dimension are
not issued (the DMA is clipped to the shape): they are not checked.  Along the other
dimensions they are active lanes like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_lint.sanitizer.findings import MASKED_OUT_OF_BOUNDS, OUT_OF_BOUNDS, RACE
from ascend_lint.sanitizer.provenance import UNKNOWN, lanes
from ascend_lint.sanitizer.storage import Storage

TAIL_ALLOWANCE = "one footprint of the access past the storage end"
# the largest storage (in elements) whose stores are tracked for races: the table costs
# 4 bytes per element
RACE_TRACKING_LIMIT = 1 << 28


@dataclass
class Violation:
    kind: str
    storage_index: int
    lanes: int
    element_offset: int  # the first offending lane's element, from the storage start
    detail: str
    other_program: int | None = None  # race: the linear id of the program that stored first
    same_value_lanes: int = 0


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
    ) -> tuple[list[Violation], np.ndarray | None, int]:
        """Check one access.  ``addr`` holds one address per lane (flat), ``active`` the
        lanes the mask keeps (None: all).  Returns the violations, the mask the access
        must run with instead (active out-of-bounds lanes removed; None: unchanged) and
        the number of lanes no storage could be attributed to."""
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
            lo, hi = int(off.min()), int(off.max())
            if lo < 0 or hi > last_ok:
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
                    footprint = hi - lo + element_bytes
                    issued = (
                        outside
                        & ~lane_active
                        & ((off < 0) | (off + element_bytes - s.nbytes > footprint))
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
                                footprint,
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
                race = self._track(
                    s, index, off, stored, element_bytes, program, lane_addr, lane_values
                )
                if race is not None:
                    violations.append(race)
        return violations, new_active, unattributed

    def _track(self, s, index, off, stored, element_bytes, program, lane_addr, lane_values):
        """Record which program stored each element; a second program storing to an
        element of this launch is a race."""
        key = (s.start, s.nbytes, element_bytes)
        table = self.owners.get(key)
        if table is None:
            count = s.nbytes // element_bytes
            if count > RACE_TRACKING_LIMIT:
                self.untracked.add(s.param)
                return None
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
        race = None
        if clash.any():
            first = int(np.argmax(clash))
            same = 0
            if lane_values is not None:
                same = _same_bytes(lane_addr[clash], lane_values[clash], element_bytes)
            hit = int(np.count_nonzero(clash))
            race = Violation(
                RACE,
                index,
                hit,
                int(element[first]),
                f"{hit:,} {'element' if hit == 1 else 'elements'} already stored by another "
                f"program of the same launch, first at element {int(element[first]):,}",
                other_program=int(before[first]),
                same_value_lanes=same,
            )
        table[element] = program
        return race


def _violation(kind, index, off, bad, element_bytes, s: Storage, footprint: int = 0) -> Violation:
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
        beyond = "" if offset < 0 else f", beyond the tail allowance of {footprint:,} bytes"
        detail = f"{lanes_word} masked out but still issued on Ascend, first at {where}{beyond}"
    return Violation(kind, index, count, element, detail)


def _same_bytes(addr: np.ndarray, values: np.ndarray, element_bytes: int) -> int:
    """How many racing lanes store the bytes the first program left there."""
    from triton._C.libtriton import interpreter as native

    as_uint = np.dtype(f"u{element_bytes}") if element_bytes in (1, 2, 4, 8) else None
    if as_uint is None or values.dtype.itemsize != element_bytes:
        return 0
    current = native.load(
        np.ascontiguousarray(addr, dtype=np.uint64),
        np.ones(addr.shape, dtype=bool),
        np.zeros(addr.shape, dtype=as_uint),
        as_uint,
    )
    return int(np.count_nonzero(current == np.ascontiguousarray(values).view(as_uint)))
