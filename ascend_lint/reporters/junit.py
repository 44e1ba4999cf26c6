"""JUnit XML in Ruff's layout: a testsuite per file, a failing testcase per finding."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TextIO

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.reporters._common import TOOL_NAME

PACKAGE = "org.ascend_lint"
# Characters XML 1.0 cannot carry even escaped; a parser would reject the whole report.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def report(diagnostics: list[Diagnostic], out: TextIO) -> None:
    n = str(len(diagnostics))
    root = ET.Element("testsuites", name=TOOL_NAME, tests=n, failures=n, errors="0")
    by_path: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_path.setdefault(d.path, []).append(d)
    for path, found in by_path.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_text(path),
            tests=str(len(found)),
            disabled="0",
            errors="0",
            failures=str(len(found)),
            package=PACKAGE,
        )
        for d in found:
            row, col = str(d.start.row), str(d.start.column + 1)
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{PACKAGE}.{d.code}",
                classname=_text(path),
                line=row,
                column=col,
            )
            failure = ET.SubElement(case, "failure", message=_text(d.message))
            failure.text = _text(f"line {row}, col {col}, {d.message}")
    if not diagnostics:
        # CI dashboards show a run with no test cases as missing, not as passed.
        suite = ET.SubElement(
            root, "testsuite", name=TOOL_NAME, tests="1", disabled="0", errors="0", failures="0"
        )
        ET.SubElement(suite, "testcase", name="No errors found", classname=TOOL_NAME)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode") + "\n")
