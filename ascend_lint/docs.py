"""Rule documentation and the reference kernels it points to, from a checkout or a wheel."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

DOCS_URL = "https://github.com/ascend-lint/ascend-lint/blob/main/rules/{folder}/{code}.md"
SOURCE_URL = "https://github.com/ascend-lint/ascend-lint/blob/main/reference_kernels/{file}"
# Where the reference kernels sit inside the installed package; a checkout keeps them in
# the top-level reference_kernels/ folder, which the wheel installs as this one.
REFERENCE_PACKAGE = "ascend_lint/reference_kernels"
_PACKAGE = Path(__file__).resolve().parent


def rule_url(code: str) -> str:
    return DOCS_URL.format(folder=code.lower(), code=code)


def rules_dir() -> Path:
    """The folder of the rule folders (`asc001/` ...): the repository's `rules/` in a
    checkout, `ascend_lint/rules/` in a wheel; found from the package itself."""
    import ascend_lint.rules

    return Path(ascend_lint.rules.__file__).resolve().parent


def doc_path(code: str) -> Path:
    """`rules/asc001/ASC001.md`: a rule's doc, in its folder."""
    return rules_dir() / code.lower() / f"{code}.md"


def rule_doc(code: str) -> str | None:
    path = doc_path(code)
    return path.read_text(encoding="utf-8") if path.is_file() else None


def reference_root() -> Path | None:
    """The folder of the reference kernel files: `ascend_lint/reference_kernels/` in a
    wheel, the repository's `reference_kernels/` in a checkout. Found by path, never
    imported: showing a kernel must not need torch or triton."""
    for folder in (_PACKAGE / "reference_kernels", _PACKAGE.parent / "reference_kernels"):
        if (folder / "__init__.py").is_file():
            return folder
    return None


@dataclass(frozen=True)
class Reference:
    """One function of the reference kernels that shows a rule's fix."""

    file: str  # "chunk_o.py"
    function: str  # "gate_base"

    @classmethod
    def parse(cls, reference: str) -> Reference:
        """`chunk_o.py::gate_base`, as a rule's `references` names it."""
        file, _, function = reference.partition("::")
        return cls(file, function)

    @property
    def path(self) -> str:
        """`ascend_lint/reference_kernels/chunk_o.py`: the file inside the installed
        package, the same wherever it is installed (a checkout included)."""
        return f"{REFERENCE_PACKAGE}/{self.file}"

    @property
    def url(self) -> str:
        """The file on the project's home page, for where it is not installed."""
        return SOURCE_URL.format(file=self.file)

    def as_json(self) -> dict:
        return {"path": self.path, "function": self.function}

    def source(self) -> tuple[Path, int, str] | None:
        """(the installed file, first line, source of the function with its decorators).

        The file is read and parsed, never imported: showing a kernel must not need
        triton."""
        folder = reference_root()
        if folder is None or not (folder / self.file).is_file():
            return None
        path = folder / self.file
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.name == self.function
            ):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                return path, start, "\n".join(lines[start - 1 : node.end_lineno])
        return None


@functools.cache  # a report asks once per finding; a rule's references never change
def rule_references(code: str) -> tuple[Reference, ...]:
    """The reference functions of rule `code` (none for a code no rule class carries)."""
    # The folder's identity, not the rule class: the reporters describe findings that
    # may all come from the cache, and the checks need not be imported for that.
    from ascend_lint.rules import rule_info

    info = rule_info(code)
    return tuple(Reference.parse(r) for r in info.references) if info is not None else ()


def describe_references(references: tuple[Reference, ...]) -> str:
    """`gate_base, gate_block_ptr in ascend_lint/reference_kernels/chunk_o.py`: the
    functions grouped by the file they are in, in the rule's order."""
    by_path: dict[str, list[str]] = {}
    for ref in references:
        by_path.setdefault(ref.path, []).append(ref.function)
    return "; ".join(f"{', '.join(names)} in {path}" for path, names in by_path.items())


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
