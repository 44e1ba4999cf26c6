"""Storage (`ascend_lint/index/storage.py`): launch arguments that are one tensor, and the
accesses of a kernel through each pointer parameter, in program order."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex

SOURCE = """
import torch
import triton
import triton.language as tl

@triton.jit
def _put(p, v, BLOCK: tl.constexpr):
    tl.store(p + tl.arange(0, BLOCK), v)

@triton.jit
def k(x, y, z, FLAG: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    b = tl.make_block_ptr(x + 4, (16,), (1,), (0,), (BLOCK,), (0,))
    v = tl.load(b)
    if FLAG:
        tl.store(y + o, v)
    else:
        w = tl.load(z + o)
    _put(z, v, BLOCK)
    tl.atomic_add(y + o, 1.0)

def launch(x, inplace):
    out = x if inplace else torch.empty_like(x)
    copy = x.clone()
    k[(1,)](x, out.view(-1), x[:4], FLAG=True, BLOCK=16)
    k[(1,)](x, copy, torch.transpose(x, 0, 1), FLAG=True, BLOCK=16)
"""


def build():
    index = KernelIndex.build(ast.parse(textwrap.dedent(SOURCE)))
    return index, {f.name: f for f in index.kernels}


def test_accesses_follow_block_pointers_and_helpers_in_statement_order():
    index, kernels = build()
    found = [(a.param, a.kind) for a in index.storage.accesses(kernels["k"])]
    assert found == [("x", "load"), ("y", "store"), ("z", "load"), ("z", "store"), ("y", "atomic")]


def test_follows_is_program_order_without_crossing_the_sides_of_an_if():
    index, kernels = build()
    k = kernels["k"]
    load_x, store_y, load_z, put_z, _atomic = index.storage.accesses(k)
    assert index.storage.follows(k, load_x, store_y)
    assert not index.storage.follows(k, store_y, load_z)  # the two sides of `if FLAG`
    assert index.storage.follows(k, store_y, put_z)
    assert not index.storage.follows(k, put_z, load_z)  # earlier


def test_same_tensor_through_views_and_conditional_assignments_but_not_copies():
    index, _kernels = build()
    first, second = index.launches
    x, out, part = (first.args[p][0] for p in ("x", "y", "z"))
    assert index.storage.same_tensor(x, out, first.host) == "x"  # when inplace
    assert index.storage.same_tensor(x, part, first.host) is None  # a slice
    x, copy, t = (second.args[p][0] for p in ("x", "y", "z"))
    assert index.storage.same_tensor(x, copy, second.host) is None
    assert index.storage.same_tensor(x, t, second.host) == "x"


def test_a_pointer_is_traced_to_its_parameter_through_any_chain_of_locals():
    """Each local is walked once per kernel: a chain longer than the helper depth still
    reaches its parameter, and pointers advanced on both sides of a branch in a loop
    (each `p += ...` a value of `p` that reads `p`) cost one visit each."""
    chain = "\n".join(f"    p{i + 1} = p{i} + {i}" for i in range(12))
    advances = "\n".join(
        f"        if c == {i}:\n            q += {i}\n        else:\n            q += {i + 1}"
        for i in range(3)
    )
    source = f"""
import triton
import triton.language as tl

@triton.jit
def k(x, y, c, BLOCK: tl.constexpr):
    p0 = x
{chain}
    tl.store(p12 + tl.arange(0, BLOCK), 1.0)
    q = y
    for _ in range(4):
{advances}
        tl.store(q + tl.arange(0, BLOCK), 2.0)
"""
    index = KernelIndex.build(ast.parse(source))
    (kernel,) = index.kernels
    assert [(a.param, a.kind) for a in index.storage.accesses(kernel)] == [
        ("x", "store"),
        ("y", "store"),
    ]
