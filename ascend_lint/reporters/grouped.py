"""Findings grouped under their file, one line each, as Ruff's `grouped` format."""

from __future__ import annotations

from itertools import groupby
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.reporters.style import PLAIN, Style


def report(diagnostics: list[Diagnostic], out: TextIO, style: Style = PLAIN) -> None:
    colon = style.separator(":")
    for path, group in groupby(diagnostics, key=lambda d: d.path):
        items = list(group)
        width = max(len(f"{d.start.row}:{d.start.column + 1}") for d in items)
        out.write(f"{style.path(path)}{colon}\n")
        for d in items:
            row, column = d.start.row, d.start.column + 1
            pad = " " * (width - len(f"{row}:{column}"))
            fixable = " [*]" if d.fix is not None and d.fix.applicability.value == "safe" else ""
            out.write(
                f"  {row}{colon}{column}{pad} {style.code(d.code)}{style.fixable(fixable)} "
                f"{d.message}\n"
            )
        out.write("\n")
