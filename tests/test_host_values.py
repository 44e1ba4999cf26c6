"""The host value model: what each launcher expression counts, with its evidence."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_lint.index import KernelIndex
from ascend_lint.index.quantities import Role
from tests.lint_helpers import lint_code

KERNEL = """
import math, functools, operator
import triton
import triton.language as tl

@triton.jit
def k(x, n, V: tl.constexpr):
    tl.program_id(0)
"""


def role_of(host_body: str, axis: str = "value") -> Role:
    """The role of `value` where `launch` launches `k` with it as the grid."""
    body = textwrap.indent(textwrap.dedent(host_body), "    ")
    source = KERNEL + f"\ndef launch(x, w, cores):\n{body}\n    k[({axis},)](x, 0, V=1)\n"
    index = KernelIndex.build(ast.parse(source))
    (binding,) = index.launches
    (axes,) = index.quantities.grid_axes(binding.call, binding.host)
    roles = {q.role for q in index.quantities.of(axes[0], binding.host)}
    assert len(roles) == 1, roles
    return roles.pop()


@pytest.mark.parametrize(
    ("body", "role"),
    [
        ("value = x.numel()", Role.LENGTH),
        ("value = x.size(0) * x.size(1)", Role.LENGTH),
        ("value = math.prod(x.shape[:-1])", Role.LENGTH),
        ("value = math.prod(x.shape)", Role.LENGTH),
        ("value = math.prod(x.shape[1:])", Role.UNKNOWN),
        ("value = math.prod(w.shape[:-1])", Role.MODEL),
        ("value = functools.reduce(operator.mul, x.shape[:-1], 1)", Role.LENGTH),
        ("value = functools.reduce(lambda a, b: a * b, x.shape[:-1])", Role.LENGTH),
        ("M, N = x.shape[-2:]\nvalue = M", Role.LENGTH),
        ("M, N = x.shape[-2:]\nvalue = N", Role.MODEL),
        ("B, T, *_ = x.shape\nvalue = triton.cdiv(T, 64)", Role.LENGTH),
        ("*_, D = x.shape\nvalue = D", Role.MODEL),
        ("value = x.view(-1, 64).shape[0]", Role.LENGTH),
        ("s, b, v = x.shape\nvalue = s * b", Role.LENGTH),
        ("B, T, H, K = x.shape\nvalue = B * H", Role.BATCH),
        ("value = min(triton.cdiv(x.numel(), 1024), 65535)", Role.LENGTH),
        ("value = min(triton.cdiv(x.numel(), 1024), 48)", Role.LITERAL),
        ("value = min(triton.cdiv(x.numel(), 1024), cores)", Role.CORES),
        ("p = get_props()\nvalue = min(x.numel(), p.get('num_vectorcore', 40))", Role.CORES),
        ("value = triton.cdiv(x.numel(), 65535)", Role.BUCKETED),
        ("value = x.numel() > 4096", Role.BOOLEAN),
        ("value = x.shape[0] // x.shape[1]", Role.BATCH),
        ("B, S = x.shape[:2]\nvalue = x.numel() // (B * S)", Role.UNKNOWN),
        ("num_slots, _, width = kv_cache.size()\nvalue = num_slots", Role.MODEL),
        ("B, T, H, K, V = *x.shape, w.shape[-1]\nvalue = triton.cdiv(T, 64)", Role.LENGTH),
        ("B, T, H, K, V = *x.shape, w.shape[-1]\nvalue = K", Role.MODEL),
        ("rows, hidden = x.shape\nvalue = rows", Role.LENGTH),
        ("batch, vocab = x.shape\nvalue = batch", Role.BATCH),
        ("_, num_vectorcore = get_props()\nvalue = min(x.numel(), num_vectorcore)", Role.CORES),
        ("stride_tok, stride_d = x.stride()\nvalue = stride_tok", Role.UNKNOWN),
    ],
)
def test_host_expression_roles(body, role):
    assert role_of(body) == role


def test_values_kept_on_ctx_are_read_in_backward():
    source = KERNEL + textwrap.dedent(
        """
        class Fn:
            @staticmethod
            def forward(ctx, x):
                ctx.rows = x.numel() // x.shape[-1]
                return x

            @staticmethod
            def backward(ctx, dy):
                k[(ctx.rows,)](dy, 0, V=1)
        """
    )
    found = lint_code(source, select="ASC012").diagnostics
    assert [d.code for d in found] == ["ASC012"]
    assert "x.numel()" in found[0].message


def test_a_selected_kernel_is_named_with_each_receiving_parameter():
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k_short(x, N: tl.constexpr):
            tl.program_id(0)

        @triton.jit
        def k_long(x, ROWS: tl.constexpr):
            tl.program_id(0)

        @triton.jit
        def k_runtime(x, n):
            tl.program_id(0)

        def launch(x, mode):
            n = x.numel()
            kernel = k_short if mode == 0 else (k_long if mode == 1 else k_runtime)
            kernel[(48,)](x, n)
        """
    )
    (finding,) = lint_code(source, select="ASC013").diagnostics
    assert "constexpr `N` of `k_short` and constexpr `ROWS` of `k_long` are bound" in (
        finding.message
    )
    assert "k_runtime" not in finding.message
