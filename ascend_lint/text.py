"""Wording shared by every front end's summaries."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 file`, `2 files`, `1,204 accesses`: the count with the noun it agrees with."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
