"""A big file fixes in a bounded number of parses: each round applies every fix that
does not overlap another, findings on one call are fixed in one round (yet each
finding's own fix removes only its own keyword), and the first round starts from the
lint's own findings."""

from __future__ import annotations

import ast
import json

import pytest

import ascend_lint.source
from ascend_lint.cli import main
from ascend_lint.source import parse_python

HEADER = """\
import triton
import triton.language as tl


@triton.jit
def k(x, T, BT: tl.constexpr):
    i_t = tl.program_id(0).to(tl.int64)
    tl.store(x + i_t, 0)
"""

LAUNCH = """

def launch_{i}(x):
    k[(1,)](x, 8, BT=64, num_warps=4, num_stages=2)
    k[(2,)](
        x, 8, BT=64,
        num_warps=4, num_stages=2,
    )
"""


@pytest.fixture
def whole_file_parses(monkeypatch):
    """The sizes of the parsed texts that are the linted file (before or after its
    fixes); other parses, such as pytest rewriting a module it imports lazily, are not
    counted."""
    seen: list[int] = []
    real = ascend_lint.source.ast.parse
    head = HEADER.split("\n", 1)[0]

    def counting(source, *args, **kwargs):
        text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
        if isinstance(text, str) and text.startswith(head):
            seen.append(len(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ascend_lint.source.ast, "parse", counting)
    return seen


def test_fix_parses_a_file_with_hundreds_of_fixes_twice(tmp_path, whole_file_parses):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / "many.py"
    path.write_text(HEADER + "".join(LAUNCH.format(i=i) for i in range(150)))
    size = path.stat().st_size
    assert main(["--no-cache", "--fix", "-q", str(path)]) == 0
    # The lint, and the fixed text's syntax check, whose tree the lint of the fixed text
    # reads: no round per pair of neighbouring knobs, no re-lint of what the lint
    # already found, no second parse of the fixed text.
    big = [n for n in whole_file_parses if n > size // 2]
    assert len(big) == 2, big
    fixed = path.read_text()
    assert "num_warps" not in fixed and "num_stages" not in fixed and ".to(tl.int64)" not in fixed
    ast.parse(fixed)


def test_findings_on_one_call_are_fixed_in_one_round(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / "k.py"
    path.write_text(HEADER + LAUNCH.format(i=0))
    assert main(["--no-cache", "--fix", "--show-fixes", str(path)]) == 0
    out = capsys.readouterr().out
    assert "4 x ASC004" in out and "1 x ASC007" in out
    assert "k[(1,)](x, 8, BT=64)\n" in path.read_text()
    assert "        x, 8, BT=64,\n    )\n" in path.read_text()


MODULE = '''\
"""Docstring.

def not_a_cut(): a cut here leaves a piece that does not parse
"""
import triton


@triton.jit
def a(x):
    pass


TEXT = """


def inside_a_string():
    pass
"""


@triton.autotune(configs=[], key=[])

@triton.jit
def b(x):
    return (x
@ x)


class C:
    y: int = 1
'''


@pytest.mark.parametrize("piece", [1, 20, 80, 10_000])
def test_pieces_parse_to_the_tree_of_the_whole(monkeypatch, piece):
    monkeypatch.setattr(ascend_lint.source, "PIECE_CHARS", piece)
    dump = ast.dump(ast.parse(MODULE), include_attributes=True)
    assert ast.dump(parse_python(MODULE), include_attributes=True) == dump


def test_pieces_report_the_syntax_error_of_the_whole(monkeypatch):
    monkeypatch.setattr(ascend_lint.source, "PIECE_CHARS", 1)
    broken = MODULE + "\n\ndef d(:\n    pass\n"
    with pytest.raises(SyntaxError) as whole:
        ast.parse(broken)
    with pytest.raises(SyntaxError) as pieces:
        parse_python(broken)
    assert (pieces.value.lineno, pieces.value.msg) == (whole.value.lineno, whole.value.msg)


TUNED = """\
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BT": 64}, num_warps=4)],
    key=["T"],
)
@triton.jit
def tuned(x, T, BT: tl.constexpr):
    for i in range(0, T, BT):
        tl.store(x + i, 0)


def launch(x):
    if x is not None:
        tuned[(1,)](x, 8, num_warps=4)
"""


def test_libcst_reads_only_the_statements_a_fix_touched(monkeypatch):
    """A decorator's fix is checked as the decorators over `pass`, a launch's as its own
    statement: never the whole file (libcst's tree of a 5 MB file is about 1 GB)."""
    import libcst

    import ascend_lint.fixes
    from ascend_lint.diagnostics import Applicability
    from ascend_lint.fixes import fix_source
    from ascend_lint.settings import ALL_CODES

    read: list[str] = []
    real = ascend_lint.fixes._libcst_error

    def recording(text):
        read.append(text)
        return real(text)

    monkeypatch.setattr(ascend_lint.fixes, "_libcst_error", recording)
    outcome = fix_source("t.py", TUNED.encode(), ALL_CODES, frozenset({Applicability.SAFE}))
    assert outcome.error is None and len(outcome.applied) == 2
    assert len(read) == 2, read
    decorators, launch = sorted(read)
    assert decorators.startswith("@triton.autotune(") and "tl.store" not in decorators
    assert decorators.rstrip().endswith("pass")
    assert "tuned[(1,)](x, 8)" in launch and "def launch" not in launch
    for snippet in read:
        libcst.parse_module(snippet)  # each reads as a module on its own


def test_a_fix_libcst_rejects_leaves_the_file_unchanged(monkeypatch):
    import ascend_lint.fixes
    from ascend_lint.diagnostics import Applicability
    from ascend_lint.fixes import fix_source
    from ascend_lint.settings import ALL_CODES

    real = ascend_lint.fixes._libcst_error
    # Stand-in for a layout libcst refuses: the fixed launch, and only it.
    monkeypatch.setattr(
        ascend_lint.fixes,
        "_libcst_error",
        lambda text: "rejected" if "tuned[(1,)](x, 8)" in text else real(text),
    )
    raw = TUNED.encode()
    outcome = fix_source("t.py", raw, ALL_CODES, frozenset({Applicability.SAFE}))
    assert outcome.fixed == raw
    assert outcome.error is not None and "libcst rejects" in outcome.error


def test_each_findings_fix_removes_only_its_own_keyword(tmp_path, capsys):
    """What a review tool or an editor applies for one finding: `num_warps` goes,
    `num_stages` on the same line stays for its own finding."""
    from ascend_lint.diagnostics import Edit, Fix, Position
    from ascend_lint.fixes import apply_edits
    from ascend_lint.source import SourceFile

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / "k.py"
    text = HEADER + LAUNCH.format(i=0)
    path.write_text(text)
    assert main(["--no-cache", "--output-format", "json", "--select", "ASC004", str(path)]) == 1
    findings = json.loads(capsys.readouterr().out)
    assert len(findings) == 4
    source = SourceFile.from_bytes(str(path), text.encode())
    rows = text.splitlines()
    for finding in findings:
        keyword = finding["message"].split("`")[1]
        edits = tuple(
            Edit(
                Position(e["location"]["row"], e["location"]["column"] - 1),
                Position(e["end_location"]["row"], e["end_location"]["column"] - 1),
                e["content"],
            )
            for e in finding["fix"]["edits"]
        )
        fixed, _, _ = apply_edits(source, [Fix(finding["fix"]["applicability"], "", edits)])
        other = "num_stages" if keyword == "num_warps" else "num_warps"
        row = finding["location"]["row"]
        assert keyword not in fixed.splitlines()[row - 1]
        assert fixed.count(other) == text.count(other), (keyword, rows[row - 1])
        ast.parse(fixed)
    multi_line = [f for f in findings if f["location"]["row"] != findings[0]["location"]["row"]]
    warps = next(f for f in multi_line if "num_warps" in f["message"])
    assert [e["content"] for e in warps["fix"]["edits"]] == [""]


def test_a_big_texts_fix_rounds_read_its_statements_a_piece_at_a_time(monkeypatch):
    """The rounds' checks (libcst's objection, splitting lengthened lines) read only the
    statements of the fixed text: a big one is parsed a piece at a time and keeps no
    expression, and the fixes write what a parse of the whole text leads to."""
    import sys
    from pathlib import Path

    from ascend_lint import fixes
    from ascend_lint.diagnostics import Applicability
    from ascend_lint.rules import ALL_RULES

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bigfile import build_big_source

    raw = build_big_source(120_000).encode()
    codes = frozenset(r.code for r in ALL_RULES)
    allowed = frozenset({Applicability.SAFE, Applicability.UNSAFE})
    # a short line limit: some rounds split the lines their fixes lengthened
    expected = fixes.fix_source("big.py", raw, codes, allowed, line_length=60)
    assert expected.error is None and expected.changed

    whole_parses: list[int] = []
    real = fixes.parsed

    def parsed(text: str):
        whole_parses.append(len(text))
        return real(text)

    monkeypatch.setattr(fixes, "PARTS_ABOVE_CHARS", 1)  # every text is big
    monkeypatch.setattr(ascend_lint.source, "PIECE_CHARS", 8_000)  # several pieces
    monkeypatch.setattr(fixes, "parsed", parsed)
    got = fixes.fix_source("big.py", raw, codes, allowed, line_length=60)
    assert whole_parses == []
    assert got.error is None
    assert got.fixed == expected.fixed
    assert [d.code for d in got.applied] == [d.code for d in expected.applied]
    text = got.fixed.decode()
    tree = fixes.statements_of(text)
    assert not isinstance(tree, str) and len(tree.body) > 50

    def statements(module: ast.Module) -> list[tuple]:
        return [
            (type(s).__name__, s.lineno, s.end_lineno, fixes._first_line(s))
            for s in ast.walk(module)
            if isinstance(s, ast.stmt)
        ]

    assert statements(tree) == statements(ast.parse(text))  # nested ones too
    assert all(s.value is None for s in ast.walk(tree) if isinstance(s, ast.Assign))
