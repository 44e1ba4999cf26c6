"""One large kernel file built from the shipped GPU-habit examples, for the big-file
benchmark and its regression test: every top-level name of each copy gets a numeric
suffix, so the copies are distinct kernels (nothing redefined) with the same findings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples" / "gpu_habits").glob("[!_]*.py"))


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _renamed(text: str, suffix: str) -> str:
    names = _top_level_names(ast.parse(text))
    if not names:
        return text
    pattern = re.compile(
        r"\b(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")\b"
    )
    return pattern.sub(lambda m: m.group(1) + suffix, text)


_FUTURE = re.compile(r"^from __future__ import .*\n", re.M)


def build_big_source(target_bytes: int) -> str:
    """A module of at least `target_bytes` bytes: the examples again and again, renamed
    (their `from __future__` lines go first, once, so the module also compiles)."""
    texts = [p.read_text(encoding="utf-8") for p in EXAMPLES]
    futures = sorted({line for text in texts for line in _FUTURE.findall(text)})
    sources = [_FUTURE.sub("", text) for text in texts]
    parts: list[str] = []
    size = 0
    copy = 0
    while size < target_bytes:
        for text in sources:
            part = _renamed(text, f"_{copy}")
            parts.append(part)
            size += len(part.encode("utf-8")) + 2
        copy += 1
    return "".join(futures) + "\n\n".join(parts) + "\n"
