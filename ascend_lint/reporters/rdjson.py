"""reviewdog's Diagnostic Format as one JSON document (`DiagnosticResult`).

Positions are 1-based lines and 1-based UTF-8 byte columns, end exclusive
(reviewdog/proto/rdf/reviewdog.proto); fixes become `suggestions` that reviewdog
posts as suggested changes in code review.
"""

from __future__ import annotations

import json
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic, Position
from ascend_lint.docs import rule_url
from ascend_lint.reporters._common import HOMEPAGE, TOOL_NAME, LineCache

SOURCE = {"name": TOOL_NAME, "url": HOMEPAGE}
SEVERITY = "ERROR"


def _range(cache: LineCache, path: str, start: Position, end: Position) -> dict:
    def pos(p: Position) -> dict:
        return {"line": p.row, "column": cache.byte_column(path, p) + 1}

    return {"start": pos(start), "end": pos(end)}


def as_dict(d: Diagnostic, cache: LineCache) -> dict:
    """One self-contained `Diagnostic` message (also a line of rdjsonl)."""
    out = {
        "message": d.message,
        "location": {"path": d.path, "range": _range(cache, d.path, d.start, d.end)},
        "severity": SEVERITY,
        "source": SOURCE,
        "code": {"value": d.code, "url": rule_url(d.code)},
    }
    if d.fix is not None:
        out["suggestions"] = [
            {"range": _range(cache, d.path, e.start, e.end), "text": e.content} for e in d.fix.edits
        ]
    return out


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    cache = LineCache()
    result = {
        "source": SOURCE,
        "severity": SEVERITY,
        "diagnostics": [as_dict(d, cache) for d in diagnostics],
    }
    json.dump(result, out, indent=2, ensure_ascii=False)
    out.write("\n")
