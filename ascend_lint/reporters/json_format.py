"""Ruff's JSON layout (a list of objects; 1-based rows and columns), plus the
reference kernel functions each rule points to."""

from __future__ import annotations

import json
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic, Position
from ascend_lint.docs import rule_references, rule_url


def _loc(p: Position) -> dict:
    return {"row": p.row, "column": p.column + 1}


def as_dict(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": [
                {"content": e.content, "location": _loc(e.start), "end_location": _loc(e.end)}
                for e in d.fix.edits
            ],
        }
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": d.path,
        "location": _loc(d.start),
        "end_location": _loc(d.end),
        "fix": fix,
        "noqa_row": d.noqa_row,
        "url": rule_url(d.code),
        # {"path": "ascend_lint/reference_kernels/chunk_o.py", "function": "gate_base"}, ...
        "reference_kernels": [ref.as_json() for ref in rule_references(d.code)],
    }


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    json.dump([as_dict(d) for d in diagnostics], out, indent=2, ensure_ascii=False)
    out.write("\n")
