"""A big module is linted one group of components at a time (`engine.findings_in_parts`),
and the result equals a lint of its whole text: every diagnostic, fix and fix group.
The size thresholds are lowered here so that small shipped modules take that path too;
where a part cannot be shown equal (a finding in module-level code, a piece that does
not parse alone) the whole text is linted, and that result is compared as well."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

import ascend_lint.engine as engine
import ascend_lint.source
from ascend_lint import forks
from ascend_lint.engine import lint_source

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bigfile import build_big_source  # noqa: E402
from incremental_check import CODES, shape  # noqa: E402

MODULES = sorted(
    [
        *(ROOT / "examples" / "gpu_habits").glob("[!_]*.py"),
        *(ROOT / "reference_kernels").glob("[!_]*.py"),
        *(ROOT / "tests" / "fixtures").glob("*.py"),
    ]
)


@pytest.fixture
def in_parts(monkeypatch):
    """Lint every module in parts of about `chars` characters of definitions; returns
    the list that records, per lint, whether the parts were used (False: fell back)."""
    taken: list[bool] = []
    real = engine.findings_in_parts

    def spy(*args, **kwargs):
        found = real(*args, **kwargs)
        taken.append(found is not None)
        return found

    def configure(chars: int) -> list[bool]:
        monkeypatch.setattr(engine, "PARTS_ABOVE_CHARS", 1)
        monkeypatch.setattr(engine, "PART_CHARS", chars)
        monkeypatch.setattr(engine, "findings_in_parts", spy)
        return taken

    return configure


def whole(path: str, raw: bytes):
    saved = engine.PARTS_ABOVE_CHARS
    engine.PARTS_ABOVE_CHARS = 1 << 62
    try:
        return lint_source(path, raw, CODES)
    finally:
        engine.PARTS_ABOVE_CHARS = saved


def groups_of(text: str, chars: int) -> int:
    from ascend_lint.source import SourceFile, top_level_pieces
    from ascend_lint.units import components, unit_of

    source = SourceFile.from_bytes("m.py", text.encode())
    units = [unit_of(s, source.lines) for p in top_level_pieces(text) for s in p]
    return len(engine._component_groups(units, components(units), source.lines))


def test_a_big_module_in_parts_lints_as_its_whole_text(in_parts):
    text = build_big_source(200_000)
    expected = shape(whole("big.py", text.encode()))
    taken = in_parts(20_000)
    assert groups_of(text, 20_000) >= 5  # several parts
    got = shape(lint_source("big.py", text.encode(), CODES))
    assert taken == [True]
    assert got == expected
    assert len(expected[0]) > 100  # the comparison has findings and fixes to compare
    assert any(d["f"] for d, _group in expected[0])


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_each_shipped_module_in_parts_lints_as_its_whole_text(module: Path, in_parts):
    raw = module.read_bytes()
    expected = shape(whole(str(module), raw))
    in_parts(500)  # about one component per part
    assert shape(lint_source(str(module), raw, CODES)) == expected


def test_most_shipped_modules_take_the_parts(in_parts):
    taken = in_parts(500)
    for module in MODULES:
        lint_source(str(module), module.read_bytes(), CODES)
    assert len(taken) >= 10
    assert sum(taken) >= 0.6 * len(taken), taken  # not all fallbacks


MODULE_LEVEL_FINDING = textwrap.dedent(
    """\
    import triton
    import triton.language as tl

    configs = [triton.Config({"BLOCK": 64}, num_warps=4)]


    @triton.autotune(configs=configs, key=["n"])
    @triton.jit
    def scale(x, n, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)


    @triton.jit
    def shift(x, n, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x + o, tl.load(x + o, mask=o < n) + 1, mask=o < n)
    """
)


def test_a_finding_in_module_level_code_lints_the_whole_text(in_parts):
    raw = MODULE_LEVEL_FINDING.encode()
    expected = shape(whole("m.py", raw))
    assert any(d["c"] == "ASC004" for d, _group in expected[0])  # at module level
    taken = in_parts(10)
    assert shape(lint_source("m.py", raw, CODES)) == expected
    assert taken == [False]


def test_a_piece_that_does_not_parse_alone_lints_the_whole_text(in_parts, monkeypatch):
    # A cut before a top-level `def` inside a string: that piece does not parse alone.
    text = MODULE_LEVEL_FINDING.replace(
        'configs = [triton.Config({"BLOCK": 64}, num_warps=4)]',
        "NOTE = '''\n\ndef not_code():\n'''\nconfigs = [triton.Config({'BLOCK': 64})]",
    )
    raw = text.encode()
    expected = shape(whole("m.py", raw))
    taken = in_parts(10)
    assert shape(lint_source("m.py", raw, CODES)) == expected
    monkeypatch.setattr(ascend_lint.source, "PIECE_CHARS", 1)
    assert shape(lint_source("m.py", raw, CODES)) == expected
    assert taken == [True, False]  # in parts while the pieces parse, whole after


def test_a_syntax_error_is_reported_as_for_the_whole_text(in_parts):
    raw = (build_big_source(20_000) + "\n\ndef broken(:\n    pass\n").encode()
    expected = shape(whole("m.py", raw))
    assert expected[0][0][0]["c"] == "ASC000"
    in_parts(2_000)
    assert shape(lint_source("m.py", raw, CODES)) == expected


def test_a_noqa_comment_in_a_module_string_lints_the_whole_text(in_parts):
    # The file-level comment scan reads every line, strings too; the parts leave the
    # module-level strings out, so their comments would differ: the whole text is linted.
    text = MODULE_LEVEL_FINDING.replace(
        "import triton\n", 'import triton\n\n"""\n# ascend-lint: noqa: ASC019\n"""\n', 1
    ).replace('configs = [triton.Config({"BLOCK": 64}, num_warps=4)]', "configs = []")
    raw = text.encode()
    expected = shape(whole("m.py", raw))
    taken = in_parts(10)
    assert shape(lint_source("m.py", raw, CODES)) == expected
    assert taken == [False]
    taken.clear()
    plain = text.replace("# ascend-lint: noqa: ASC019", "a note")
    assert shape(lint_source("m.py", plain.encode(), CODES)) == shape(whole("m.py", plain.encode()))
    assert taken == [True]


@pytest.mark.skipif(not forks.CAN_FORK, reason="forks only on Linux")
@pytest.mark.parametrize("workers", [2, 3, 8])
def test_parts_shared_among_forks_lint_as_the_whole_text(in_parts, forks_started, workers):
    """Each process takes every `workers`-th part (at most `PART_WORKERS` processes,
    for the memory each holds); the findings are those of one process."""
    text = build_big_source(200_000)
    expected = shape(whole("big.py", text.encode()))
    taken = in_parts(20_000)
    started = forks_started
    got = shape(lint_source("big.py", text.encode(), CODES, workers=workers))
    assert taken == [True] and len(started) == min(workers, engine.PART_WORKERS) - 1
    assert got == expected


@pytest.mark.skipif(not forks.CAN_FORK, reason="forks only on Linux")
def test_a_share_whose_fork_dies_is_linted_here(in_parts, monkeypatch):
    import os

    text = build_big_source(100_000)
    expected = shape(whole("big.py", text.encode()))
    taken = in_parts(20_000)
    real = forks.forked
    monkeypatch.setattr(forks, "forked", lambda job: real(lambda: os._exit(9)))
    assert shape(lint_source("big.py", text.encode(), CODES, workers=2)) == expected
    assert taken == [True]


@pytest.mark.skipif(not forks.CAN_FORK, reason="forks only on Linux")
def test_the_command_line_shares_one_big_module_among_its_jobs(
    tmp_path, monkeypatch, forks_started
):
    """`-j N` on a module linted in parts forks N - 1 times; `-j 1` never forks, with
    `--fix` too."""
    from ascend_lint.cli import main

    monkeypatch.setattr(engine, "PARTS_ABOVE_CHARS", 1)
    monkeypatch.setattr(engine, "PART_CHARS", 20_000)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / "big.py"
    path.write_text(build_big_source(100_000), encoding="utf-8")
    started = forks_started
    main(["--no-cache", "-q", "--exit-zero", "-j", "2", str(path)])
    assert len(started) == 1
    started.clear()
    main(["--no-cache", "-q", "--exit-zero", "-j", "1", "--fix", str(path)])
    assert started == []
