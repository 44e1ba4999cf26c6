"""Azure Pipelines logging commands: each finding becomes an issue on the build."""

from __future__ import annotations

from typing import TextIO

from ascend_lint.diagnostics import Diagnostic


def _escape(text: str) -> str:
    # The logging-command escapes: `%` first, then line breaks and the delimiters.
    return (
        text.replace("%", "%AZP25")
        .replace("\r", "%0D")
        .replace("\n", "%0A")
        .replace(";", "%3B")
        .replace("]", "%5D")
    )


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    for d in diagnostics:
        props = (
            f"type=error;sourcepath={_escape(d.path)};linenumber={d.start.row};"
            f"columnnumber={d.start.column + 1};code={d.code};"
        )
        message = d.message.replace("\r", " ").replace("\n", " ")
        out.write(f"##vso[task.logissue {props}]{message}\n")
