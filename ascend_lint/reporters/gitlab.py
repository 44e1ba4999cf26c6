"""GitLab Code Quality report (a JSON list), shown in merge requests.

Paths are relative to the working directory (`CI_PROJECT_DIR` in a GitLab job), and
each finding has a fingerprint that stays the same while its file, rule and message do,
so GitLab can tell new findings from old ones across pipelines.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic


def _relative(path: str) -> str:
    try:
        return os.path.relpath(path).replace(os.sep, "/")
    except ValueError:  # another drive on Windows
        return path.replace(os.sep, "/")


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    seen: Counter[tuple[str, str, str]] = Counter()
    items = []
    for d in diagnostics:
        path = _relative(d.path)
        key = (path, d.code, d.message)
        seen[key] += 1  # the n-th identical finding in a file keeps its own fingerprint
        digest = hashlib.sha256("\0".join((*key, str(seen[key]))).encode()).hexdigest()
        items.append(
            {
                "description": f"{d.code} {d.message}",
                "check_name": d.code,
                "fingerprint": digest[:32],
                "severity": "major",
                "location": {"path": path, "lines": {"begin": d.start.row, "end": d.end.row}},
            }
        )
    json.dump(items, out, indent=2, ensure_ascii=False)
    out.write("\n")
