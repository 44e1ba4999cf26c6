"""What a kernel value holds per lane and where it goes (`ascend_lint/index/lanes.py`)."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex
from ascend_lint.index.syntax import own_nodes


def build(source: str) -> KernelIndex:
    return KernelIndex.build(ast.parse(textwrap.dedent(source)))


def expression(index: KernelIndex, kernel: str, text: str):
    """The first expression of `kernel` spelled `text` that a statement reads, with the
    statement and its order."""
    fn = next(k for k in index.kernels if k.name == kernel)
    for order, stmt in enumerate(fn.statements):
        for node in own_nodes(stmt):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                continue
            if isinstance(node, ast.expr) and ast.unparse(node) == text:
                return fn, node, order, stmt
    raise AssertionError(f"{text} not in {kernel}")


KINDS = """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, ids, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    i = tl.load(ids + o)
    v = tl.load(x + o)
    f = v.to(tl.float32)
    m = o < n
    h = o / 2
    w = tl.where(m, 1, 0.5)
    z = tl.full((), 0, tl.int64)
    s = tl.sum(v)
    tl.store(y + o, f + h + w + i + z + s)

def launch(x):
    ids = torch.empty(16, dtype=torch.int32, device=x.device)
    y = torch.empty(16, dtype=torch.float32, device=x.device)
    k[(1,)](x, ids, y, 16, BLOCK=16)
"""


def test_element_kinds_from_literals_casts_loads_and_promotion():
    index = build(KINDS)
    found = {}
    for text in ("o", "tl.load(ids + o)", "tl.load(x + o)", "v.to(tl.float32)", "o < n"):
        fn, node, order, _ = expression(index, "k", text)
        found[text] = index.lanes.of(fn).kind(node, order)
    fn, node, order, _ = expression(index, "k", "o / 2")
    found["o / 2"] = index.lanes.of(fn).kind(node, order)
    fn, node, order, _ = expression(index, "k", "tl.where(m, 1, 0.5)")
    found["where"] = index.lanes.of(fn).kind(node, order)
    fn, node, order, _ = expression(index, "k", "ids + o")
    found["ids + o"] = index.lanes.of(fn).kind(node, order)
    assert found == {
        "o": "int",
        "tl.load(ids + o)": "int",  # the launch passes an int32 tensor
        "tl.load(x + o)": None,  # nothing says what `x` holds
        "v.to(tl.float32)": "float",
        "o < n": "bool",
        "o / 2": "float",
        "where": "float",
        "ids + o": "pointer",
    }


def test_blocks_and_scalars():
    index = build(KINDS)
    fn = index.kernels[0]
    lanes = index.lanes.of(fn)
    blocks = {}
    for text in ("o", "tl.load(ids + o)", "tl.full((), 0, tl.int64)", "tl.sum(v)", "n"):
        _, node, order, _ = expression(index, "k", text)
        blocks[text] = lanes.is_block(node, order)
    assert blocks == {
        "o": True,
        "tl.load(ids + o)": True,
        "tl.full((), 0, tl.int64)": False,  # a shape of no dimension: a scalar
        "tl.sum(v)": False,
        "n": False,
    }


LOADED = """
import triton
import triton.language as tl

@triton.jit
def helper(x, j):
    return tl.load(x + j)

@triton.jit
def k(x, ids, starts, y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    i = tl.load(ids + o).to(tl.int64)
    start = tl.load(starts + pid)
    total = tl.sum(tl.load(starts + o))
    a = x + i * 4
    b = x + start + o
    c = x + total + o
    tl.store(y + o, helper(x, i) + tl.load(a) + tl.load(b) + tl.load(c))
"""


def test_loaded_blocks_and_what_is_not_one():
    index = build(LOADED)
    found = {}
    for text in ("x + i * 4", "x + start + o", "x + total + o"):
        fn, node, order, _ = expression(index, "k", text)
        found[text] = index.lanes.of(fn).loaded_block(node, order)
    assert found == {
        "x + i * 4": True,  # an index vector read from `ids`
        "x + start + o": False,  # a loaded scalar moves a structured block
        "x + total + o": False,  # the sum of a loaded block is a scalar
    }
    # a helper's parameter is a loaded block when its caller binds one
    fn, node, order, _ = expression(index, "helper", "x + j")
    assert index.lanes.of(fn).loaded_block(node, order)


CONSUMERS = """
import triton
import triton.language as tl

@triton.jit
def helper(m):
    return m

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    mask = o < n
    v = tl.load(x + o, mask=mask, other=0.0)
    keep = o > 2
    w = tl.where(keep, v, 0.0)
    clamp = tl.where(o < n - 1, o, 0)
    tl.store(y + clamp, w + helper(o >= 1))
"""


def test_consumers_follow_values_through_locals():
    index = build(CONSUMERS)
    fn = next(k for k in index.kernels if k.name == "k")
    lanes = index.lanes.of(fn)
    roles = {
        text: lanes.consumers(expression(index, "k", text)[1])
        for text in ("o < n", "o > 2", "o < n - 1", "o >= 1")
    }
    assert roles == {
        "o < n": {"mask"},
        "o > 2": {"select"},
        "o < n - 1": {"select"},
        "o >= 1": {"call"},  # a helper's argument
    }
    [select] = lanes.selects(expression(index, "k", "o < n - 1")[1])
    assert lanes.consumers(select) == {"address"}  # the select clamps an index


LOOPS = """
import triton
import triton.language as tl

@triton.jit
def k(a, out, NT, BT: tl.constexpr):
    o = tl.arange(0, BT)
    acc = tl.zeros([BT], dtype=tl.float32)
    for j in range(NT):
        fixed = o[:, None] >= o[None, :]
        moving = o >= j
        b = tl.load(a + j * BT + o)
        data = b > 0
        acc += tl.where(moving, b, 0.0) + tl.sum(tl.where(fixed, 1.0, 0.0), axis=1)
        acc += tl.where(data, 1.0, 0.0)
    tl.store(out + o, acc)
"""


def test_loop_variance_what_the_compiler_cannot_hoist():
    index = build(LOOPS)
    fn = index.kernels[0]
    lanes = index.lanes.of(fn)
    found = {}
    for text in ("o[:, None] >= o[None, :]", "o >= j", "b > 0"):
        _, node, _, stmt = expression(index, "k", text)
        found[text] = lanes.varies_in_loop(node, stmt)
    assert found == {
        "o[:, None] >= o[None, :]": False,  # loop-invariant: hoisted out of the loop
        "o >= j": True,  # reads the loop variable
        "b > 0": True,  # reads a value loaded in the loop
    }


def test_definitions_under_the_other_side_of_a_compile_time_test_do_not_reach():
    index = build(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, idx, y, USE_IDX: tl.constexpr, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            if USE_IDX:
                r = tl.load(idx + o)
            else:
                r = o
            if USE_IDX:
                tl.store(y + o, r)
            else:
                tl.store(y + o, tl.load(x + r))
        """
    )
    fn = index.kernels[0]
    lanes = index.lanes.of(fn)
    _, node, order, _ = expression(index, "k", "x + r")
    assert sorted(b.order for b in fn.reaching("r", order)) == [2, 3]
    assert [b.order for b in lanes.reaching("r", order)] == [3]
    assert not lanes.loaded_block(node, order)


def test_answers_do_not_depend_on_what_was_asked_first():
    """A chain of 30 definitions: asking its middle first used to leave a kept answer
    that the end of the chain then read, while asking the end first cut it short."""
    steps = "\n".join(f"    a{i} = a{i - 1} + 1" for i in range(1, 31))
    source = (
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def k(y, B: tl.constexpr):\n    a0 = tl.arange(0, B)\n"
        f"{steps}\n    tl.store(y + a0, a30)\n"
    )

    def ask(first):
        index = build(source)
        fn = index.kernels[0]
        lanes = index.lanes.of(fn)
        last = len(fn.statements) - 1
        for name in first:
            lanes.kind(ast.Name(name, ast.Load()), last)
            lanes.rank(ast.Name(name, ast.Load()), last)
        end = ast.Name("a30", ast.Load())
        return lanes.kind(end, last), lanes.rank(end, last)

    assert ask([]) == ask(["a15"]) == ask(["a29", "a3"]) == ("int", 1)
