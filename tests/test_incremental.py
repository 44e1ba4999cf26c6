"""An incremental lint of an edited module equals a lint of its whole text.

The main check edits the shipped kernel modules at random, keystroke-sized edits one
after another (some leave the file broken for a moment, as typing does), and compares
each incremental result, fixes and their groups included, with a whole lint of the
same text. It also requires that most edits were in fact linted incrementally, so it
cannot pass by always falling back.
"""

from __future__ import annotations

import ast
import os
import random
import re
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

import ascend_lint.incremental as incremental
from ascend_lint import forks
from ascend_lint.engine import lint_source
from ascend_lint.incremental import lint_text
from ascend_lint.rules import ALL_RULES
from ascend_lint.units import components, unit_of

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bigfile import build_big_source  # noqa: E402
from incremental_check import CODES, OPTIONS, replay, shape  # noqa: E402

MODULES = sorted(
    [
        *(ROOT / "examples" / "gpu_habits").glob("[!_]*.py"),
        *(ROOT / "reference_kernels").glob("[!_]*.py"),
        *(ROOT / "tests" / "fixtures").glob("*.py"),
    ]
)


def replay_equal(path: str, text: str, edits: int, seed) -> Counter:
    tally: Counter = Counter()
    differences = replay(path, text, edits, random.Random(seed), tally, [])
    assert differences == [], differences
    assert tally["equal"] == edits
    return tally


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_random_edits_of_shipped_modules_lint_as_the_whole_text(module: Path):
    tally = replay_equal(str(module), module.read_text(encoding="utf-8"), 25, module.name)
    # Linted as whole texts on purpose: no kernel, a syntax error, a finding in
    # module-level code (a CUDA import).
    whole = (
        "torch_reference.py",
        "every_construct.py",
        "broken_syntax.py",
        "gpu_port_leftovers.py",
    )
    if module.name not in whole:
        assert tally["incremental"] >= 0.3 * tally["edits"], tally  # not all fallbacks


def test_random_edits_of_a_big_module_lint_as_the_whole_text():
    tally = replay_equal("big.py", build_big_source(60_000), 40, 7)
    assert tally["incremental"] >= 0.5 * tally["edits"], tally


def _reasons(before: str, after: str) -> str | None:
    """Why `after` is linted as a whole text after `before` (None: incrementally)."""
    memo = lint_text("m.py", before.encode(), OPTIONS)[1]
    assert memo is not None
    try:
        incremental._relint(memo, after.encode())
    except incremental._Fallback as exc:
        return str(exc)
    return None


MODULE = textwrap.dedent(
    """\
    import triton
    import triton.language as tl

    BLOCK = 64


    @triton.jit
    def first_kernel(x, y, n, BT: tl.constexpr):
        i = tl.program_id(0)
        for t in range(n):
            v = tl.load(x + t * 16 + i)
            tl.store(y + t, v)


    @triton.jit
    def second_kernel(x, y, BT: tl.constexpr):
        i = tl.program_id(0)
        tl.store(y + i, tl.load(x + i))


    def launch_first(x, y, n):
        first_kernel[(4,)](x, y, n, BT=BLOCK, num_warps=4)


    def launch_second(x, y):
        second_kernel[(4,)](x, y, BT=32, num_warps=8)
    """
)


def _check(before: str, after: str) -> None:
    memo = lint_text("m.py", before.encode(), OPTIONS)[1]
    result, _ = lint_text("m.py", after.encode(), OPTIONS, previous=memo)
    assert shape(result) == shape(lint_source("m.py", after.encode(), CODES))


def test_an_edit_inside_a_definition_relints_its_component_only(monkeypatch):
    after = MODULE.replace("num_warps=8", "num_warps=2")
    relinted: list[set[int]] = []
    real = incremental._lint_part

    def spy(path, source, units, chosen, *args):
        relinted.append({units[j].first for j in chosen})
        return real(path, source, units, chosen, *args)

    monkeypatch.setattr(incremental, "_lint_part", spy)
    assert _reasons(MODULE, after) is None
    # second_kernel (row 15) and its launcher (row 25); first_kernel's group is kept.
    assert relinted == [{15, 25}]
    _check(MODULE, after)


def test_a_module_constant_relints_what_reads_it():
    tile = textwrap.dedent(
        """\
        import triton
        import triton.language as tl

        BLOCK = 64


        @triton.jit
        def tile_kernel(x, y, BT: tl.constexpr):
            v = tl.load(x + tl.arange(0, BT))
            tl.store(y + tl.arange(0, BT), v)


        def launch(x, y):
            tile_kernel[(4,)](x, y, BT=BLOCK)
        """
    )
    huge = tile.replace("BLOCK = 64", "BLOCK = 1048576")
    assert _reasons(tile, huge) is None
    memo = lint_text("m.py", tile.encode(), OPTIONS)[1]
    result, _ = lint_text("m.py", huge.encode(), OPTIONS, previous=memo)
    assert [d.code for d in result.diagnostics] == ["ASC022"]  # a tile past the UB
    _check(tile, huge)


def test_lines_added_above_move_the_findings_below_and_their_line_citations():
    after = MODULE.replace("@triton.jit\ndef second", "\n\n@triton.jit\ndef second")
    assert _reasons(MODULE, after) is None
    _check(MODULE, after)


@pytest.mark.parametrize(
    "after,why",
    [
        (MODULE.replace("import triton\n", "import triton as tr\n"), "import"),
        (MODULE.replace("BLOCK = 64\n", "BLOCK = 64\nif BLOCK:\n    pass\n"), "context"),
        (MODULE.replace("num_warps=8)", "num_warps=8"), "do not parse"),
        (MODULE.replace("\n", "\r\n"), "line breaks"),
    ],
    ids=["an-import", "module-level-control-flow", "syntax-error", "crlf"],
)
def test_what_is_linted_as_a_whole_text(after: str, why: str):
    reason = _reasons(MODULE, after)
    assert reason is not None and why in reason
    _check(MODULE, after)


def test_a_file_level_noqa_comment_in_a_definition_not_linted_again():
    before = MODULE.replace(
        "v = tl.load(", "v = tl.load(  # ascend-lint: noqa: ASC004\n        ", 1
    )
    after = before.replace("num_warps=8", "num_warps=2")
    reason = _reasons(before, after)
    assert reason is not None and "file-level noqa" in reason
    _check(before, after)


def test_a_new_file_level_noqa_comment_relints_the_whole_text():
    after = MODULE.replace("BLOCK = 64\n", "BLOCK = 64\n# ascend-lint: noqa: ASC004\n")
    reason = _reasons(MODULE, after)
    assert reason is not None and "file-level noqa comments changed" in reason
    _check(MODULE, after)


def test_a_finding_in_module_level_code_starts_no_memo():
    source = MODULE + "\nCONFIGS = [triton.Config({}, num_warps=4)]\n"
    result, memo = lint_text("m.py", source.encode(), OPTIONS)
    assert any(d.start.row > MODULE.count("\n") for d in result.diagnostics)
    assert memo is None


@pytest.mark.parametrize(
    "rule,case",
    [
        pytest.param(r, c, id=f"{r.code}-invalid-{i}")
        for r in ALL_RULES
        for i, c in enumerate(r.INVALID)
    ],
)
def test_messages_cite_rows_only_through_related_locations(rule, case):
    """The rows a message names move with its code: a finding kept from the previous
    lint is moved by shifting its locations, which is right only if its text holds no
    row number of its own (rules cite a place as a related location)."""
    code = case.code
    moved = "\n" * 7 + code
    here = lint_source("c.py", code.encode(), frozenset({rule.code}))
    there = lint_source("c.py", moved.encode(), frozenset({rule.code}))
    assert len(here.diagnostics) == len(there.diagnostics)
    for a, b in zip(here.diagnostics, there.diagnostics):
        assert b.start.row == a.start.row + 7
        assert b.template == a.template
        assert not re.search(r"\blines? \d", a.template), a.template
        assert [s.row for s, _ in b.related] == [s.row + 7 for s, _ in a.related]


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "new-interpreter"])
def test_a_whole_lint_in_a_process_of_its_own_is_the_one_here(monkeypatch, fork: bool):
    """The server lints a big buffer whole in another process (its memory stays its
    own): the same findings, and a memo the next edit starts from as from its own."""
    from ascend_lint.server import worker_process

    if fork and not worker_process.FORK:
        pytest.skip("forks only on Linux")
    monkeypatch.setattr(worker_process, "FORK", fork)
    text = build_big_source(30_000)
    raw = text.encode()
    here, memo_here = incremental.lint_whole("big.py", raw, OPTIONS)
    lines = text.split("\n")
    apart, memo = worker_process.lint_whole_in_process("big.py", raw, OPTIONS, lines)
    assert shape(apart) == shape(here)
    assert memo is not None and memo.lines is lines and memo.units == memo_here.units
    edited = text.replace("num_warps=4", "num_warps=8", 2).encode()
    relinted = incremental.relint(memo, "big.py", edited, OPTIONS)
    assert relinted is not None and relinted[1].from_previous
    assert shape(relinted[0]) == shape(lint_source("big.py", edited, CODES))


def test_an_edit_after_a_syntax_error_starts_from_the_last_text_that_parsed():
    """Typing passes through text that does not parse (`f(` before `)`): the lint of
    the text after it is still incremental, from the last lint that left a memo."""
    from pathlib import Path

    from ascend_lint.server.buffers import lint_text as lint_buffer_text
    from ascend_lint.server.config import SettingsResolver

    resolved = SettingsResolver().for_path(Path("m.py"))
    good = lint_buffer_text("m.py", MODULE, 1, resolved)
    broken = lint_buffer_text(
        "m.py", MODULE.replace("num_warps=8)", "num_warps=8"), 2, resolved, good
    )
    assert [d.code for d in broken.diagnostics] == ["ASC000"]
    after = MODULE.replace("num_warps=8)", "num_warps=2)")
    fixed = lint_buffer_text("m.py", after, 3, resolved, broken)
    assert fixed.memo is not None and fixed.memo.from_previous
    whole = lint_source("m.py", after.encode(), resolved.settings.enabled_codes())
    assert [d.to_dict() for d in fixed.diagnostics] == [d.to_dict() for d in whole.diagnostics]


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "new-interpreter"])
def test_a_whole_lint_whose_process_hangs_is_done_here(monkeypatch, fork: bool):
    """A worker process that never answers is ended when its time is up, and the lint
    is done in the server instead: late, but never lost."""
    import time

    from ascend_lint.server import worker_process

    if fork and not worker_process.FORK:
        pytest.skip("forks only on Linux")
    monkeypatch.setattr(worker_process, "FORK", fork)
    monkeypatch.setattr(worker_process, "TIMEOUT_S", 1.0)
    monkeypatch.setattr(worker_process, "TIMEOUT_S_PER_MB", 0.0)
    if fork:  # the fork runs this module's state: its job hangs
        monkeypatch.setattr(worker_process, "_do", lambda job: time.sleep(60))
    else:
        monkeypatch.setattr(
            worker_process, "SPAWNED", [sys.executable, "-c", "import time; time.sleep(60)"]
        )
    raw = MODULE.encode()
    started = time.monotonic()
    result, memo = worker_process.lint_whole_in_process("m.py", raw, OPTIONS, MODULE.split("\n"))
    assert time.monotonic() - started < 20
    assert shape(result) == shape(lint_source("m.py", raw, CODES))
    assert memo is not None


def test_a_fix_all_lints_each_round_from_the_buffers_last_lint(monkeypatch, tmp_path):
    """An editor's fix-all lints the fixed text again from the buffer's lint: only the
    definitions the fixes changed (and those linked to them), never the whole text,
    and with the same result as the command line's `--fix`, which lints it whole."""
    from ascend_lint.server import buffers
    from ascend_lint.server.config import SettingsResolver
    from ascend_lint.session import fix_file

    path = tmp_path / "big.py"
    text = build_big_source(60_000)
    path.write_text(text, encoding="utf-8")
    resolved = SettingsResolver().for_path(path)
    buffer = buffers.lint_text(str(path), text, 1, resolved)
    assert buffer.memo is not None and buffer.diagnostics

    relinted: list[int] = []  # rows the rounds linted again
    real = incremental._lint_part

    def spy(path, source, units, chosen, *args):
        relinted.extend(units[j].first for j in chosen)
        return real(path, source, units, chosen, *args)

    def no_whole_lint(*args):
        raise AssertionError("a round linted the whole text")

    monkeypatch.setattr(incremental, "_lint_part", spy)
    monkeypatch.setattr(incremental, "lint_whole", no_whole_lint)
    fixed, count, error = buffers.fix_all_text(buffer, unsafe=False)
    assert error is None and fixed is not None and count > 0
    units = buffer.memo.units
    assert 0 < len(set(relinted)) < sum(u.definition for u in units)  # some kept theirs

    options = resolved.settings.options_for(str(path), fix=True, unsafe_fixes=False)
    whole = fix_file(str(path), text.encode(), options)
    assert fixed == whole.fixed.decode() and count == len(whole.applied)


def _fix_all_in_forks(monkeypatch, tmp_path, forked=None):
    """(fix_all_text with 3 workers, with 1 worker, the groups the first one made)."""
    from ascend_lint.server import buffers
    from ascend_lint.server.config import SettingsResolver

    path = tmp_path / "big.py"
    text = build_big_source(60_000)
    path.write_text(text, encoding="utf-8")
    buffer = buffers.lint_text(str(path), text, 1, SettingsResolver().for_path(path))
    alone = buffers.fix_all_text(buffer, unsafe=False)
    groups: list[list[set[int]]] = []
    real_groups = incremental._groups

    def spy(*args):
        groups.append(real_groups(*args))
        return groups[-1]

    monkeypatch.setattr(incremental, "SPLIT_ABOVE_CHARS", 1)  # a small text splits too
    monkeypatch.setattr(incremental, "_groups", spy)
    if forked is not None:
        monkeypatch.setattr(forks, "forked", forked)
    shared = buffers.fix_all_text(buffer, unsafe=False, workers=3)
    return shared, alone, groups


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")
def test_a_fix_all_round_linted_by_several_processes_fixes_as_one_does(
    monkeypatch, tmp_path, forks_started
):
    """A fix process lints a round's changed definitions in groups of whole components,
    one group per core, the others in forks of itself: the same fixed text."""
    started = forks_started
    shared, alone, groups = _fix_all_in_forks(monkeypatch, tmp_path)
    assert shared == alone and shared[0] is not None and shared[2] is None
    split = [g for g in groups if len(g) > 1]
    assert split and len(started) == sum(len(g) - 1 for g in split)
    for group_list in split:
        assert len(group_list) == 3 and all(group_list)
        assert sum(map(len, group_list)) == len(set().union(*group_list))  # disjoint


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")
def test_an_edit_linted_again_by_several_processes_lints_as_the_whole_text(
    monkeypatch, forks_started
):
    text = build_big_source(60_000)
    memo = lint_text("big.py", text.encode(), OPTIONS)[1]
    assert memo is not None
    edited = text.replace("num_warps=4", "num_warps=8").encode()  # in most launchers
    monkeypatch.setattr(incremental, "SPLIT_ABOVE_CHARS", 1)
    forked = forks_started
    relinted = incremental.relint(memo, "big.py", edited, OPTIONS, workers=3)
    assert relinted is not None and len(forked) == 2
    assert shape(relinted[0]) == shape(lint_source("big.py", edited, CODES))
    again = edited.replace(b"num_warps=8", b"num_warps=2")  # and from that lint's memo
    relinted = incremental.relint(relinted[1], "big.py", again, OPTIONS, workers=3)
    assert relinted is not None and len(forked) == 4
    assert shape(relinted[0]) == shape(lint_source("big.py", again, CODES))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")
def test_a_group_whose_fork_dies_is_linted_here(monkeypatch, tmp_path):
    real = forks.forked

    def dying(job):
        return real(lambda: os._exit(9))

    shared, alone, groups = _fix_all_in_forks(monkeypatch, tmp_path, dying)
    assert any(len(g) > 1 for g in groups)
    assert shared == alone


def test_groups_are_whole_components_of_about_equal_size():
    text = build_big_source(200_000)
    lines = text.split("\n")
    units = [unit_of(stmt, lines) for stmt in ast.parse(text).body]
    component = components(units)
    relinted = {j for j, u in enumerate(units) if u.definition}
    assert incremental._groups(lines, units, component, relinted, 1) == [relinted]
    groups = incremental._groups(lines, units, component, relinted, 2)
    assert len(groups) == 2 and groups[0] | groups[1] == relinted
    assert {component[j] for j in groups[0]}.isdisjoint(component[j] for j in groups[1])
    sizes = [sum(map(len, lines[units[j].first - 1 : units[j].last])) for j in relinted]
    assert max(sizes) < 0.2 * sum(sizes)  # so a greedy split comes out even
    chars = [
        sum(len(line) + 1 for j in g for line in lines[units[j].first - 1 : units[j].last])
        for g in groups
    ]
    assert max(chars) < 1.25 * min(chars)
    few = {j for j in relinted if units[j].last - units[j].first < 40}
    small = {j for j in few if component[j] == component[min(few)]}
    assert incremental._groups(lines, units, component, small, 2) == [small]  # one component


def test_an_edit_linted_again_from_the_callers_tree_lints_as_from_its_own_parse():
    """A fix round hands its check's tree of the fixed text to the lint again: the
    statements around the edit are taken from it instead of parsed again."""
    text = build_big_source(30_000)
    memo = lint_text("big.py", text.encode(), OPTIONS)[1]
    assert memo is not None
    for old, new in (("num_warps=4", "num_warps=8"), ("tl.program_id(0)", "tl.program_id(1)")):
        edited = text.replace(old, new, 3)
        assert edited != text
        given = incremental.relint(memo, "big.py", edited.encode(), OPTIONS, tree=ast.parse(edited))
        parsed = incremental.relint(memo, "big.py", edited.encode(), OPTIONS)
        assert given is not None and parsed is not None
        assert (
            shape(given[0])
            == shape(parsed[0])
            == shape(lint_source("big.py", edited.encode(), CODES))
        )
        assert given[1].units == parsed[1].units


def test_statements_across_the_edited_rows_are_not_taken_from_the_tree():
    tree = ast.parse("a = 1\n\n\ndef f():\n    return (\n        1\n    )\n\n\nb = 2\n")
    assert [type(s).__name__ for s in incremental._statements_within(tree, 2, 9)] == ["FunctionDef"]
    for start, stop in ((5, 10), (2, 6), (1, 4)):
        with pytest.raises(incremental._Fallback):
            incremental._statements_within(tree, start, stop)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")
def test_a_whole_lint_shared_among_forks_is_the_one_here(monkeypatch, forks_started):
    """The server's process for a big buffer's whole lint shares its definitions among
    forks: the same findings, and a memo the next edit starts from as from its own."""
    text = build_big_source(60_000)
    raw = text.encode()
    alone, alone_memo = incremental.lint_whole("big.py", raw, OPTIONS)
    monkeypatch.setattr(incremental, "SPLIT_ABOVE_CHARS", 1)
    forked = forks_started
    shared, memo = incremental.lint_whole("big.py", raw, OPTIONS, workers=2)
    assert len(forked) == 1
    assert shape(shared) == shape(alone) == shape(lint_source("big.py", raw, CODES))
    assert memo is not None and alone_memo is not None and memo.units == alone_memo.units
    assert [[d.to_dict() for d in unit] for unit in memo.findings] == [
        [d.to_dict() for d in unit] for unit in alone_memo.findings
    ]
    edited = text.replace("num_warps=4", "num_warps=8", 2).encode()
    relinted = incremental.relint(memo, "big.py", edited, OPTIONS)
    assert relinted is not None and relinted[1].from_previous
    assert shape(relinted[0]) == shape(lint_source("big.py", edited, CODES))
    # a finding in module-level code: no part can show it equal, the text is linted whole
    module_level = text + "\nCONFIGS = [triton.Config({}, num_warps=4)]\n"
    whole, no_memo = incremental.lint_whole("big.py", module_level.encode(), OPTIONS, workers=2)
    assert no_memo is None and len(forked) == 2
    assert shape(whole) == shape(lint_source("big.py", module_level.encode(), CODES))
