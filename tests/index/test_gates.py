"""Gate facts (`ascend_lint/index/gates.py`): what each summand of an address into a
[B, T, HV] tensor counts on each path, and where a sequence start is the batch row on
the fixed-length path."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex


def model(source: str):
    index = KernelIndex.build(ast.parse(textwrap.dedent(source)))
    return index, {fn.name: fn for fn in index.kernels}


def statement(fn, text: str) -> int:
    return next(i for i, s in enumerate(fn.statements) if ast.unparse(s).startswith(text))


def time_term(source: str, at: str, pointers=frozenset({"dg"})) -> str | None:
    index, fns = model(source)
    k = fns["k"]
    order = statement(k, at)
    stmt = k.statements[order]
    value = stmt.value if not isinstance(stmt, ast.Expr) else stmt.value.args[0]
    term = index.gates.time_math_term(k, value, order, set(pointers))
    return None if term is None else ast.unparse(term)


PLANES = """
import triton
import triton.language as tl

@triton.jit
def k(dg, cu, B, T, total, HV: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_k, i_n, i_h = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    all = tl.cast(B, tl.int64) * T
    if IS_VARLEN:
        bos = tl.load(cu + i_n)
        rows = T
    else:
        bos = i_n * T
        rows = B * T
    a = dg + i_k * all * HV
    b = dg + i_k * rows * HV
    c = dg + bos * HV + i_h
    d = dg + (i_k * BT) * HV
    e = dg + i_k * total * HV
    stride = HV * BT * BT
    f = dg + tl.load(cu + i_n) * stride + i_h * BT * BT

def launch(x, cu):
    B, T, HV = x.shape
    k[(2, B, HV)](x, cu, B, T, B * T, HV=HV, BT=64, IS_VARLEN=cu is not None)
"""


def test_whole_rows_on_every_path_are_no_time_math():
    assert time_term(PLANES, "a = dg") is None  # `all` through an int64 cast
    assert time_term(PLANES, "b = dg") is None  # the packed length, or B * T


def test_a_start_loaded_on_one_path_is_time_math():
    assert time_term(PLANES, "c = dg") == "bos * HV"


def test_a_chunk_start_times_the_heads_is_time_math():
    assert time_term(PLANES, "d = dg") == "i_k * BT * HV"


def test_a_row_count_the_launcher_passes_counts_whole_planes():
    assert time_term(PLANES, "e = dg") is None
    # the same product where no launch says what `total` counts
    assert time_term(PLANES.split("\ndef launch")[0], "e = dg") == "i_k * total * HV"


def test_a_head_count_met_only_inside_a_local_is_no_time_math():
    # a slot index times a whole [HV, BT, BT] state: the head count is not written in
    # the product, so it says nothing about a time axis
    assert time_term(PLANES, "f = dg") is None


STARTS = """
import triton
import triton.language as tl

@triton.jit
def k(g, cu, T, H: tl.constexpr, IS_VARLEN: tl.constexpr):
    T_max = T
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    i_b = i_n
    if IS_VARLEN:
        bos, eos = tl.load(cu + i_n), tl.load(cu + i_n + 1)
        T = eos - bos
        batch_off = 0
    else:
        bos = 0
        batch_off = i_b * H * T_max
    start = i_b * T
    if IS_VARLEN:
        start = tl.load(cu + i_n)
    x = g + batch_off + bos + i_h * T_max
    y = g + start + i_h * T_max
"""


def fixed_start(at: str, offset: str):
    index, fns = model(STARTS)
    k = fns["k"]
    order = statement(k, at)
    node = next(
        n for n in ast.walk(k.statements[order]) if isinstance(n, ast.Name) and n.id == offset
    )
    found = index.gates.fixed_length_start(k, node, order)
    return None if found is None else (ast.unparse(found[0]), found[1])


def test_a_start_that_is_zero_on_the_fixed_length_path_is_no_batch_row():
    assert fixed_start("x = g", "bos") is None


def test_a_batch_row_overwritten_on_the_varlen_path_only():
    assert fixed_start("y = g", "start") == ("i_b * T", "IS_VARLEN")
