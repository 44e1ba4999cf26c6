"""A fix that lengthens a line past the line length the file's project gives Ruff splits
it inside its brackets, as `ruff format` would (`ascend_lint/line_wrap.py`, applied by
`fixes.fix_source`); where no project configures Ruff, lines stay as the fix wrote them."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_lint.cli import main
from ascend_lint.diagnostics import Applicability
from ascend_lint.fixes import fix_source
from ascend_lint.line_wrap import RUFF_DEFAULT_LINE_LENGTH, ruff_line_length, width, wrap_lines

BOTH = frozenset({Applicability.SAFE, Applicability.UNSAFE})
ASC019 = frozenset({"ASC019"})

# ASC019's clamp makes the load's line 105 characters long (88 before)
KERNEL = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def shift_kernel(x, y, table, n, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        prev = tl.where(o == 0, 0.0, tl.load(x + o - 1, mask=(o >= 1) & (o < n), other=0.0))
        tl.store(y + o, prev, mask=o < n)
    """
)
CLAMPED = "tl.load(x + tl.maximum(o - 1, 0), mask=(o >= 1) & (o < n), other=0.0)"


def fixed(code: str, line_length: int | None) -> str:
    outcome = fix_source("ops.py", code.encode(), ASC019, BOTH, line_length=line_length)
    assert outcome.error is None and outcome.applied
    return outcome.fixed.decode()


# -- the line length -----------------------------------------------------------------------
def test_the_line_length_is_the_nearest_ruff_configuration(tmp_path):
    code = tmp_path / "proj" / "pkg" / "sub" / "ops.py"
    code.parent.mkdir(parents=True)
    assert ruff_line_length(str(code)) is None  # no configuration: lines are left alone
    (tmp_path / "proj" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    assert ruff_line_length(str(code)) == 120
    # a pyproject.toml without [tool.ruff] is not Ruff's: the search goes on up
    (tmp_path / "proj" / "pkg" / "pyproject.toml").write_text("[tool.ascend-lint]\n")
    assert ruff_line_length(str(code)) == 120
    # one that configures Ruff without a line length: Ruff's default
    (tmp_path / "proj" / "pkg" / "pyproject.toml").write_text("[tool.ruff.lint]\nselect = []\n")
    assert ruff_line_length(str(code)) == RUFF_DEFAULT_LINE_LENGTH == 88
    # in one folder `.ruff.toml` comes before `ruff.toml`, which comes before pyproject.toml
    (tmp_path / "proj" / "pkg" / "ruff.toml").write_text("line-length = 99\n")
    assert ruff_line_length(str(code)) == 99
    (tmp_path / "proj" / "pkg" / ".ruff.toml").write_text("line-length = 79\n")
    assert ruff_line_length(str(code)) == 79
    # `extend` brings the base configuration's line length
    (tmp_path / "proj" / "pkg" / "sub" / "ruff.toml").write_text('extend = "../ruff.toml"\n')
    assert ruff_line_length(str(code)) == 99


# -- splitting ------------------------------------------------------------------------------
def test_a_lengthened_line_is_split_inside_its_outermost_brackets():
    assert fixed(KERNEL, 100) == KERNEL.replace(
        "    prev = tl.where(o == 0, 0.0, tl.load(x + o - 1, mask=(o >= 1) & (o < n), other=0.0))\n",
        f"    prev = tl.where(\n        o == 0, 0.0, {CLAMPED}\n    )\n",
    )


def test_where_the_contents_do_not_fit_each_element_takes_a_line():
    assert fixed(KERNEL, 88) == KERNEL.replace(
        "    prev = tl.where(o == 0, 0.0, tl.load(x + o - 1, mask=(o >= 1) & (o < n), other=0.0))\n",
        f"    prev = tl.where(\n        o == 0,\n        0.0,\n        {CLAMPED},\n    )\n",
    )


def test_lines_within_the_length_or_without_a_configuration_stay_as_the_fix_wrote_them():
    one_line = KERNEL.replace("tl.load(x + o - 1, mask=(o >= 1) & (o < n), other=0.0)", CLAMPED)
    assert fixed(KERNEL, None) == one_line
    assert fixed(KERNEL, 120) == one_line


def test_a_line_too_long_before_the_fix_is_left_alone():
    long_already = KERNEL.replace("prev = ", "previous_value_of_the_shifted_window = ")
    assert fixed(long_already, 100) == long_already.replace(
        "tl.load(x + o - 1, mask=(o >= 1) & (o < n), other=0.0)", CLAMPED
    )


def test_a_split_group_after_the_split_is_joined_where_it_now_fits():
    lines = [
        "    dprob = tl.load(x + o * D + tl.maximum(g, 0), mask=valid, other=0.0).to(\n",
        "        tl.float32\n",
        "    )\n",
    ]
    assert wrap_lines(lines, [0], 60) == [
        "    dprob = tl.load(\n",
        "        x + o * D + tl.maximum(g, 0), mask=valid, other=0.0\n",
        "    ).to(tl.float32)\n",
    ]


@pytest.mark.parametrize(
    "line, split",
    [
        # a subscript takes no trailing comma: `x[a,]` is `x[(a,)]`
        (
            "    v = table[first_index_of_the_row + 1, second_index_of_the_column]\n",
            [
                "    v = table[\n",
                "        first_index_of_the_row + 1,\n",
                "        second_index_of_the_column\n",
                "    ]\n",
            ],
        ),
        # nor a generator argument, which stays whole
        (
            "    v = total(value_of_the_lane * 2 for value_of_the_lane in lanes_of_it)\n",
            [
                "    v = total(\n",
                "        value_of_the_lane * 2 for value_of_the_lane in lanes_of_it\n",
                "    )\n",
            ],
        ),
        # a trailing comment stays at the end of the statement
        (
            "    v = f(first_argument_of_the_call, second_argument_of_it)  # why\n",
            [
                "    v = f(\n",
                "        first_argument_of_the_call,\n",
                "        second_argument_of_it,\n",
                "    )  # why\n",
            ],
        ),
    ],
)
def test_splits_that_keep_the_statement_what_it_was(line, split):
    assert wrap_lines([line], [0], 56) == split


NAMES = st.sampled_from(["a", "tl.x", "lane_offsets", "f", "g", '"s, (t"', "1", "-2"])


@st.composite
def expressions(draw, depth: int = 0) -> str:
    if depth >= 3 or draw(st.booleans()):
        return draw(NAMES)
    parts = draw(st.lists(expressions(depth + 1), min_size=1, max_size=4))
    shape = draw(st.sampled_from(["call", "keywords", "list", "tuple", "subscript", "group"]))
    if shape == "call":
        return f"{draw(NAMES)}({', '.join(parts)})"
    if shape == "keywords":
        return f"f({', '.join(f'k{i}={p}' for i, p in enumerate(parts))})"
    if shape == "list":
        return f"[{', '.join(parts)}]"
    if shape == "tuple":
        return f"({', '.join(parts)},)"
    if shape == "subscript":
        return f"x[{', '.join(parts)}]"
    return f"({' + '.join(parts)})"


@settings(max_examples=200, deadline=None, derandomize=bool(os.environ.get("CI")))
@given(expressions(), st.integers(min_value=8, max_value=60), st.sampled_from(["", "    "]))
def test_a_split_statement_reads_as_it_did(expression, limit, indent):
    line = f"{indent}value = {expression}  # note\n"
    split = wrap_lines([line], [0], limit)
    if split is None:
        return
    module = "if 1:\n" if indent else ""
    assert ast.dump(ast.parse(module + "".join(split))) == ast.dump(ast.parse(module + line))
    assert "".join(split).count("# note") == 1


def test_a_split_whose_closing_line_takes_the_next_two_keeps_the_line_count_right():
    """`) + f(` joined with `k0=a, k1=a, k2=a` and `)` leaves two lines fewer: the lines
    still to split are counted from there (an index past the end raised IndexError)."""
    line = "a((f(k0=a) + f(k0=a, k1=a) + f(k0=a, k1=a, k2=a)))\n"
    split = wrap_lines([line], [0], 31)
    assert split is not None and ") + f(k0=a, k1=a, k2=a)\n" in [s.lstrip() for s in split]
    assert ast.dump(ast.parse("".join(split))) == ast.dump(ast.parse(line))
    assert all(width(s) <= 31 for s in split)


def test_a_line_without_brackets_to_split_is_left():
    assert wrap_lines(["    value_of_the_sum = first_term + second_term\n"], [0], 20) is None


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_fix_on_the_command_line_leaves_no_long_line_for_ruff(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    path = tmp_path / "ops.py"
    path.write_text(KERNEL)
    monkeypatch.chdir(tmp_path)
    main(["check", "--no-cache", "--select", "ASC019", "--fix", "--unsafe-fixes", "ops.py"])
    capsys.readouterr()
    assert CLAMPED in path.read_text()
    for command in (["ruff", "check", "--select", "E501"], ["ruff", "format", "--check"]):
        run = subprocess.run([*command, "--no-cache", "ops.py"], cwd=tmp_path, capture_output=True)
        assert run.returncode == 0, run.stdout
