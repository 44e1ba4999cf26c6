from __future__ import annotations

from typing import TextIO

from ascend_lint.diagnostics import Diagnostic


def location(d: Diagnostic) -> str:
    return f"{d.path}:{d.start.row}:{d.start.column + 1}"


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    for d in diagnostics:
        fixable = " [*]" if d.fix and d.fix.applicability.value == "safe" else ""
        out.write(f"{location(d)}: {d.code}{fixable} {d.message}\n")
