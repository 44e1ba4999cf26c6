"""Output formats: golden files on one shared fixture set, plus what each format promises.

Regenerate the golden files on purpose only:
    ASCEND_LINT_UPDATE_GOLDEN=1 python -m pytest tests/test_reporters.py
"""

from __future__ import annotations

import io
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import ascend_lint
from ascend_lint import cli, settings
from ascend_lint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position
from ascend_lint.reporters import OUTPUT_FORMATS, REPORTERS, json_format, sarif
from ascend_lint.rules import ALL_RULES, SYNTAX_ERROR_CODE
from ascend_lint.runner import lint_path

GOLDEN = Path(__file__).parent / "golden"
SOURCES = GOLDEN / "sources"
SARIF_SCHEMA = (
    Path(__file__).resolve().parents[2] / "shared" / "schemas" / "sarif-schema-2.1.0.json"
)
UPDATE = os.environ.get("ASCEND_LINT_UPDATE_GOLDEN") == "1"
EXTENSIONS = {
    "json": "json",
    "json-lines": "jsonl",
    "sarif": "sarif.json",
    "rdjson": "json",
    "rdjsonl": "jsonl",
    "junit": "xml",
    "gitlab": "json",
}
# Stand-ins for the rule docs in the SARIF golden file, so editing a doc or bumping the
# version does not churn it; one rule keeps no doc to cover the summary fallback.
STUB_DOCS = {code: f"# {code}\n\nStub *doc* for {code}.\n" for code in ("ASC000", "ASC001")}
NON_ASCII_LINE = 'gather_kernel[(1, 4)](g, "ñé漢", T, HV=4, BT=64, num_warps=4)'


@pytest.fixture
def in_golden(monkeypatch) -> None:
    """Work in GOLDEN, so paths are `sources/...` and reporters can read the lines."""
    monkeypatch.chdir(GOLDEN)


@pytest.fixture
def diagnostics(in_golden) -> list[Diagnostic]:
    """The real linter's findings on the fixture sources."""
    files = sorted(p.relative_to(GOLDEN).as_posix() for p in SOURCES.glob("*.py"))
    found = [d for f in files for d in lint_path(f, settings.ALL_CODES).diagnostics]
    return sorted(found, key=Diagnostic.sort_key)


def render(fmt: str, diagnostics: list[Diagnostic]) -> str:
    out = io.StringIO()
    REPORTERS[fmt](diagnostics, out)
    return out.getvalue()


def test_fixture_covers_the_cases_the_formats_differ_on(diagnostics):
    codes = {d.code for d in diagnostics}
    assert {"ASC001", "ASC003", "ASC004"} <= codes
    assert any(d.fix for d in diagnostics)
    assert any(d.start.row != d.end.row for d in diagnostics)
    assert any(d.related for d in diagnostics)  # a message that cites another line
    assert any(NON_ASCII_LINE in line for line in (SOURCES / "launch.py").open(encoding="utf-8"))


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
def test_golden_output(fmt, diagnostics, monkeypatch):
    monkeypatch.setattr(sarif, "rule_doc", STUB_DOCS.get)
    monkeypatch.setattr(ascend_lint, "__version__", "0.0.0-golden")
    actual = render(fmt, diagnostics)
    golden = GOLDEN / f"{fmt}.{EXTENSIONS.get(fmt, 'txt')}"
    if UPDATE:
        golden.write_bytes(actual.encode("utf-8"))
    if not golden.is_file():
        pytest.fail(f"{golden} is missing; create it with ASCEND_LINT_UPDATE_GOLDEN=1")
    assert actual == golden.read_bytes().decode("utf-8"), (
        f"{fmt} output changed; if on purpose, rerun with ASCEND_LINT_UPDATE_GOLDEN=1"
    )


def test_every_format_is_offered_by_cli_and_config():
    assert set(OUTPUT_FORMATS) == set(REPORTERS)
    assert settings.OUTPUT_FORMATS == OUTPUT_FORMATS
    action = next(a for a in cli._check_parser()._actions if a.dest == "output_format")
    assert tuple(action.choices) == OUTPUT_FORMATS


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
def test_no_findings_renders(fmt):
    text = render(fmt, [])
    if fmt == "junit":  # a run with no test cases reads as missing in CI dashboards
        cases = ET.fromstring(text).findall(".//testcase")
        assert len(cases) == 1
        assert cases[0].find("failure") is None
    elif fmt in ("sarif", "rdjson", "json", "gitlab"):
        json.loads(text)
    else:
        assert text == ""


# --- SARIF -----------------------------------------------------------------------------


def test_sarif_validates_against_the_official_schema(diagnostics):
    jsonschema = pytest.importorskip("jsonschema")
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA} (only CI checkouts have ../shared)")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    log = json.loads(render("sarif", diagnostics))  # real rule docs and version
    jsonschema.Draft4Validator(schema).validate(log)
    jsonschema.Draft4Validator(schema).validate(json.loads(render("sarif", [])))


def test_sarif_describes_every_rule_and_points_results_at_them(diagnostics):
    run = json.loads(render("sarif", diagnostics))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids == sorted({SYNTAX_ERROR_CODE, *(r.code for r in ALL_RULES)})
    assert run["tool"]["driver"]["version"] == ascend_lint.__version__
    assert len(run["results"]) == len(diagnostics)
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    fixed = [r for r in run["results"] if "fixes" in r]
    assert len(fixed) == sum(1 for d in diagnostics if d.fix)


def test_sarif_carries_each_rule_doc_once(diagnostics):
    """The doc is the rule's `help` (text and markdown); `fullDescription` is a short
    plain-text paragraph, not a second copy of it."""
    from ascend_lint.docs import rule_doc

    text = render("sarif", diagnostics)
    for rule in json.loads(text)["runs"][0]["tool"]["driver"]["rules"]:
        doc = rule_doc(rule["id"])
        if doc is None:
            continue
        assert rule["help"] == {"text": doc, "markdown": doc}
        full = rule["fullDescription"]["text"]
        assert full and "\n" not in full and "`" not in full and len(full) < len(doc) / 2
        assert full != rule["shortDescription"]["text"] or "## What it does" not in doc
        # json.dumps of the doc appears twice (help text and markdown), never a third time.
        assert text.count(json.dumps(doc, ensure_ascii=False)) == 2


def test_sarif_related_locations_are_the_lines_a_message_cites(diagnostics):
    log = json.loads(render("sarif", diagnostics))
    cited = [r for r in log["runs"][0]["results"] if "relatedLocations" in r]
    assert cited
    for result in cited:
        for related in result["relatedLocations"]:
            row = related["physicalLocation"]["region"]["startLine"]
            assert f"line {row}" in result["message"]["text"]


def test_sarif_columns_are_one_based_code_points(diagnostics):
    run = json.loads(render("sarif", diagnostics))["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    (region,) = [
        loc["physicalLocation"]["region"]
        for r in run["results"]
        for loc in r["locations"]
        if r["ruleId"] == "ASC004"
        and loc["physicalLocation"]["artifactLocation"]["uri"] == "sources/launch.py"
    ]
    text = (SOURCES / "launch.py").read_text(encoding="utf-8").splitlines()[region["startLine"] - 1]
    assert region["startColumn"] == text.index("num_warps=4") + 1
    assert region["endColumn"] == text.index("num_warps=4") + len("num_warps=4") + 1


def test_sarif_uris():
    at = Position(1, 0)
    relative = Diagnostic("ASC004", "n", "m", "sub dir/ñ.py", at, at)
    absolute = Diagnostic("ASC004", "n", "m", os.path.abspath("k.py"), at, at)
    results = json.loads(render("sarif", [relative, absolute]))["runs"][0]["results"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results]
    assert uris[0] == {"uri": "sub%20dir/%C3%B1.py", "uriBaseId": "%SRCROOT%"}
    assert uris[1] == {"uri": Path(os.path.abspath("k.py")).as_uri()}


# --- reviewdog ---------------------------------------------------------------------------


def test_rdjson_columns_are_utf8_bytes_end_exclusive(diagnostics):
    # Computed here from the raw bytes, independently of the reporter's helper.
    raw_lines = (SOURCES / "launch.py").read_bytes().split(b"\n")
    row = next(i for i, line in enumerate(raw_lines, 1) if NON_ASCII_LINE.encode() in line)
    line = raw_lines[row - 1]
    start = line.index(b"num_warps=4")
    removed = line.index(b", num_warps=4")
    end = start + len(b"num_warps=4")
    assert start != line.decode().index("num_warps=4")  # the line really is non-ASCII

    doc = json.loads(render("rdjson", diagnostics))
    found = next(d for d in doc["diagnostics"] if d["location"]["range"]["start"]["line"] == row)
    assert found["location"]["range"] == {
        "start": {"line": row, "column": start + 1},
        "end": {"line": row, "column": end + 1},
    }
    assert found["suggestions"] == [
        {
            "range": {
                "start": {"line": row, "column": removed + 1},
                "end": {"line": row, "column": end + 1},
            },
            "text": "",
        }
    ]
    assert found["code"]["value"] == "ASC004"
    assert doc["source"]["name"] == "ascend-lint"


def test_rdjsonl_is_rdjson_one_diagnostic_per_line(diagnostics):
    lines = render("rdjsonl", diagnostics).splitlines()
    assert [json.loads(line) for line in lines] == json.loads(render("rdjson", diagnostics))[
        "diagnostics"
    ]


# --- GitHub ------------------------------------------------------------------------------


def test_github_escapes_data_and_properties():
    d = Diagnostic(
        "ASC004", "n", "100% sure\r\nnext: a, b", "dir%,x:y/a\nb.py", Position(3, 4), Position(3, 9)
    )
    assert render("github", [d]) == (
        "::error title=ascend-lint (ASC004),file=dir%25%2Cx%3Ay/a%0Ab.py,"
        "line=3,endLine=3,col=5,endColumn=10::ASC004 100%25 sure%0D%0Anext: a, b\n"
    )


def test_github_columns_only_on_single_line_findings(diagnostics):
    for d, line in zip(diagnostics, render("github", diagnostics).splitlines()):
        assert ("col=" in line) == (d.start.row == d.end.row)


# --- JUnit and JSON lines ----------------------------------------------------------------


def test_junit_parses_with_one_failing_case_per_finding(diagnostics):
    root = ET.fromstring(render("junit", diagnostics))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == sorted({d.path for d in diagnostics})
    cases = root.findall(".//testcase")
    assert len(cases) == len(diagnostics) == int(root.get("failures"))
    first = diagnostics[0]
    assert cases[0].get("name") == f"org.ascend_lint.{first.code}"
    assert cases[0].find("failure").get("message") == first.message


def test_junit_escapes_markup_and_drops_characters_xml_cannot_hold():
    at = Position(1, 0)
    d = Diagnostic("ASC000", "n", 'bad <tag> & "quote"\x00\n', "a&b.py", at, at)
    failure = ET.fromstring(render("junit", [d])).find(".//failure")
    assert failure.get("message") == 'bad <tag> & "quote"\ufffd\n'
    assert failure.text == 'line 1, col 1, bad <tag> & "quote"\ufffd\n'


def test_json_lines_match_the_json_layout(diagnostics):
    lines = render("json-lines", diagnostics).splitlines()
    assert [json.loads(line) for line in lines] == [json_format.as_dict(d) for d in diagnostics]


def test_cli_writes_a_machine_format(in_golden, capsys):
    code = cli.main(["check", "--no-cache", "--output-format", "rdjsonl", "sources/launch.py"])
    out = capsys.readouterr().out
    assert code == 1
    assert [json.loads(line)["code"]["value"] for line in out.splitlines()] == [
        "ASC001",
        "ASC003",
        "ASC004",
    ]


def test_fix_applicability_reaches_sarif():
    at = Position(1, 0)
    fix = Fix(Applicability.UNSAFE, "rewrite", (Edit(at, Position(1, 3), "new"),))
    d = Diagnostic("ASC002", "n", "m", "k.py", at, Position(1, 3), fix=fix)
    (result,) = json.loads(render("sarif", [d]))["runs"][0]["results"]
    (change,) = result["fixes"][0]["artifactChanges"]
    assert result["fixes"][0]["properties"] == {"applicability": "unsafe"}
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 4},
            "insertedContent": {"text": "new"},
        }
    ]


# --- the CI formats Ruff users know -----------------------------------------------------


def test_gitlab_fingerprints_are_stable_and_distinct(diagnostics):
    first = json.loads(render("gitlab", diagnostics))
    again = json.loads(render("gitlab", diagnostics))
    prints = [item["fingerprint"] for item in first]
    assert prints == [item["fingerprint"] for item in again]  # same findings, same prints
    assert len(set(prints)) == len(prints)
    twice = json.loads(render("gitlab", [diagnostics[0], diagnostics[0]]))
    assert twice[0]["fingerprint"] != twice[1]["fingerprint"]  # a repeat is its own issue
    assert all(not item["location"]["path"].startswith("/") for item in first)


def test_azure_escapes_the_command_delimiters():
    from ascend_lint.diagnostics import Position

    d = Diagnostic("ASC001", "n", "msg", "a;b]c%.py", Position(3, 4), Position(3, 9))
    line = render("azure", [d])
    assert "sourcepath=a%3Bb%5Dc%AZP25.py;linenumber=3;columnnumber=5;code=ASC001;" in line
