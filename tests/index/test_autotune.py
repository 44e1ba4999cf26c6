"""Autotune config lists that repeat configs (`ascend_lint/index/autotune.py`): repeated
displays, loops no config reads, and tuple rows that the names read do not tell apart."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_lint.index import KernelIndex


def index_of(configs: str) -> KernelIndex:
    code = textwrap.dedent(
        f"""
        import triton

        @triton.autotune(configs={configs}, key=["N"])
        @triton.jit
        def k(x, N, BN: "tl.constexpr", BD: "tl.constexpr"):
            pass
        """
    )
    return KernelIndex.build(ast.parse(code))


def test_rows_that_agree_on_the_names_read_repeat_a_config():
    autotune = index_of(
        "[triton.Config({'BN': BN}) for BN, w in [(16, 4), (16, 8), (32, 4), (32, 2)]]"
    ).autotune
    (loop,) = autotune.narrowable_loops()
    assert loop.kept == (0,)
    assert loop.rows == (0, 2)  # the first row of each BN
    assert loop.dropped == 2
    assert autotune.repeating_loops() == []  # `BN` is read: not a loop no config reads


@pytest.mark.parametrize(
    "configs",
    [
        # rows the names read tell apart
        "[triton.Config({'BN': BN}) for BN, w in [(16, 4), (32, 4)]]",
        # every name read
        "[triton.Config({'BN': BN, 'BD': BD}) for BN, BD in [(16, 4), (16, 8)]]",
        # a row that is not a literal tuple: its rows cannot be compared
        "[triton.Config({'BN': BN}) for BN, w in [(16, 4), ROW]]",
        # a filter on the clause reads its names
        "[triton.Config({'BN': BN}) for BN, w in [(16, 4), (16, 8)] if w > 4]",
    ],
)
def test_no_narrowing_where_nothing_repeats_or_rows_cannot_be_compared(configs):
    assert index_of(configs).autotune.narrowable_loops() == []


def test_removing_the_option_that_read_a_row_name_makes_its_rows_repeat():
    index = index_of(
        "[triton.Config({'BN': BN, 'BD': BD}, num_warps=w)"
        " for BN, BD, w in [(1024, 16, 4), (2048, 32, 4), (2048, 32, 8)]]"
    )
    autotune = index.autotune
    assert autotune.narrowable_loops() == []  # `w` is read by `num_warps=w`
    (config,) = index.configs
    option = next(k.value for k in config.keywords if k.arg == "num_warps")
    (loop,) = autotune.loops_narrowed_without(autotune.comprehension_of(config), [option])
    assert loop.kept == (0, 1) and loop.rows == (0, 1) and loop.dropped == 1
