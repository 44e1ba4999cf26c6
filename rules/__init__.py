"""The rule registry: one folder per code (`rules/ascNNN/`), its check in `rule.py`.

The codes come from the folders alone, so what only needs to know them (the settings,
the cache, a run that the cache answers whole) never imports a rule, nor the kernel
index the rules build on; the rule classes (`ALL_RULES`, `RULES_BY_CODE`) and the
rule API (`Rule`, `Finding`, ...) are imported on first use.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from typing import Any

_CODE_FOLDER = re.compile(r"asc\d{3}")


def _code_folders() -> set[str]:
    """The rule folders' names (os.scandir: this runs on every start, and importing
    pkgutil costs more than the listing; pkgutil only where the package is no folder)."""
    names: set[str] = set()
    for folder in __path__:
        try:
            with os.scandir(folder) as entries:
                names.update(
                    e.name
                    for e in entries
                    if _CODE_FOLDER.fullmatch(e.name)
                    and os.path.isfile(os.path.join(e.path, "__init__.py"))
                )
        except NotADirectoryError:  # a zip import
            import pkgutil

            names.update(
                m.name
                for m in pkgutil.iter_modules([folder])
                if m.ispkg and _CODE_FOLDER.fullmatch(m.name)
            )
    return names


RULE_CODES: tuple[str, ...] = tuple(sorted(name.upper() for name in _code_folders()))
# Reported by the engine itself: a file no rule could check (its rule, ASC000, says so).
SYNTAX_ERROR_CODE = "ASC000"
# Reported by the engine after suppression: a noqa code that silenced nothing (ASC100).
UNUSED_NOQA_CODE = "ASC100"

_API = {"Finding", "Invalid", "Rule", "RuleContext"}


@dataclass(frozen=True)
class RuleInfo:
    """A rule's identity, as its folder's `__init__.py` gives it (see `Rule`)."""

    code: str
    name: str
    summary: str
    references: tuple[str, ...]  # "<file>.py::<function>" in reference_kernels/
    shows: str | tuple[str, ...]


def rule_info(code: str) -> RuleInfo | None:
    """The identity of rule `code`, without importing its check (None: no such rule)."""
    if code not in RULE_CODES:
        return None
    folder = importlib.import_module(f"{__name__}.{code.lower()}")
    return RuleInfo(folder.CODE, folder.NAME, folder.SUMMARY, folder.REFERENCES, folder.SHOWS)


def _load_rules() -> tuple[type, ...]:
    from ascend_lint.rules._base import Rule

    rules = []
    for code in RULE_CODES:
        module = importlib.import_module(f"{__name__}.{code.lower()}.rule")
        (rule,) = [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, Rule)
            and value.__module__ == module.__name__
            and getattr(value, "code", None) == code
        ]
        rules.append(rule)
    return tuple(rules)


def __getattr__(name: str) -> Any:
    if name in _API:
        from ascend_lint.rules import _base

        return getattr(_base, name)
    if name == "SYNTAX_ERROR_NAME":
        return rule_info(SYNTAX_ERROR_CODE).name
    if name in ("ALL_RULES", "RULES_BY_CODE"):
        rules = _load_rules()
        globals().update(ALL_RULES=rules, RULES_BY_CODE={rule.code: rule for rule in rules})
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALL_RULES",
    "RULES_BY_CODE",
    "RULE_CODES",
    "SYNTAX_ERROR_CODE",
    "SYNTAX_ERROR_NAME",
    "UNUSED_NOQA_CODE",
    "Finding",
    "Invalid",
    "Rule",
    "RuleContext",
    "RuleInfo",
    "rule_info",
]
