"""Output formats: one module each, all fed the same sorted diagnostics.

Importing this package stays cheap (the CLI reads OUTPUT_FORMATS to build --help):
reporters import heavy modules inside `report`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.reporters import (
    concise,
    full,
    github,
    json_format,
    json_lines,
    junit,
    rdjson,
    rdjsonl,
    sarif,
)

Reporter = Callable[[list[Diagnostic], TextIO], None]

REPORTERS: dict[str, Reporter] = {
    "full": full.report,
    "concise": concise.report,
    "json": json_format.report,
    "json-lines": json_lines.report,
    "github": github.report,
    "sarif": sarif.report,
    "rdjson": rdjson.report,
    "rdjsonl": rdjsonl.report,
    "junit": junit.report,
}
OUTPUT_FORMATS: tuple[str, ...] = tuple(REPORTERS)
