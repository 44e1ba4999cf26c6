"""ASC004's fix leaves code the project's own linters accept: what only the removed
launch options read (a local, an imported helper) goes with them when that is free of
side effects, and never when something still reads it."""

from __future__ import annotations

import ast
import shutil
import subprocess
import textwrap

import pytest

from ascend_lint.codemods import remove_argument, remove_arguments, remove_arguments_each
from ascend_lint.diagnostics import Applicability
from ascend_lint.fixes import fix_source
from ascend_lint.source import SourceFile

SAFE = frozenset({Applicability.SAFE})
BOTH = frozenset({Applicability.SAFE, Applicability.UNSAFE})
ASC004 = frozenset({"ASC004"})

HEADER = """\
import triton
import triton.language as tl


@triton.jit
def k(x, BK: tl.constexpr):
    pass


"""


def fix(body: str, applicable=SAFE, path: str = "ops.py"):
    code = HEADER + textwrap.dedent(body)
    outcome = fix_source(path, code.encode(), ASC004, applicable)
    assert outcome.error is None
    return outcome.fixed.decode()[len(HEADER) :], outcome


def test_a_local_two_launches_read_goes_with_both_in_one_round():
    fixed, outcome = fix(
        """\
        def launch(x, BK):
            num_warps = 4 if BK == 64 else 8
            k[(1,)](x, BK=BK, num_warps=num_warps)
            k[(2,)](x, BK=BK, num_warps=num_warps)
        """
    )
    assert fixed == textwrap.dedent(
        """\
        def launch(x, BK):
            k[(1,)](x, BK=BK)
            k[(2,)](x, BK=BK)
        """
    )
    assert len(outcome.applied) == 2 and outcome.remaining == []
    assert outcome.applied[0].fix.message == "Remove `num_warps` and the now unused `num_warps`"


def test_a_local_a_silenced_launch_still_reads_is_kept():
    fixed, _ = fix(
        """\
        def launch(x, BK):
            num_warps = 4 if BK == 64 else 8
            k[(1,)](x, BK=BK, num_warps=num_warps)
            k[(2,)](x, BK=BK, num_warps=num_warps)  # noqa: ASC004
        """
    )
    assert fixed == textwrap.dedent(
        """\
        def launch(x, BK):
            num_warps = 4 if BK == 64 else 8
            k[(1,)](x, BK=BK)
            k[(2,)](x, BK=BK, num_warps=num_warps)  # noqa: ASC004
        """
    )


@pytest.mark.parametrize(
    "body",
    [
        # read elsewhere too
        """\
        def launch(x, BK):
            num_warps = 4
            print(num_warps)
            k[(1,)](x, BK=BK, num_warps=num_warps)
        """,
        # a scope that reads its locals by name
        """\
        def launch(x, BK):
            num_warps = 4
            k[(1,)](x, BK=BK, num_warps=num_warps)
            return locals()
        """,
        # a module global: other modules may import it
        """\
        NUM_WARPS = 4


        def launch(x, BK):
            k[(1,)](x, BK=BK, num_warps=NUM_WARPS)
        """,
        # rebound with `+=`: not a plain assignment
        """\
        def launch(x, BK):
            num_warps = 4
            num_warps += 4
            k[(1,)](x, BK=BK, num_warps=num_warps)
        """,
    ],
)
def test_names_something_else_may_read_are_kept(body):
    fixed, outcome = fix(body)
    assert fixed == textwrap.dedent(body).replace(", num_warps=num_warps", "").replace(
        ", num_warps=NUM_WARPS", ""
    )
    assert outcome.applied[0].fix.message == "Remove `num_warps`"


def test_tuple_unpacking_keeps_the_other_targets():
    fixed, _ = fix(
        """\
        def launch(x, BK, T, hopper):
            if hopper:
                BS, num_warps, num_stages = min(64, T), 8, 2
            else:
                BS, num_warps = min(32, T), 4
                num_stages = 1
            k[(BS,)](x, BK=BK, num_warps=num_warps, num_stages=num_stages)
        """
    )
    assert fixed == textwrap.dedent(
        """\
        def launch(x, BK, T, hopper):
            if hopper:
                BS = min(64, T)
            else:
                BS = min(32, T)
            k[(BS,)](x, BK=BK)
        """
    )


def test_a_name_unpacked_from_a_call_becomes_underscore():
    fixed, outcome = fix(
        """\
        def launch(x, BK, N):
            if N < 1024:
                BM, num_warps = config(N, 4)
            else:
                _, BM, num_warps = config(N, 8)
            k[(BM,)](x, BK=BK, num_warps=num_warps)
        """
    )
    assert fixed == textwrap.dedent(
        """\
        def launch(x, BK, N):
            if N < 1024:
                BM, _ = config(N, 4)
            else:
                _, BM, _ = config(N, 8)
            k[(BM,)](x, BK=BK)
        """
    )
    assert outcome.remaining == []


def test_an_if_left_without_statements_goes_whole():
    fixed, _ = fix(
        """\
        def launch(x, BK, N):
            if N <= 512:
                num_warps = 4
            elif N <= 2048:
                num_warps = 8
            else:
                num_warps = 16
            k[(1,)](x, BK=BK, num_warps=num_warps)
        """
    )
    assert fixed == "def launch(x, BK, N):\n    k[(1,)](x, BK=BK)\n"


def test_arms_left_the_same_are_joined():
    fixed, _ = fix(
        """\
        def launch(x, BK, major, vendor):
            if major == 9:
                BM = 64
                num_stages = 3
            elif major == 8:
                BM = 32
                num_stages = 2
            elif major == 7 and vendor == "a":  # older parts
                BM = 32
                num_stages = 1
            else:
                raise RuntimeError(major)
            k[(BM,)](x, BK=BK, num_stages=num_stages)
        """
    )
    assert fixed == textwrap.dedent(
        """\
        def launch(x, BK, major, vendor):
            if major == 9:
                BM = 64
            elif major == 8 or (major == 7 and vendor == "a"):
                BM = 32
            else:
                raise RuntimeError(major)
            k[(BM,)](x, BK=BK)
        """
    )


def test_a_chain_of_locals_goes_to_its_start():
    fixed, _ = fix(
        """\
        def launch(x, BK):
            big = BK > 64
            num_warps = 8 if big else 4
            k[(1,)](x, BK=BK, num_warps=num_warps)
        """
    )
    assert fixed == "def launch(x, BK):\n    k[(1,)](x, BK=BK)\n"


def test_an_import_only_a_removed_local_reads_goes_with_it():
    fixed, outcome = fix(
        """\
        from helpers import FAST
        from helpers import other


        def launch(x, BK):
            stages = 2 if FAST else 1
            k[(1,)](x, BK=BK, num_stages=stages)
        """
    )
    assert fixed == "from helpers import other\n\n\ndef launch(x, BK):\n    k[(1,)](x, BK=BK)\n"
    assert outcome.applied[0].fix.message.endswith("the now unused `stages`, `FAST`")


@pytest.mark.parametrize(
    "body,left",
    [
        (
            """\
            def launch(x, BK):
                try:
                    x = int(x)
                except ValueError:
                    num_warps = 4
                k[(1,)](x, BK=BK, num_warps=num_warps)
            """,
            "    try:\n        x = int(x)\n    except ValueError:\n        pass\n",
        ),
        (
            """\
            def launch(x, BK):
                match BK:
                    case 64:
                        num_warps = 4
                    case _:
                        num_warps = 8
                k[(1,)](x, BK=BK, num_warps=num_warps)
            """,
            "    match BK:\n        case 64:\n            pass\n        case _:\n            pass\n",
        ),
    ],
    ids=["except", "match"],
)
def test_locals_assigned_in_handlers_and_cases_go_too(body, left):
    fixed, _ = fix(body)
    assert fixed == f"def launch(x, BK):\n{left}    k[(1,)](x, BK=BK)\n"


def test_the_only_import_of_a_module_goes_only_with_unsafe_fixes():
    body = """\
        from helpers import shared_mem


        def launch(x, BK):
            k[(1,)](x, BK=BK, num_stages=2 if shared_mem() else 1)
        """
    fixed, outcome = fix(body)
    assert fixed == textwrap.dedent(body) and outcome.remaining
    message = outcome.remaining[0].fix.message
    assert "unsafe: no other import of `helpers` is left" in message
    fixed, _ = fix(body, BOTH)
    assert fixed == "\n\ndef launch(x, BK):\n    k[(1,)](x, BK=BK)\n"


def test_an_imported_name_goes_when_its_module_stays_imported():
    fixed, _ = fix(
        """\
        from helpers import cdiv, shared_mem
        from helpers import other


        def launch(x, BK):
            k[(cdiv(BK, 2),)](x, BK=BK, num_stages=2 if shared_mem() else 1)
        """
    )
    assert fixed.startswith("from helpers import cdiv\nfrom helpers import other\n")


def test_exported_names_and_package_inits_keep_their_imports():
    body = """\
        from helpers import shared_mem

        __all__ = ["shared_mem"]


        def launch(x, BK):
            k[(1,)](x, BK=BK, num_stages=2 if shared_mem() else 1)
        """
    assert fix(body)[0].startswith("from helpers import shared_mem\n")
    body = body.replace('__all__ = ["shared_mem"]', "")
    assert fix(body, BOTH, path="pkg/__init__.py")[0].startswith("from helpers import shared_mem\n")


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_pyflakes_finds_nothing_the_fix_left(tmp_path):
    code = HEADER + textwrap.dedent(
        """\
        from helpers import cdiv, shared_mem


        def launch(x, BK, T, cfg):
            num_warps = 4 if BK == 64 else 8
            BS, num_stages = min(64, T), 2
            stages = cfg["num_stages"]
            k[(cdiv(T, BS),)](x, BK=BK, num_warps=num_warps, num_stages=num_stages)
            k[(1,)](x, BK=BK, num_stages=2 if shared_mem() else 1, maxnreg=stages)
        """
    )
    before = tmp_path / "before.py"
    before.write_text(code)
    after = tmp_path / "after.py"
    after.write_bytes(fix_source("after.py", code.encode(), ASC004, SAFE).fixed)

    def pyflakes(path):
        cmd = ["ruff", "check", "--isolated", "--select", "F,B018", "-q", str(path)]
        return subprocess.run(cmd, capture_output=True, text=True).stdout

    assert pyflakes(before) == ""
    assert pyflakes(after) == ""


CONFIGS = """\
NUM_STAGES = [2, 3] if FAST else [1]


@triton.autotune(
    configs=[
        triton.Config({'BV': BV}, num_warps=num_warps, num_stages=num_stages)
        for BV in [32, 64]
        for num_warps in [1, 2, 4] + ([] if FAST else [8])
        for num_stages in (NUM_STAGES)
    ],
    key=['T'],
)
@triton.jit
def tuned(x, T, BV: tl.constexpr):
    pass
"""


def test_loops_that_only_fed_the_knobs_go_in_the_same_round():
    fixed, outcome = fix(CONFIGS)
    assert fixed == CONFIGS.replace(
        """\
        triton.Config({'BV': BV}, num_warps=num_warps, num_stages=num_stages)
        for BV in [32, 64]
        for num_warps in [1, 2, 4] + ([] if FAST else [8])
        for num_stages in (NUM_STAGES)
""",
        """\
        triton.Config({'BV': BV})
        for BV in [32, 64]
""",
    )
    assert outcome.remaining == [] and len(outcome.applied) == 2
    assert all(d.fix.applicability is Applicability.SAFE for d in outcome.applied)


def test_loops_after_a_commented_clause_go_as_their_lines():
    body = """\
    @triton.autotune(
        configs=[
            triton.Config(
                {"BM": BM, "GS": GS},
                num_warps=w,
                num_stages=s,
            )
            for BM in [64, 128]
            for GS in [1, 8]  # GS = 1: no swizzle
            for w in [4, 8]
            for s in [2, 3]  # stages
        ],
        key=["n"],
    )
    @triton.jit
    def tuned(x, n, BM: tl.constexpr, GS: tl.constexpr):
        pass
    """
    fixed, outcome = fix(body)
    assert fixed == textwrap.dedent(body).replace(
        """\
            num_warps=w,
            num_stages=s,
""",
        "",
    ).replace(
        """\
        for w in [4, 8]
        for s in [2, 3]  # stages
""",
        "",
    )
    assert outcome.remaining == [] and len(outcome.applied) == 2


def test_a_loop_whose_values_come_from_a_call_goes_only_with_unsafe_fixes():
    body = CONFIGS.replace("[1, 2, 4] + ([] if FAST else [8])", "sizes()")
    fixed, outcome = fix(body)
    assert fixed == body  # removing the knobs alone would leave `for num_warps` repeating
    assert len(outcome.remaining) == 2
    for finding in outcome.remaining:
        assert finding.fix.applicability is Applicability.UNSAFE
        assert "(unsafe: `sizes()` runs code that may have side effects)" in finding.fix.message
    fixed, outcome = fix(body, BOTH)
    assert "for num_warps" not in fixed and "for num_stages" not in fixed
    assert outcome.remaining == []


def test_configs_left_repeating_are_reported_and_merged():
    body = """\
    @triton.autotune(
        configs=[triton.Config({'BV': 32}), triton.Config({'BV': 32}), triton.Config({'BV': 64})]
        + [triton.Config({'BV': bv}) for bv in (16, 8) for stage in range(3)],
        key=['T'],
    )
    @triton.jit
    def tuned(x, T, BV: tl.constexpr):
        pass
    """
    fixed, outcome = fix(body)
    messages = sorted(d.message.split(":")[0] for d in outcome.applied)
    assert messages == [
        "`for stage in ...` repeats every config up to 3 times",
        "this `triton.Config` repeats the one on line 11",
    ]
    assert fixed == textwrap.dedent(body).replace(" triton.Config({'BV': 32}),", "", 1).replace(
        " for stage in range(3)", ""
    )


def test_a_loop_over_values_that_may_be_none_goes_only_with_unsafe_fixes():
    body = """\
    def configs(sizes):
        return [triton.Config({'BV': 64}, num_warps=w) for w in sizes]
    """
    fixed, outcome = fix(body)
    assert fixed == textwrap.dedent(body)
    [finding] = outcome.remaining
    assert finding.fix.applicability is Applicability.UNSAFE
    assert "(unsafe: `sizes` may be empty, and then so was the list)" in finding.fix.message
    fixed, _ = fix(body, BOTH)
    assert fixed == "def configs(sizes):\n    return [triton.Config({'BV': 64})]\n"


def test_a_cleanup_that_meets_an_option_edit_is_left_out(monkeypatch):
    """Defensive: were a cleanup edit to overlap an option's own edit, the fix removes the
    options alone rather than apply a mix."""
    import ascend_lint.rules.asc004.rule as asc004
    from ascend_lint.diagnostics import Edit, Position
    from ascend_lint.rules.asc004.fix import Cleanup

    real = asc004.knob_cleanups

    def overlapping(tree, source, hosts, values):
        group_of, _ = real(tree, source, hosts, values)
        key = next(iter(values))
        clash = Edit(Position(11, 0), Position(13, 0), "")
        return group_of, {group_of[key]: Cleanup([clash], ["num_warps"])}

    monkeypatch.setattr(asc004, "knob_cleanups", overlapping)
    fixed, outcome = fix(
        """\
        def launch(x, BK):
            num_warps = 4 if BK == 64 else 8
            k[(1,)](x, BK=BK, num_warps=num_warps)
        """
    )
    assert outcome.applied[0].fix.message == "Remove `num_warps`"
    assert (
        fixed == "def launch(x, BK):\n    num_warps = 4 if BK == 64 else 8\n    k[(1,)](x, BK=BK)\n"
    )


@pytest.mark.parametrize(
    "line", ["k[(1,)](x, num_warps=4, BK=BK, num_stages=2)", "kw = {'num_warps': 4, 'BK': 64}"]
)
def test_the_edits_of_each_option_match_those_made_one_at_a_time(line):
    source = SourceFile.from_bytes("ops.py", line.encode())
    container = ast.parse(line).body[0].value
    keys = {"num_warps", "num_stages"} if "num_stages" in line else {"num_warps"}
    every, each = remove_arguments_each(source, container, keys)
    assert every == remove_arguments(source, container, keys)
    assert each == {key: remove_argument(source, container, key) for key in keys}
    assert len(set(map(repr, each.values()))) == len(keys)


def test_the_engine_tells_the_fix_what_is_silenced_and_ignore_noqa_silences_nothing():
    """The rule never reads `# noqa` itself: the engine says which of its findings are
    silenced. With --ignore-noqa none is, so the shared fix takes the local that only
    the two options read, as it would without the comment."""
    from ascend_lint.engine import lint_source

    code = textwrap.dedent(
        """\
        def launch(x, BK):
            num_warps = 4 if BK == 64 else 8
            k[(1,)](x, BK=BK, num_warps=num_warps)
            k[(2,)](x, BK=BK, num_warps=num_warps)  # noqa: ASC004
        """
    ).encode()

    def rows_edited(result) -> set[int]:
        rows = set()
        for d in result.diagnostics:
            edits = d.fix.together.edits if d.fix.together else d.fix.edits
            rows |= {row for e in edits for row in range(e.start.row, e.end.row + 1)}
        return rows

    silenced = lint_source("m.py", code, frozenset({"ASC004"}))
    assert [d.start.row for d in silenced.diagnostics] == [3]
    assert 2 not in rows_edited(silenced)
    ignored = lint_source("m.py", code, frozenset({"ASC004"}), ignore_noqa=True)
    assert [d.start.row for d in ignored.diagnostics] == [3, 4]
    assert 2 in rows_edited(ignored)
