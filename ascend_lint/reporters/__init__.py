"""Output formats: one module each, all fed the same sorted diagnostics.

Importing this package stays cheap (the CLI reads OUTPUT_FORMATS to build --help):
a format's module is imported only when that format is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic

Reporter = Callable[[list[Diagnostic], TextIO], None]

# format name -> module under ascend_lint.reporters with a `report` function
_MODULES = {
    "full": "full",
    "concise": "concise",
    "json": "json_format",
    "json-lines": "json_lines",
    "github": "github",
    "sarif": "sarif",
    "rdjson": "rdjson",
    "rdjsonl": "rdjsonl",
    "junit": "junit",
    "gitlab": "gitlab",
    "pylint": "pylint",
    "grouped": "grouped",
    "azure": "azure",
}
OUTPUT_FORMATS: tuple[str, ...] = tuple(_MODULES)
# The formats written for a person at a terminal, coloured where `--color` says so
# (`style`): their `report` takes the Style as a third argument.
STYLED_FORMATS = frozenset({"full", "concise", "grouped"})
COLOR_CHOICES = ("auto", "always", "never")


class _Registry(Mapping):
    def __getitem__(self, name: str) -> Reporter:
        return importlib.import_module(f"{__name__}.{_MODULES[name]}").report

    def __iter__(self):
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


REPORTERS: Mapping[str, Reporter] = _Registry()
