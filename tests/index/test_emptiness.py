"""Empty inputs (`ascend_lint/index/emptiness.py`): which launch quantities are 0 for an
empty input, and which guards before a launch exclude it."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_lint.index import KernelIndex
from ascend_lint.index.emptiness import nonzero_subjects

HEAD = """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.program_id(0)
"""


def launch_axis(body: str):
    """(index, binding, first grid axis) of the last launch in `body`."""
    index = KernelIndex.build(ast.parse(textwrap.dedent(HEAD) + textwrap.dedent(body)))
    binding = index.launches[-1]
    axis = index.quantities.grid_axes(binding.call, binding.host)[0][0]
    return index, binding, axis


def zero(body: str):
    """(what is 0 for an empty input, whether every way to 0 is guarded), or None."""
    index, binding, axis = launch_axis(body)
    paths = index.emptiness.zero_paths(axis, binding.host)
    if not paths:
        return None
    unguarded = index.emptiness.unguarded_zero(axis, binding.call, binding.host)
    return (unguarded or paths[0]).why, unguarded is None


@pytest.mark.parametrize(
    "grid, why",
    [
        ("triton.cdiv(x.numel(), 256)", "`x.numel()`, an element count"),
        ("(x.shape[0] + 15) // 16", "`x.shape[0]`, the rows of a flattened view"),
        ("min(cores, triton.cdiv(len(items), 4))", "`len(items)`, the length of a host sequence"),
        ("4 * x.shape[0]", "`x.shape[0]`, the rows of a flattened view"),
    ],
)
def test_per_call_counts_and_what_is_built_from_them_are_zero_when_empty(grid, why):
    found = zero(
        f"""
        def launch(x, items, cores):
            x = x.view(-1, 64)
            k[({grid},)](x, 1, BLOCK=64)
        """
    )
    assert found == (why, False)


@pytest.mark.parametrize(
    "grid",
    ["max(triton.cdiv(x.numel(), 256), 1)", "cores", "x.shape[-1]", "48", "triton.cdiv(D, 4)"],
)
def test_floors_core_counts_model_sizes_and_literals_are_never_zero(grid):
    assert (
        zero(
            f"""
            D = 4096

            def launch(x, cores):
                k[({grid},)](x, 1, BLOCK=64)
            """
        )
        is None
    )


@pytest.mark.parametrize(
    "guard",
    [
        "if n == 0:\n        return x",
        "if not x.numel():\n        return x",
        "if x.numel() == 0 or x.shape[1] == 0:\n        raise ValueError('empty')",
        "assert n > 0",
        "if 0 in x.shape:\n        return x",
        "if n * 2 == 0:\n        return x",
    ],
)
def test_guards_before_the_launch_cover_the_count_and_the_tensor_it_is_a_size_of(guard):
    lines = [
        "def launch(x):",
        "    n = x.reshape(-1, 64).shape[0]",
        *("    " + line.strip() if i == 0 else line for i, line in enumerate(guard.split("\n"))),
        "    k[(triton.cdiv(n, 16),)](x, n, BLOCK=64)",
    ]
    found = zero("\n".join(lines) + "\n")
    assert found is not None and found[1] is True


def test_an_enclosing_if_and_a_continue_in_a_loop_guard_too():
    assert zero(
        """
        def launch(x):
            n = x.numel()
            if n > 0:
                k[(n,)](x, n, BLOCK=64)
        """
    )[1]
    assert zero(
        """
        def launch(xs):
            for x in xs:
                n = x.numel()
                if n == 0:
                    continue
                k[(n,)](x, n, BLOCK=64)
        """
    )[1]


def test_a_guard_on_another_tensor_or_after_the_launch_does_not():
    assert zero(
        """
        def launch(x, y):
            if y.numel() == 0:
                return y
            n = x.shape[0]
            k[(n, 2)](x, n, BLOCK=64)
        """
    ) == ("`x.shape[0]`, the leading dimension", False)
    assert zero(
        """
        def launch(x):
            n = x.numel()
            k[(n,)](x, n, BLOCK=64)
            if n == 0:
                return x
        """
    ) == ("`x.numel()`, an element count", False)


def test_a_launch_helper_is_guarded_by_every_caller_or_not_at_all():
    body = """
        def _launch(x, n):
            k[(triton.cdiv(n, 8),)](x, n, BLOCK=64)

        def a(x):
            if x.numel() == 0:
                return
            _launch(x, x.numel())
        """
    assert zero(body)[1] is True
    assert zero(body + "\n        def b(x):\n            _launch(x, x.numel())\n")[1] is False


def test_nonzero_subjects_read_conjunctions_negations_and_products():
    def subjects(test: str, holds: bool) -> list[str]:
        return [ast.unparse(s) for s in nonzero_subjects(ast.parse(test).body[0].value, holds)]

    assert subjects("n > 0 and m != 0", True) == ["n", "m"]
    assert subjects("n == 0 or m == 0", False) == ["n", "m"]
    assert subjects("not n", False) == ["n"]
    assert subjects("n == 0", True) == []
    assert subjects("n >= 0", True) == []
    assert subjects("a * b == 0", False) == ["a * b", "a", "b"]


def test_tensors_made_with_literal_sizes_are_never_empty():
    assert (
        zero(
            """
            def launch():
                x = torch.randn(1024, 64).npu()
                y = torch.full((8, 4), 0.5)
                k[(triton.cdiv(x.numel(), 256), y.shape[0])](x, 1, BLOCK=64)
            """
        )
        is None
    )
    assert zero(
        """
        def launch(rows):
            x = torch.empty(rows, 64)
            k[(x.shape[0],)](x, 1, BLOCK=64)
        """
    ) == ("`x.shape[0]`, the rows of a 2-D tensor", False)


def test_launchers_only_tests_run_are_known_as_such():
    source = textwrap.dedent(HEAD) + textwrap.dedent(
        """
        def launch(x):
            k[(x.numel(),)](x, 1, BLOCK=64)

        def _case(shape):
            launch(torch.randn(shape))

        def test_small():
            _case((4, 4))

        class TestBig:
            def test_big(self):
                launch(torch.randn(64, 64))

        def api(x):
            k[(x.numel(),)](x, 1, BLOCK=64)
        """
    )
    index = KernelIndex.build(ast.parse(source))
    hosts = {h.name: h for h in index.hosts}
    assert index.emptiness.run_by_tests(hosts["launch"])
    assert index.emptiness.run_by_tests(hosts["test_big"])
    assert not index.emptiness.run_by_tests(hosts["api"])


def test_a_count_the_model_fixes_and_an_assignment_under_a_guard_are_not_zero():
    assert (
        zero(
            """
            def launch(score):
                num_idx_heads = score.shape[0]
                k[(num_idx_heads, 2)](score, 1, BLOCK=64)
            """
        )
        is None
    )
    guarded = """
        def launch(x):
            rows = x.view(-1, 64).shape[0]
            if rows == 0:
                block = 16
            else:
                block = triton.next_power_of_2(rows)
            k[(block, 2)](x, 1, BLOCK=64)
        """
    why = "`x.view(-1, 64).shape[0]`, the rows of a flattened view"
    assert zero(guarded) == (why, True)
    assert zero(guarded.replace("if rows == 0:", "if rows == 1:")) == (why, False)
