"""Wording shared by every front end's summaries."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None, *, grouped: bool = True) -> str:
    """`1 file`, `2 files`, `1,204 accesses`: the count with the noun it agrees with
    (`grouped=False`: `1204 errors`, as Ruff's summary lines write counts)."""
    count = f"{n:,}" if grouped else str(n)
    return f"{count} {word if n == 1 else (many or word + 's')}"
