from __future__ import annotations

from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.reporters.style import PLAIN, Style


def location(d: Diagnostic) -> str:
    return f"{d.path}:{d.start.row}:{d.start.column + 1}"


def headline(d: Diagnostic, style: Style = PLAIN) -> str:
    """`path:row:col: CODE [*] message`, the first line of a finding in the text formats."""
    fixable = " [*]" if d.fix and d.fix.applicability.value == "safe" else ""
    if not style.on:
        return f"{location(d)}: {d.code}{fixable} {d.message}"
    colon = style.separator(":")
    return (
        f"{style.path(d.path)}{colon}{d.start.row}{colon}{d.start.column + 1}{colon} "
        f"{style.code(d.code)}{style.fixable(fixable)} {d.message}"
    )


def report(diagnostics: list[Diagnostic], out: TextIO, style: Style = PLAIN) -> None:
    for d in diagnostics:
        out.write(headline(d, style) + "\n")
