"""Rule documentation and the reference kernels it points to, from a checkout or a wheel."""

from __future__ import annotations

import ast
from pathlib import Path

DOCS_URL = "https://github.com/ascend-lint/ascend-lint/blob/main/rules/{code}.md"
SOURCE_URL = "https://github.com/ascend-lint/ascend-lint/blob/main/{path}"
_PACKAGE = Path(__file__).resolve().parent


def rule_url(code: str) -> str:
    return DOCS_URL.format(code=code)


def docs_dir() -> Path | None:
    # In a wheel the docs ship as ascend_lint/docs/; in a checkout they are rules/.
    for candidate in (_PACKAGE / "docs", _PACKAGE.parent / "rules"):
        if (candidate / "ASC001.md").is_file():
            return candidate
    return None


def rule_doc(code: str) -> str | None:
    folder = docs_dir()
    if folder is None:
        return None
    path = folder / f"{code}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def reference_root() -> Path | None:
    """The folder that holds `reference_kernels/`: the package itself in a wheel
    (`ascend_lint/reference_kernels/`), the repository root in a checkout. Found by
    path, never imported: showing a kernel must not need torch or triton."""
    for root in (_PACKAGE, _PACKAGE.parent):
        if (root / "reference_kernels" / "__init__.py").is_file():
            return root
    return None


def reference_function(reference: str) -> str:
    """`reference_kernels/chunk_o.py::chunk_fwd_o` -> `chunk_fwd_o`: what a person is told
    to look at. The repository path itself exists only in a clone; `ascend-lint rule`
    shows the kernel from wherever it is installed."""
    return reference.partition("::")[2] or reference


def reference_url(reference: str) -> str:
    """The reference kernel's file on the project's home page, for where it is not
    installed."""
    return SOURCE_URL.format(path=reference.partition("::")[0])


def reference_source(reference: str) -> tuple[Path, int, str] | None:
    """`reference_kernels/chunk_o.py::name` -> (file, first line, source of that function).

    The file is read and parsed, never imported: showing a kernel must not need triton.
    """
    file_part, _, func = reference.partition("::")
    root = reference_root()
    if root is None:
        return None
    path = root / file_part
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return path, start, "\n".join(lines[start - 1 : node.end_lineno])
    return None


def rule_doc_section(code: str, heading: str) -> str | None:
    """The body of one `## heading` section of the rule's doc (`Why is this bad?`),
    without the heading; None when the doc or the section is missing."""
    doc = rule_doc(code)
    if doc is None:
        return None
    body: list[str] = []
    inside = False
    fence = False
    for line in doc.splitlines():
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("## "):
            if inside:
                break
            inside = line[3:].strip().lower() == heading.lower()
            continue
        if inside:
            body.append(line)
    text = "\n".join(body).strip()
    return text or None
