"""Output formats: one module each, all fed the same sorted diagnostics."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.reporters import concise, full, json_format

Reporter = Callable[[list[Diagnostic], TextIO], None]

REPORTERS: dict[str, Reporter] = {
    "full": full.report,
    "concise": concise.report,
    "json": json_format.report,
}
