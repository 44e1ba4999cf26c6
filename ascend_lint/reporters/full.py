"""`path:line:col: CODE message`, a code frame, and where the corrected pattern lives."""

from __future__ import annotations

import functools
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.docs import describe_references, rule_references
from ascend_lint.reporters._common import LineCache
from ascend_lint.reporters.concise import headline
from ascend_lint.reporters.style import PLAIN, Style

_CONTEXT = 1
_MAX_FRAME_LINES = 6


def _frame(d: Diagnostic, lines: list[str], style: Style = PLAIN) -> list[str]:
    first = max(1, d.start.row - _CONTEXT)
    last = min(len(lines), d.end.row + _CONTEXT, d.start.row + _MAX_FRAME_LINES)
    width = len(str(last))
    out = []
    for row in range(first, last + 1):
        text = lines[row - 1].replace("\t", "    ") if row <= len(lines) else ""
        gutter = f" {row:>{width}} |"
        out.append(f"{style.gutter(gutter) if style.on else gutter} {text}".rstrip())
        if row == d.start.row:
            raw = lines[row - 1] if row <= len(lines) else ""
            col = len(raw[: d.start.column].replace("\t", "    "))
            end_col = (
                len(raw[: d.end.column].replace("\t", "    "))
                if d.end.row == row
                else len(raw.replace("\t", "    "))
            )
            carets = "^" * max(1, end_col - col)
            gutter, marker = f" {'':>{width}} |", f"{carets} {d.code}"
            if style.on:
                gutter, marker = style.gutter(gutter), style.marker(marker)
            out.append(f"{gutter} {' ' * col}{marker}")
    return out


_FIX_LABEL = {
    "safe": "fix",
    "unsafe": "unsafe fix (--unsafe-fixes)",
    "display-only": "suggestion (not applied automatically)",
}


def report(diagnostics: list[Diagnostic], out: TextIO, style: Style = PLAIN) -> None:
    cache = LineCache()
    equals = style.gutter("  =")
    for d in diagnostics:
        out.write(headline(d, style) + "\n")
        lines = cache.lines(d.path)
        if lines:
            out.write("\n".join(_frame(d, lines, style)) + "\n")
        if d.fix is not None:
            out.write(f"{equals} {_FIX_LABEL[d.fix.applicability.value]}: {d.fix.message}\n")
        out.write(_help(d.code, equals))
        out.write("\n")


@functools.cache
def _help(code: str, equals: str = "  =") -> str:
    references = rule_references(code)
    if not references:
        return ""
    return (
        f"{equals} help: corrected pattern: {describe_references(references)}, "
        f"shown by `ascend-lint rule {code}`\n"
    )
