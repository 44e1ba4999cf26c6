"""One ruff-layout JSON object per line, so a consumer can stream findings."""

from __future__ import annotations

import json
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.reporters.json_format import as_dict


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    for d in diagnostics:
        out.write(json.dumps(as_dict(d), ensure_ascii=False) + "\n")
