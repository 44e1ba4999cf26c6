"""The host value model (`ascend_lint/index/quantities.py`): what a launcher value
counts, its caps, and which values are the same."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_lint.index import KernelIndex
from ascend_lint.index.quantities import Role

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def k(x, n, V: tl.constexpr):
    tl.program_id(0)
"""


def grid_quantities(host_body: str):
    body = textwrap.indent(textwrap.dedent(host_body), "    ")
    source = KERNEL + f"\ndef launch(x, cores):\n{body}\n    k[(value,)](x, 0, V=1)\n"
    index = KernelIndex.build(ast.parse(source))
    (binding,) = index.launches
    (axes,) = index.quantities.grid_axes(binding.call, binding.host)
    return index.quantities.of(axes[0], binding.host)


@pytest.mark.parametrize(
    "body",
    [
        "n = x.numel()\nvalue = n if n < 65535 else 65535",
        "n = x.numel()\nvalue = 65535 if n > 65535 else n",
        "n = x.numel()\nvalue = 65535 if 65535 < n else n",
    ],
)
def test_a_conditional_that_picks_the_smaller_caps_at_the_grid_limit(body):
    (quantity,) = grid_quantities(body)
    assert (quantity.role, quantity.cap) == (Role.LENGTH, 65535)


def test_a_conditional_that_picks_the_smaller_of_a_count_and_the_cores_is_the_cores():
    (quantity,) = grid_quantities("n = x.numel()\nvalue = n if n < cores else cores")
    assert quantity.role == Role.CORES


def test_a_conditional_that_picks_the_larger_is_no_cap():
    (quantity,) = grid_quantities("n = x.numel()\nvalue = n if n > 65535 else 65535")
    assert (quantity.role, quantity.cap) == (Role.LENGTH, None)


@pytest.mark.parametrize(
    "capped", ["x.shape[0]", "rows_wanted", "triton.next_power_of_2(x.shape[0])"]
)
def test_a_cap_at_the_grid_limit_shows_a_count_that_outgrows_the_grid(capped):
    (quantity,) = grid_quantities(f"value = min({capped}, 65535)")
    assert (quantity.role, quantity.cap) == (Role.LENGTH, 65535)


def test_one_value_through_a_helper_a_local_and_another_spelling_of_the_dimension():
    source = textwrap.dedent(
        """
        import triton

        def _round(n):
            return triton.next_power_of_2(n)

        def launch(x):
            rows, cols = x.shape
            width = cols
            a = _round(x.shape[-1])
            b = triton.next_power_of_2(width)
            c = triton.next_power_of_2(rows)
        """
    )
    index = KernelIndex.build(ast.parse(source))
    host = next(h for h in index.hosts if h.name == "launch")
    a, b, c = (host.assignments[name][0] for name in ("a", "b", "c"))
    assert index.quantities.same_value(a, host, b, host)
    assert not index.quantities.same_value(a, host, c, host)
