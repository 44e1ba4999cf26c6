"""SARIF 2.1.0: one run, every rule described, fixes as `fixes` for code-scanning tools.

Columns are 1-based code points (`run.columnKind` says so), end exclusive.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import PurePath
from typing import TextIO
from urllib.parse import quote

import ascend_lint
from ascend_lint.diagnostics import Diagnostic, Position
from ascend_lint.docs import rule_doc, rule_references, rule_url
from ascend_lint.reporters._common import HOMEPAGE, TOOL_NAME

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rules() -> list[dict]:
    # Each rule's identity from its folder: the checks need not be imported to describe
    # findings that may all come from the cache.
    from ascend_lint.rules import RULE_CODES, rule_info

    described = [(info.code, info.name, info.summary) for info in map(rule_info, RULE_CODES)]
    out = []
    for code, name, summary in described:
        doc = rule_doc(code)
        # The doc once, as the rule's help (SARIF 2.1.0 3.49.12: text and markdown);
        # the full description is its plain-text "What it does" paragraph (3.49.10).
        rule = {
            "id": code,
            "name": name,
            "shortDescription": {"text": summary},
            "fullDescription": {"text": _what_it_does(doc) or summary},
            "help": {"text": doc, "markdown": doc} if doc else {"text": summary},
            "helpUri": rule_url(code),
            "defaultConfiguration": {"level": "error"},
        }
        references = rule_references(code)
        if references:
            rule["properties"] = {"reference_kernels": [ref.as_json() for ref in references]}
        out.append(rule)
    return out


def _what_it_does(doc: str | None) -> str | None:
    """The first paragraph of a rule doc's "## What it does" as one line of plain text."""
    if not doc:
        return None
    match = re.search(r"^## What it does\s*\n(.*?)(?=^## |\Z)", doc, flags=re.M | re.S)
    if not match:
        return None
    paragraph = match.group(1).strip().split("\n\n")[0]
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", paragraph)  # [label](url) -> label
    text = text.replace("`", "").replace("**", "")
    return " ".join(text.split()) or None


def _artifact(path: str) -> dict:
    p = PurePath(path)
    # A file name that is not UTF-8 reaches us with surrogate escapes (os.fsdecode);
    # percent-encode its original bytes.
    raw = os.fsencode(p.as_posix())
    if p.is_absolute():
        return {"uri": "file://" + quote(raw)}
    # Relative to the checkout: consumers resolve %SRCROOT% to the repository root.
    return {"uri": quote(raw), "uriBaseId": "%SRCROOT%"}


def _region(start: Position, end: Position) -> dict:
    return {
        "startLine": start.row,
        "startColumn": start.column + 1,
        "endLine": end.row,
        "endColumn": end.column + 1,
    }


def _result(d: Diagnostic, index: dict[str, int]) -> dict:
    artifact = _artifact(d.path)
    result = {
        "ruleId": d.code,
        "ruleIndex": index.get(d.code, -1),  # -1: SARIF's "not in tool.driver.rules"
        "level": "error",
        "message": {"text": d.message},
        "locations": [
            {"physicalLocation": {"artifactLocation": artifact, "region": _region(d.start, d.end)}}
        ],
    }
    if d.related:
        # The places the message cites ("line N"), each its own location.
        result["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": {"artifactLocation": artifact, "region": _region(a, b)},
            }
            for i, (a, b) in enumerate(d.related)
        ]
    if d.fix is not None:
        replacements = [
            {"deletedRegion": _region(e.start, e.end), "insertedContent": {"text": e.content}}
            for e in d.fix.edits
        ]
        result["fixes"] = [
            {
                "description": {"text": d.fix.message},
                "artifactChanges": [{"artifactLocation": artifact, "replacements": replacements}],
                "properties": {"applicability": d.fix.applicability.value},
            }
        ]
    return result


def as_dict(diagnostics: list[Diagnostic]) -> dict:
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    driver = {
        "name": TOOL_NAME,
        "version": ascend_lint.__version__,
        "informationUri": HOMEPAGE,
        "rules": rules,
    }
    run = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "results": [_result(d, index) for d in diagnostics],
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    json.dump(as_dict(diagnostics), out, indent=2, ensure_ascii=False)
    out.write("\n")
