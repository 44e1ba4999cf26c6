"""Core kinds (`ascend_lint/index/core_kinds.py`): which core count a grid is sized by,
literal core counts, and which kernels use the cube unit."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_lint.index import KernelIndex

KERNELS = """
import triton
import triton.language as tl
from triton.runtime import driver
from .device import get_device_properties, get_vectorcore_num

@triton.jit
def _mm(a, b):
    return tl.dot(a, b)

@triton.jit
def cube(a, BLOCK: tl.constexpr):
    t = tl.load(a + tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    tl.store(a, tl.sum(_mm(t, t)))

@triton.jit
def vector(x, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), 0.0)

NUM_CORES = 48
PROPS = driver.active.utils.get_device_properties(0)
"""


def kinds_of(expr: str, setup: str = ""):
    source = textwrap.dedent(KERNELS) + textwrap.dedent(
        f"""
        def launch(x, n):
        {textwrap.indent(textwrap.dedent(setup), "    ")}
            vector[({expr},)](x, BLOCK=16)
        """
    )
    index = KernelIndex.build(ast.parse(source))
    binding = index.launches[-1]
    axis = index.quantities.grid_axes(binding.call, binding.host)[0][0]
    facts = index.core_kinds
    return sorted(facts.kinds(axis, binding.host)), facts.literal_count(axis, binding.host)


@pytest.mark.parametrize(
    "expr, setup, kinds",
    [
        ('PROPS["num_vectorcore"]', "", ["vector"]),
        ('min(n, PROPS.get("num_aicore", 20))', "", ["ai"]),
        ("c", 'c = getattr(PROPS, "num_aicore")', ["ai"]),
        ("num_vectorcore", "_, num_vectorcore = get_device_properties()", ["vector"]),
        ("min(get_vectorcore_num(), n)", "", ["vector"]),
        ("c", 'c = PROPS["num_aicore"] if n > 4 else PROPS["num_vectorcore"]', ["ai", "vector"]),
        ("2 * PROPS['num_aicore']", "", []),
        ("n", "", []),
    ],
)
def test_which_core_count_a_grid_axis_is(expr, setup, kinds):
    assert kinds_of(expr, setup)[0] == kinds


@pytest.mark.parametrize(
    "expr, setup, literal",
    [
        ("NUM_CORES", "", (48, "NUM_CORES = 48")),
        ("min(n, 40)", "", (40, "40")),
        ("c", "c = 24", (24, "24")),
        ("min(n, 65535)", "", None),
        ("n", "", None),
    ],
)
def test_literal_core_counts_and_grid_limit_caps(expr, setup, literal):
    assert kinds_of(expr, setup)[1] == literal


def test_cube_use_is_found_through_helpers():
    index = KernelIndex.build(ast.parse(textwrap.dedent(KERNELS)))
    by_name = {k.name: k for k in index.kernels}
    assert index.core_kinds.cube_use(by_name["cube"]).lineno == 9
    assert index.core_kinds.cube_use(by_name["vector"]) is None
