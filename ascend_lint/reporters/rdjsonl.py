"""reviewdog's Diagnostic Format as JSON Lines: one `Diagnostic` per line."""

from __future__ import annotations

import json
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.reporters._common import LineCache
from ascend_lint.reporters.rdjson import as_dict


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    cache = LineCache()
    for d in diagnostics:
        out.write(json.dumps(as_dict(d, cache), ensure_ascii=False) + "\n")
