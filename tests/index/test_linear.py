"""Linear forms (`ascend_lint/index/linear.py`): what an integer value of a kernel is made
of where a statement reads it, whatever the grouping, the casts and the locals."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex
from ascend_lint.index.linear import Atom, Form, along


def model(source: str):
    tree = ast.parse(textwrap.dedent(source))
    index = KernelIndex.build(tree)
    return index, {fn.name: fn for fn in index.kernels}


def statement(fn, text: str) -> int:
    """The order of the first statement of `fn` whose source starts with `text`."""
    return next(i for i, s in enumerate(fn.statements) if ast.unparse(s).startswith(text))


def call_arg(fn, text: str, position: int = 0) -> tuple[ast.expr, int]:
    """Argument `position` of the first call in the statement starting with `text`."""
    at = statement(fn, text)
    call = next(n for n in ast.walk(fn.statements[at]) if isinstance(n, ast.Call))
    return call.args[position], at


def names(form: Form) -> dict[str, int]:
    """`{'o*D': 1, '': -1}`: a form by the names of its atoms, for comparisons."""
    return {"*".join(a.name or a.kind for a in m): c for m, c in form.terms.items()}


LOOK_BACK = """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, D: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x + o - 1, mask=o > 0)
    b = tl.load(x + (o - 1), mask=o > 0)
    off = -1 + o.to(tl.int64)
    c = tl.load(x + off, mask=o > 0)
    d = tl.load(x + (o - 1) * D, mask=o > 0)
    e = tl.load(x + o * D - D, mask=o > 0)
    tl.store(y + o, a + b + c + d + e, mask=o < n)
"""


def test_one_value_has_one_form_whatever_the_grouping_casts_and_locals():
    index, fns = model(LOOK_BACK)
    k = fns["k"]
    forms = [
        index.bounds.linear_form(k, *call_arg(k, start))
        for start in ("a = ", "b = ", "c = ", "d = ", "e = ")
    ]
    assert forms[0] == forms[1] == forms[2]
    assert forms[3] == forms[4]
    assert names(forms[0]) == {"x": 1, "BLOCK*program_id": 1, "arange": 1, "": -1}


def test_a_name_is_read_through_the_definitions_that_reach_the_read():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, cu, T, IS_VARLEN: tl.constexpr, BT: tl.constexpr):
            o = tl.arange(0, BT)
            first = x + o
            o = o - 1
            second = x + o
            if IS_VARLEN:
                bos = tl.load(cu)
            else:
                bos = tl.program_id(0) * T
            third = x + bos + o
            tl.store(first + second + third, 0)
        """
    )
    k = fns["k"]
    form = index.bounds.linear_form
    first = form(k, ast.parse("x + o", mode="eval").body, statement(k, "first ="))
    second = form(k, ast.parse("x + o", mode="eval").body, statement(k, "second ="))
    assert second == first.plus(-1)  # the `o` that reaches each read
    third = form(k, ast.parse("bos", mode="eval").body, statement(k, "third ="))
    (bos,) = third.atoms()
    assert bos.kind == "merge" and len(bos.definitions) == 2


def test_paths_take_one_side_of_each_if_for_every_name_set_in_it():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, cu, n, IS_VARLEN: tl.constexpr, BT: tl.constexpr):
            if IS_VARLEN:
                start = tl.load(cu)
                length = tl.load(cu + 1) - start
            else:
                start = tl.program_id(0) * n
                length = n
            tl.store(x + start + length, 0)
        """
    )
    k = fns["k"]
    at = statement(k, "tl.store")
    forms = index.bounds.forms(k)
    start = forms.form(ast.Name("start", ast.Load()), at)
    length = forms.form(ast.Name("length", ast.Load()), at)
    paths = forms.paths((start, length))
    assert len(paths) == 2  # not the four combinations of two names
    sums = sorted(sorted(names(along(start + length, path)).items()) for path in paths)
    # start + (end - start) is the end; program_id * n + n
    assert sums == [[("load", 1)], [("n", 1), ("n*program_id", 1)]]


def test_aranges_of_one_extent_are_one_vector_only_within_a_statement():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, B: tl.constexpr):
            rows = tl.arange(0, B)
            cols = tl.arange(0, B)
            tl.store(x + rows[:, None] * B + cols[None, :], 0)
            tl.store(x + tl.arange(0, B) - tl.arange(0, B), 0)
        """
    )
    k = fns["k"]
    form = index.bounds.linear_form
    grid = form(k, *call_arg(k, "tl.store(x + rows"))
    assert len([a for a in grid.atoms() if a.kind == "lane"]) == 2
    same = form(k, *call_arg(k, "tl.store(x + tl.arange"))
    assert names(same) == {"x": 1}


def test_an_expression_the_form_does_not_take_apart_is_one_value_per_text_and_definitions():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, n, BT: tl.constexpr):
            o = tl.arange(0, BT)
            a = tl.maximum(o - 1, 0)
            b = tl.maximum(o - 1, 0)
            o = o + 1
            c = tl.maximum(o - 1, 0)
            tl.store(x + a + b + c, 0)
        """
    )
    k = fns["k"]
    form = index.bounds.linear_form
    a, b, c = (
        form(k, k.statements[at].value, at)
        for at in (statement(k, "a = "), statement(k, "b = "), statement(k, "c = "))
    )
    assert a == b  # one text over one definition of `o`
    assert a != c  # another `o`
    assert a.single_atom() is not None and a.single_atom().kind == "opaque"


def test_a_loaded_value_is_an_atom_per_load():
    index, fns = model(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(t, x):
            a = tl.load(t)
            b = tl.load(t)
            tl.store(x + a - b, 0)
        """
    )
    k = fns["k"]
    form = index.bounds.linear_form(k, *call_arg(k, "tl.store"))
    assert {a.kind for a in form.atoms()} == {"arg", "load"}
    assert len(form.atoms()) == 3


def test_where_an_expression_reads_a_value():
    index, fns = model(LOOK_BACK)
    k = fns["k"]
    forms = index.bounds.forms(k)
    address, at = call_arg(k, "a = ")
    value = forms.form(ast.parse("o - 1", mode="eval").body, at)
    (found,) = forms.occurrences(address, at, value)
    assert [ast.unparse(n) for n, _sign in found.terms] == ["o", "1"]
    assert [sign for _n, sign in found.terms] == [1, -1]
    assert [ast.unparse(n) for n, _sign in found.rest] == ["x"]
    address, at = call_arg(k, "c = ")
    (found,) = forms.occurrences(address, at, value)
    assert ast.unparse(found.node) == "-1 + o.to(tl.int64)" and found.terms is None
    address, at = call_arg(k, "d = ")
    (found,) = forms.occurrences(address, at, value)
    assert ast.unparse(found.node) == "o - 1"


def test_division_substitution_and_exact_quotients():
    x, d, o = (Atom("arg", (n,), n) for n in ("x", "D", "o"))
    base, stride, lane = Form.of(x), Form.of(d), Form.of(o)
    shifted = lane.plus(-1)
    address = lane.times(stride) - stride + base  # (o - 1) * D + x
    factor, rest = address.divide(shifted, (o,))
    assert factor == stride and rest == base
    assert address.divide(shifted, (x,)) is None  # `x` is no term of `o - 1`
    assert (address - base).over(stride) == shifted
    assert address.over(lane) is None
    assert address.substitute(o, base) == base.times(stride) - stride + base
