"""What a rule reports: a code, a span, a message, and maybe a fix."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """How sure a fix is to keep the program's results (Ruff's three levels)."""

    SAFE = "safe"  # cannot change results (deleting a no-op launch option)
    UNSAFE = "unsafe"  # may change numerics, layout or speed: applied only with --unsafe-fixes
    DISPLAY_ONLY = "display-only"  # shown as a suggestion, never applied


@dataclass(frozen=True, order=True)
class Position:
    row: int  # 1-based
    column: int  # 0-based, in code points


@dataclass(frozen=True)
class Edit:
    start: Position
    end: Position
    content: str


@dataclass(frozen=True, eq=False)
class FixGroup:
    """The one edit that applies `size` sibling fixes at once (every knob of one call).

    Each sibling's own edits touch only its own element, as a quick fix or a review
    suggestion must; but the one-by-one removals of two neighbours overlap at the comma
    between them, so fixing them all would take a round each. When every sibling is
    being applied, the fix engine applies this edit instead. Compared by identity."""

    size: int
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]
    together: FixGroup | None = field(default=None, compare=False)


@dataclass
class Diagnostic:
    code: str
    name: str
    message: str
    path: str
    start: Position
    end: Position
    fix: Fix | None = None
    reference: str | None = None  # "reference_kernels/chunk_o.py::chunk_fwd_kernel_o"
    noqa_row: int | None = None
    # Other spans of the same defect (a local address's definition), for supersession
    # only: not shown, not cached (supersession runs before findings are stored).
    also_at: tuple[tuple[Position, Position], ...] = field(default=(), compare=False, repr=False)

    def to_dict(self) -> dict:
        """Everything but the path, for the cache."""
        fix = None
        if self.fix is not None:
            fix = [
                self.fix.applicability.value,
                self.fix.message,
                [[*_pos(e.start), *_pos(e.end), e.content] for e in self.fix.edits],
            ]
        return {
            "c": self.code,
            "n": self.name,
            "m": self.message,
            "s": _pos(self.start),
            "e": _pos(self.end),
            "f": fix,
            "r": self.reference,
            "q": self.noqa_row,
        }

    @classmethod
    def from_dict(cls, data: dict, path: str) -> Diagnostic:
        fix = None
        if data["f"] is not None:
            applicability, message, edits = data["f"]
            fix = Fix(
                Applicability(applicability),
                message,
                tuple(Edit(Position(a, b), Position(c, d), text) for a, b, c, d, text in edits),
            )
        return cls(
            data["c"],
            data["n"],
            data["m"],
            path,
            Position(*data["s"]),
            Position(*data["e"]),
            fix,
            data["r"],
            data["q"],
        )

    def sort_key(self) -> tuple:
        return (self.path, self.start.row, self.start.column, self.code)


def _pos(p: Position) -> list[int]:
    return [p.row, p.column]
