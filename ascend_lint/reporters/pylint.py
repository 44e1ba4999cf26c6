"""Pylint's parseable layout, `path:row: [CODE] message`, for tools that read it."""

from __future__ import annotations

from typing import TextIO

from ascend_lint.diagnostics import Diagnostic


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    for d in diagnostics:
        out.write(f"{d.path}:{d.start.row}: [{d.code}] {d.message}\n")
