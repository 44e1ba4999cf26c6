"""Global-memory accesses and what their addresses are made of
(`ascend_lint/index/accesses.py`)."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex


def build(source: str) -> KernelIndex:
    return KernelIndex.build(ast.parse(textwrap.dedent(source)))


CHOICES = """
import triton
import triton.language as tl

@triton.jit
def k(a, b, c, out, n, flag, USE_B: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    p = tl.where(o < n, a + o, b + o)
    same = tl.where(o < n, a + o, a + n)
    q = a if flag > 0 else c
    if USE_B:
        base = b
    else:
        base = a
    if flag > 1:
        src = c
    else:
        src = a
    ptr = src + o
    acc = tl.load(p) + tl.load(same) + tl.load(q + o) + tl.load(base + o) + tl.load(ptr)
    carried = a
    for i in range(n):
        acc += tl.load(carried + o)
        carried = b
    tl.store(out + o, acc)
"""


def test_bases_follow_arms_and_reaching_definitions():
    index = build(CHOICES)
    fn = index.kernels[0]
    last = len(fn.statements) - 1
    accesses = index.accesses
    assert accesses.pointer_parameters(fn) >= {"a", "b", "c", "out"}
    assert "n" not in accesses.pointer_parameters(fn)
    bases = {
        name: accesses.bases(fn, ast.Name(name, ast.Load()), last)
        for name in ("p", "same", "q", "ptr", "o")
    }
    assert bases == {
        "p": {"a", "b"},
        "same": {"a"},
        "q": {"a", "c"},
        "ptr": {"a", "c"},
        "o": set(),
    }


def test_runtime_choices_between_tensors_and_what_is_not_one():
    index = build(CHOICES)
    fn = index.kernels[0]
    found = [
        (c.how, c.node.lineno, c.name, [sorted(side) for side in c.bases])
        for c in index.accesses.pointer_choices(fn)
    ]
    assert found == [
        ("where", 8, None, [["a"], ["b"]]),
        ("ifexp", 10, None, [["a"], ["c"]]),
        ("if", 15, "src", [["c"], ["a"]]),
    ]
    # not choices: both arms from `a` (line 9), a compile-time `if USE_B` (line 11),
    # a pointer carried around the loop (line 21)
    [if_choice] = [c for c in index.accesses.pointer_choices(fn) if c.how == "if"]
    assert if_choice.access is not None and if_choice.access.call.lineno == 20


GATHERS = """
import triton
import triton.language as tl

@triton.jit
def k(x, idx, cols, y, stride, N: tl.constexpr, D: tl.constexpr):
    o = tl.arange(0, N)
    d = tl.arange(0, D)
    i = tl.load(idx + o)
    c = tl.load(cols + d)
    one = tl.load(x + i)
    rows = tl.load(x + i[:, None] * D + d[None, :])
    picked = tl.load(x + o[:, None] * stride + c[None, :])
    p = x + i * stride
    p += 1
    via_local = tl.load(p)
    single = tl.load(x + tl.load(idx + tl.arange(0, 1)))
    tl.store(y + o, one + tl.sum(rows, axis=1) + tl.sum(picked, axis=1) + via_local + single)
"""


def test_gathers_element_by_element_or_row_by_row():
    index = build(GATHERS)
    fn = index.kernels[0]
    found = [
        (g.access.call.lineno, ast.unparse(g.term), g.per_element)
        for g in index.accesses.gathers(fn)
    ]
    assert found == [
        (11, "i", True),
        (12, "i[:, None] * D", False),  # one contiguous row per loaded index
        (13, "c[None, :]", True),
        (16, "i * stride", True),  # the address built in a local, moved by `p += 1`
    ]
    # a block of one lane (line 17) is a single scalar load, no gather


def test_accesses_say_what_they_are():
    index = build(GATHERS)
    fn = index.kernels[0]
    kinds = [(a.call.lineno, a.kind, a.block_pointer) for a in index.accesses.of(fn)]
    assert (18, "store", False) in kinds
    assert sum(kind == "load" for _, kind, _ in kinds) == 8


ROWS = """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, T, D: tl.constexpr, BR: tl.constexpr, BD: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.arange(0, BD)
    m = (r[:, None] < n_rows) & (c[None, :] < D)
    v = tl.load(x + r[:, None] * D + c[None, :], mask=m, other=0.0)
    p = tl.make_block_ptr(y, (T, D), (D, 1), (0, 0), (BR, BD), (1, 0))
    p = tl.advance(p, (BR, 0))
    tl.store(p, v, boundary_check=(0, 1))
    t = tl.make_block_ptr(y, (D, T), (1, D), (0, 0), (BD, BR), (0, 1))
    tl.store(t, tl.trans(v))
    tl.store(y + r, tl.sum(v, axis=1))
"""


def test_row_geometry_of_pointer_tiles_and_block_pointers():
    index = build(ROWS)
    fn = index.kernels[0]
    found = [
        (
            r.access.call.lineno,
            r.base,
            *(ast.unparse(e) if e is not None else None for e in (r.width, r.pitch, r.extent)),
        )
        for r in index.accesses.rows(fn)
    ]
    assert found == [
        (10, "x", "D", "D", "BD"),  # the mask bounds the columns: the row width
        (13, "y", "D", "D", "BD"),  # through `tl.advance`
    ]
    # not rows: the transposed block pointer (no unit stride last), the 1-D store
