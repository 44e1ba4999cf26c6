"""The per-access check: every lane of one load, store or atomic against the storage its
pointer derives from, and every stored element against the program that stored it
first in the launch.

Which masked-out lanes count as issued follows how triton-ascend lowers the mask
(``masks``): a mask its analysis parses becomes a copy clipped to the box of lanes the
mask keeps, so its masked-out lanes are never issued, wherever they point (an ``offs <
n`` tail, a tile that starts past the end under a ``rows < n`` mask, a window shifted
before the start under ``offs >= lo``); any other mask loads (or reads and writes back)
the whole block, so every masked-out lane is issued, and one outside the storage is
reported (``masked-out-of-bounds``) with what made the mask one the compiler does not
clip by.  A masked scalar load and a masked scalar atomic are issued whatever the mask; a
masked scalar store is not.  Stores and atomics follow the rules of loads.

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

MASKED_LANES_POLICY = (
    "a masked-out lane is reported when it lies outside the storage and the device issues "
    "it: the access's mask is not one triton-ascend's mask analysis parses into a clipped "
    "copy (then it issues the whole block), or the access is a masked scalar load or atomic"
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
        masked_issued: str | None,
        track_stores: bool,
        program: int,
        values: np.ndarray | None = None,
    ) -> tuple[list[Violation], np.ndarray | None, int]:
        """Check one access.  ``addr`` holds one address per lane (flat), ``active`` the lanes the
        mask keeps (None: all), ``masked_issued`` why the device issues the masked-out
        lanes (``masks.issued_reason``; None: it does not).  Returns the violations, the
        mask the access must run with instead (active out-of-bounds lanes removed; None:
        unchanged) and the number of lanes no storage could be attributed to."""
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
                if masked_issued is not None and lane_active is not None:
                    issued = outside & ~lane_active
                    if issued.any():
                        violations.append(
                            _violation(
                                MASKED_OUT_OF_BOUNDS,
                                index,
                                off,
                                issued,
                                element_bytes,
                                s,
                                masked_issued,
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


def _violation(kind, index, off, bad, element_bytes, s: Storage, because: str = "") -> Violation:
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
        detail = f"{lanes_word} masked out but still issued on Ascend, first at {where}: {because}"
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
