"""Colour for the text formats, decided as Ruff decides it: `--color always` or `never`
wins; otherwise NO_COLOR (any value) turns it off, FORCE_COLOR or CLICOLOR_FORCE turns
it on, and it is on where the report goes to a terminal that is not `dumb`. A report
written to a pipe or a file stays plain, so nothing that parses it sees an escape.

The colours are Ruff's: the path bold, the separators cyan, the code bold red, `[*]`
cyan, a code frame's gutter bold bright blue and its carets bold bright red.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TextIO


@dataclass(frozen=True)
class Style:
    on: bool

    def _paint(self, sgr: str, text: str) -> str:
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.on and text else text

    def path(self, text: str) -> str:
        return self._paint("1", text)

    def separator(self, text: str) -> str:
        return self._paint("36", text)

    def code(self, text: str) -> str:
        return self._paint("1;31", text)

    def fixable(self, text: str) -> str:
        return self._paint("36", text)

    def gutter(self, text: str) -> str:
        return self._paint("1;94", text)

    def marker(self, text: str) -> str:
        return self._paint("1;91", text)


PLAIN = Style(False)
COLOR = Style(True)


def style_for(choice: str, out: TextIO) -> Style:
    """The style of a report written to `out` under `--color choice`."""
    if choice == "always":
        return COLOR
    if choice == "never" or os.environ.get("NO_COLOR"):
        return PLAIN
    if os.environ.get("FORCE_COLOR") or os.environ.get("CLICOLOR_FORCE", "0") != "0":
        return COLOR
    try:
        terminal = out.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        terminal = False
    return COLOR if terminal and os.environ.get("TERM") != "dumb" else PLAIN
