"""GitHub Actions workflow commands: each finding becomes an inline annotation."""

from __future__ import annotations

from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.reporters._common import TOOL_NAME


def _escape_data(text: str) -> str:
    # `%` first, so the escapes added after it are not escaped again.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    # `:` ends the property list and `,` separates properties.
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    for d in diagnostics:
        props = [
            f"title={_escape_property(f'{TOOL_NAME} ({d.code})')}",
            f"file={_escape_property(d.path)}",
            f"line={d.start.row}",
            f"endLine={d.end.row}",
        ]
        # GitHub applies columns only to single-line annotations. 1-based, end exclusive
        # like the JSON layout's end_location.
        if d.start.row == d.end.row:
            props += [f"col={d.start.column + 1}", f"endColumn={d.end.column + 1}"]
        out.write(f"::error {','.join(props)}::{_escape_data(f'{d.code} {d.message}')}\n")
