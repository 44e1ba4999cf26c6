"""Several benchmark scripts write into one Markdown results file.

Each script owns one section, delimited by HTML comments, and rewrites only that
section, so running one benchmark never erases another's measurements.
"""

from __future__ import annotations

import re
from pathlib import Path


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- begin {name} -->", f"<!-- end {name} -->"


def write_section(path: Path, name: str, body: str, title: str = "") -> None:
    """Replace section `name` of `path` with `body` (append it when absent).

    A new file starts with `title`. Text outside the markers is kept as it is.
    """
    begin, end = _markers(name)
    block = f"{begin}\n{body.rstrip()}\n{end}\n"
    text = path.read_text(encoding="utf-8") if path.exists() else (f"{title}\n\n" if title else "")
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end) + r"\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _m: block, text, count=1)
    else:
        text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
