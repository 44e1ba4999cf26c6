"""The value model (`ascend_lint/index/values.py`): one answer per question about a
value, at the statement that reads it, and the rules that ask it agree with it."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex
from tests.lint_helpers import lint_code


def model(source: str):
    tree = ast.parse(textwrap.dedent(source))
    index = KernelIndex.build(tree)
    return index, {fn.name: fn for fn in index.kernels}


def statement(fn, text: str) -> int:
    """The order of the first statement of `fn` whose source starts with `text`."""
    return next(i for i, s in enumerate(fn.statements) if ast.unparse(s).startswith(text))


def expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


WIDENED_LATER = """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p = tl.make_block_ptr(x, (T,), (1,), (i_t * BT,), (BT,), (0,))
    i_t = i_t.to(tl.int64)
    q = x + i_t * BT
    tl.store(q, tl.load(p))
"""


def test_a_width_is_the_one_where_the_value_is_read():
    index, fns = model(WIDENED_LATER)
    values = index.values.of(fns["k"])
    k = fns["k"]
    assert values.width(expr("i_t * BT"), statement(k, "p = tl.make_block_ptr")) is False
    assert values.width(expr("i_t * BT"), statement(k, "q = x")) is True


def test_no_rule_calls_an_offset_int64_that_is_widened_only_afterwards():
    assert [d.code for d in lint_code(WIDENED_LATER).diagnostics if d.code == "ASC008"] == []


def test_may_be_int64_follows_each_path():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, cu, n, WIDE: tl.constexpr):
            if WIDE:
                bos = tl.load(cu).to(tl.int64)
            else:
                bos = tl.load(cu)
            a = bos * n
            c = n * n
            tl.store(x + a + c, 0)
        """
    )
    k = fns["k"]
    values = index.values.of(k)
    at = statement(k, "a = bos * n")
    assert values.width(expr("bos * n"), at) is None  # int64 on one path, unknown on the other
    assert values.may_be_int64(expr("bos * n"), at)
    assert not values.may_be_int64(expr("n * n"), statement(k, "c = n * n"))


PROGRAM_IDS = """
import triton
import triton.language as tl
from triton.language import program_id as pid_of
import mylib

@triton.jit
def k(x, OFF, FLAG: tl.constexpr):
    a = tl.program_id(0)
    b = pid_of(1) + OFF
    c = tl.program_id(0).to(tl.int64)
    d = mylib.program_id(0)
    if FLAG:
        e = tl.program_id(2)
    else:
        e = OFF
    f = a * 2
    tl.store(x + a + b + c + d + e + f, 0)
"""


def test_a_program_id_is_one_test_however_it_is_spelled():
    index, fns = model(PROGRAM_IDS)
    k = fns["k"]
    values = index.values.of(k)
    at = statement(k, "tl.store")
    found = {n: values.is_program_id(ast.Name(n, ast.Load()), at) for n in "abcdef"}
    # a cast or an offset keeps the id; another library's `program_id`, a value that is
    # an id on one path only and a multiple of one are not program ids
    assert found == {"a": True, "b": True, "c": True, "d": False, "e": False, "f": False}


# -- values per compile-time path (`KernelValues.on_paths`) -------------------------------
ON_PATHS = """
import triton
import triton.language as tl

@triton.jit
def k(g, cu, B, T, H: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_b = tl.program_id(0)
    bos = i_b * T
    if IS_VARLEN:
        bos = tl.load(cu + i_b)
        off = 0
    else:
        off = tl.cast(i_b, tl.int64) * H * T
    p = g + off + bos
    if IS_VARLEN:
        q = g + bos
"""


def _products(path) -> list[str]:
    return sorted(" * ".join(ast.unparse(f) for f in p.factors) for p in path.products)


def test_on_paths_follows_the_definitions_that_reach_each_path():
    index, fns = model(ON_PATHS)
    k = fns["k"]
    order = statement(k, "p = g")
    value = k.statements[order].value
    paths = index.values.of(k).on_paths(value, order)
    found = sorted(_products(p) for p in paths)
    # varlen: the earlier `bos = i_b * T` is overwritten before the read; fixed: `off`
    # steps whole batches of heads (through the cast) and `bos` is the batch row
    assert found == [
        ["0", "g", "tl.load(cu + i_b)"],
        ["g", "tl.program_id(0) * H * T", "tl.program_id(0) * T"],
    ]


def test_on_paths_starts_from_the_branches_around_the_read():
    index, fns = model(ON_PATHS)
    k = fns["k"]
    order = statement(k, "q = g")
    paths = index.values.of(k).on_paths(k.statements[order].value, order)
    assert [_products(p) for p in paths] == [["g", "tl.load(cu + i_b)"]]


def test_on_paths_keeps_names_asked_for_and_stops_at_its_bounds():
    index, fns = model(ON_PATHS)
    k = fns["k"]
    order = statement(k, "p = g")
    value = k.statements[order].value
    kept = index.values.of(k).on_paths(value, order, frozenset({"bos", "off"}))
    assert [_products(p) for p in kept] == [["bos", "g", "off"]]
    chain = "\n".join(f"    x{i + 1} = x{i} + 1" for i in range(12))  # deeper than the bound
    deep = model(
        f"""
import triton

@triton.jit
def k(g, x0):
{chain}
    y = g + x12
"""
    )
    k = deep[1]["k"]
    order = statement(k, "y = g")
    assert deep[0].values.of(k).on_paths(k.statements[order].value, order) is None
