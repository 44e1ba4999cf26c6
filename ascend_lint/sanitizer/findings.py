"""What the sanitizer reports: one ``Finding`` per (kind, kernel, access line, tensor),
however many lanes, programs, launches and tests hit it.

Kinds:
* ``out-of-bounds``: an active lane outside the storage of the tensor its pointer
  derives from.  Wrong on every device; the sanitizer does not perform the access (a
  load gives ``other``/0 there, a store is dropped) so the test session survives it.
* ``masked-out-of-bounds``: a masked-out lane of a ``tl.load``/``tl.store``/atomic,
  outside the storage, that the device issues all the same: its mask is not one
  triton-ascend clips the copy by, or the access is a masked scalar load or atomic (see
  ``masks``).  Harmless on a GPU; Ascend issues the transaction for such lanes
  (triton-ascend #2332) and faults when the address is on an unmapped page.
* ``race``: two programs of one launch storing different bytes to the same element with
  non-atomic stores: the result depends on which program the device runs last.

Not a finding: a second program storing the very bytes already there (duplicate work,
e.g. a tile overlapping its neighbour's rows).  ``DuplicateStores`` counts those lanes
per access line; the summary gives the count and strict mode does not fail on them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ascend_lint.sanitizer.storage import Storage
from ascend_lint.text import plural

OUT_OF_BOUNDS = "out-of-bounds"
MASKED_OUT_OF_BOUNDS = "masked-out-of-bounds"
RACE = "race"
KINDS = (OUT_OF_BOUNDS, MASKED_OUT_OF_BOUNDS, RACE)
DUPLICATE_STORE = "duplicate-store"  # counted, never a finding: not one of KINDS

_MAX_PROGRAMS_KEPT = 4096  # distinct program ids remembered per finding (counted beyond)


@dataclass(frozen=True)
class Site:
    """Where an access is: the jit function holding it, and for a helper, the line of
    the kernel that called into it."""

    kernel: str
    kernel_file: str
    path: str
    line: int
    function: str
    call_line: int | None  # kernel line that called the helper (None: in the kernel)


@dataclass
class Finding:
    kind: str
    site: Site
    op: str  # load / store / atomic
    storage: Storage
    element_bytes: int
    program: tuple[int, int, int]  # the first program seen doing it
    element_offset: (
        int  # first offending element, in elements of the access, from the storage start
    )
    detail: str  # the first occurrence in words
    lanes: int = 0
    occurrences: int = 0
    programs: set = field(default_factory=set)
    programs_overflow: int = 0
    tests: list[str] = field(default_factory=list)
    other_program: tuple[int, int, int] | None = None  # race: the program that stored first
    allowed_by: list[str] = field(default_factory=list)  # tests whose marker accepts it

    @property
    def key(self) -> tuple:
        s = self.site
        return (self.kind, s.kernel_file, s.kernel, s.path, s.line, self.storage.param)

    def add(self, lanes: int, program: tuple[int, int, int]) -> None:
        self.lanes += lanes
        self.occurrences += 1
        if program not in self.programs:
            if len(self.programs) < _MAX_PROGRAMS_KEPT:
                self.programs.add(program)
            else:
                self.programs_overflow += 1

    @property
    def program_count(self) -> int:
        return len(self.programs) + self.programs_overflow

    def as_dict(self) -> dict:
        s = self.site
        out = {
            "kind": self.kind,
            "kernel": s.kernel,
            "kernel_file": s.kernel_file,
            "path": s.path,
            "line": s.line,
            "function": s.function,
            "call_line": s.call_line,
            "op": self.op,
            **self.storage.as_dict(),
            "element_bytes": self.element_bytes,
            "element_offset": self.element_offset,
            "program": list(self.program),
            "programs": self.program_count,
            "lanes": self.lanes,
            "occurrences": self.occurrences,
            "detail": self.detail,
            "tests": list(self.tests),
            "allowed": bool(self.tests) and all(t in self.allowed_by for t in self.tests),
            "allowed_by": list(self.allowed_by),
        }
        if self.kind == RACE:
            out["other_program"] = list(self.other_program or ())
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Finding:
        """The inverse of ``as_dict`` (a pytest-xdist worker's findings, merged)."""
        site = Site(
            kernel=data["kernel"],
            kernel_file=data["kernel_file"],
            path=data["path"],
            line=data["line"],
            function=data["function"],
            call_line=data["call_line"],
        )
        storage = Storage(
            param=data["tensor"],
            shape=tuple(data["shape"]),
            dtype=data["dtype"],
            start=0,
            nbytes=data["storage_bytes"],
            view_offset=data["view_offset_bytes"],
        )
        found = cls(
            kind=data["kind"],
            site=site,
            op=data["op"],
            storage=storage,
            element_bytes=data["element_bytes"],
            program=tuple(data["program"]),
            element_offset=data["element_offset"],
            detail=data["detail"],
            lanes=data["lanes"],
            occurrences=data["occurrences"],
            tests=list(data["tests"]),
            other_program=tuple(data["other_program"]) if data.get("other_program") else None,
            allowed_by=list(data.get("allowed_by", ())),
        )
        found.programs_overflow = data["programs"]
        return found

    def merge(self, other: Finding) -> None:
        self.lanes += other.lanes
        self.occurrences += other.occurrences
        self.programs_overflow += other.program_count
        for test in other.tests:
            if test not in self.tests:
                self.tests.append(test)
        for test in other.allowed_by:
            if test not in self.allowed_by:
                self.allowed_by.append(test)

    # -- words ---------------------------------------------------------------------------
    def headline(self, root: str | None = None) -> str:
        where = f"{shown(self.site.path, root)}:{self.site.line}"
        return f"{where}: {self.kind}: {self.op} of {self.storage.describe()} in {self.site.kernel}: {self.detail}"

    def lines(self, root: str | None = None, tests_shown: int = 3) -> list[str]:
        s = self.site
        out = [self.headline(root)]
        count = (
            f"{plural(self.lanes, 'lane')} in {plural(self.occurrences, 'access', 'accesses')}"
            f" by {plural(self.program_count, 'program')}"
        )
        out.append(f"  {count}")
        if s.call_line is not None:
            out.append(
                f"  in the helper {s.function}, called from {shown(s.kernel_file, root)}:{s.call_line}"
            )
        if self.tests:
            shown_tests = [
                f"{t} (accepted by its marker)" if t in self.allowed_by else t
                for t in self.tests[:tests_shown]
            ]
            more = (
                f" and {len(self.tests) - tests_shown} more"
                if len(self.tests) > tests_shown
                else ""
            )
            out.append(f"  launched by: {', '.join(shown_tests)}{more}")
        return out


@dataclass
class Unattributed:
    """Lanes whose pointer derives from no tensor argument (built from an integer,
    loaded from memory) and whose address lies in no argument's storage: the sanitizer
    cannot say what they may touch, so it says so instead of guessing."""

    kernel: str
    path: str
    line: int
    op: str
    lanes: int = 0
    tests: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple:
        return (self.kernel, self.path, self.line, self.op)

    def as_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "path": self.path,
            "line": self.line,
            "op": self.op,
            "lanes": self.lanes,
            "tests": list(self.tests),
        }

    def line_text(self, root: str | None = None) -> str:
        return (
            f"{shown(self.path, root)}:{self.line}: could not attribute {plural(self.lanes, 'lane')} "
            f"of a {self.op} in {self.kernel}: the pointer derives from no tensor argument and "
            "lies in no argument's storage"
        )


@dataclass
class DuplicateStores:
    """Lanes of a store that another program of the same launch had already stored, with
    the same bytes: duplicate work, not a race (the result does not depend on which
    program the device runs last).  Counted per (kernel, access line, tensor)."""

    kernel: str
    path: str
    line: int
    tensor: str
    lanes: int = 0
    occurrences: int = 0
    tests: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple:
        return (self.kernel, self.path, self.line, self.tensor)

    def as_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "path": self.path,
            "line": self.line,
            "tensor": self.tensor,
            "lanes": self.lanes,
            "occurrences": self.occurrences,
            "tests": list(self.tests),
        }

    def merge(self, other: DuplicateStores) -> None:
        self.lanes += other.lanes
        self.occurrences += other.occurrences
        self.tests.extend(t for t in other.tests if t not in self.tests)

    def line_text(self, root: str | None = None) -> str:
        return (
            f"{shown(self.path, root)}:{self.line}: {plural(self.lanes, 'lane')} of stores to "
            f"{self.tensor} in {self.kernel} stored twice with the same bytes by programs of "
            "one launch (duplicate work, not a finding)"
        )


def shown(path: str, root: str | None) -> str:
    """``path`` relative to ``root`` when it lies inside it."""
    if root:
        try:
            rel = os.path.relpath(path, root)
        except ValueError:  # another drive
            return path
        if not rel.startswith(os.pardir):
            return rel
    return path
