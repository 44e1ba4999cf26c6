"""What a rule reports: a code, a span, a message, and maybe a fix."""

from __future__ import annotations

import enum
import re
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

    @classmethod
    def from_cache(cls, applicability: str, message: str, edits: list) -> Fix:
        """A fix read back from the cache (`Diagnostic.to_dict`), its edits decoded on
        first use: a run the cache answers prints thousands of findings and reads the
        edits of none (half of its decoding time, on FLA)."""
        if not all(len(edit) == 5 for edit in edits):  # a damaged cache: lint again
            raise ValueError("a cached edit is not [row, column, row, column, text]")
        fix = object.__new__(cls)
        fix.__dict__.update(
            applicability=_APPLICABILITY[applicability],
            message=message,
            together=None,
            _cached_edits=edits,
        )
        return fix

    def __getattr__(self, name: str):
        # only reached for an attribute the instance lacks: the edits of a cached fix
        cached = self.__dict__.get("_cached_edits") if name == "edits" else None
        if cached is None:
            raise AttributeError(name)
        edits = tuple(Edit(Position(a, b), Position(c, d), text) for a, b, c, d, text in cached)
        self.__dict__["edits"] = edits
        del self.__dict__["_cached_edits"]
        return edits


_APPLICABILITY = {a.value: a for a in Applicability}


Span = tuple[Position, Position]
_CITATION = re.compile(r"\{@(\d+)\}")


def cite(i: int = 0) -> str:
    """Where a message names its `i`-th related location: rendered `line N` from that
    location, so a message never holds a row number that an edit above would leave stale."""
    return f"{{@{i}}}"


class Citations:
    """The places one message cites, numbered as the message names them: `cites(node)`
    in an f-string gives the marker, `cites.nodes` the finding's `related`; text an
    index fact already wrote with markers of its own is renumbered by `adopt`."""

    def __init__(self) -> None:
        self.nodes: list = []

    def __call__(self, node) -> str:
        self.nodes.append(node)
        return cite(len(self.nodes) - 1)

    def adopt(self, text: str, nodes) -> str:
        offset = len(self.nodes)
        self.nodes.extend(nodes)
        return _CITATION.sub(lambda m: cite(int(m[1]) + offset), text)


def compact_citations(template: str, related: tuple) -> tuple[str, tuple]:
    """Only the related places a message names, numbered in the order it names them."""
    kept: list = []
    order: dict[int, int] = {}

    def renumber(m: re.Match) -> str:
        i = int(m[1])
        if i not in order:
            order[i] = len(kept)
            kept.append(related[i])
        return cite(order[i])

    return _CITATION.sub(renumber, template), tuple(kept)


@dataclass
class Diagnostic:
    code: str
    name: str
    template: str  # the message, citing `related` locations as `cite(i)`
    path: str
    start: Position
    end: Position
    fix: Fix | None = None
    noqa_row: int | None = None
    # Other spans of the same defect (a local address's definition), for supersession
    # only: not shown, not cached (supersession runs before findings are stored).
    also_at: tuple[Span, ...] = field(default=(), compare=False, repr=False)
    # Places the message cites (the kernel line of a launch finding, the reuse of a tile):
    # positions that move with the code, shown by every output format.
    related: tuple[Span, ...] = ()

    @property
    def message(self) -> str:
        if not self.related:
            return self.template
        return _CITATION.sub(lambda m: f"line {self.related[int(m[1])][0].row}", self.template)

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
            "m": self.template,
            "s": _pos(self.start),
            "e": _pos(self.end),
            "f": fix,
            "q": self.noqa_row,
            "l": [[*_pos(a), *_pos(b)] for a, b in self.related],
        }

    @classmethod
    def from_dict(cls, data: dict, path: str) -> Diagnostic:
        fix = None if data["f"] is None else Fix.from_cache(*data["f"])
        return cls(
            data["c"],
            data["n"],
            data["m"],
            path,
            Position(*data["s"]),
            Position(*data["e"]),
            fix,
            data["q"],
            related=(
                tuple((Position(a, b), Position(c, d)) for a, b, c, d in data["l"])
                if data.get("l")
                else ()
            ),
        )

    def sort_key(self) -> tuple:
        return (self.path, self.start.row, self.start.column, self.code)


def _pos(p: Position) -> list[int]:
    return [p.row, p.column]
