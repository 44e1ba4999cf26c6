"""What values are, whatever they are called: compile-time-ness at the read, stride
evidence from the launcher, the time axis and offsets tables found by use."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_lint.engine import lint_source
from ascend_lint.index import KernelIndex
from ascend_lint.index.strides import NON_UNIT, UNIT
from ascend_lint.rules import RULES_BY_CODE

HEADER = "import torch\nimport triton\nimport triton.language as tl\n"


def build(code: str) -> KernelIndex:
    return KernelIndex.build(ast.parse(HEADER + textwrap.dedent(code)))


def kernel(index: KernelIndex, name: str):
    return next(k for k in index.kernels if k.name == name)


def if_tests(fn) -> dict[str, bool]:
    """`if` test source -> runtime at that `if`."""
    return {
        ast.unparse(s.test): fn.is_runtime(s.test, None, at=s)
        for s in fn.statements
        if isinstance(s, ast.If)
    }


# -- compile-time or runtime ------------------------------------------------------------


def test_identity_tests_are_compile_time_and_loads_stay_runtime_through_casts():
    fn = kernel(
        build(
            """
            @triton.jit
            def k(x, scale, flags, N):
                for i in range(N):
                    if scale is not None:
                        pass
                    on = tl.load(flags + i).to(tl.int1)
                    if on:
                        pass
                    if tl.load(flags + i).to(tl.int32).item() > 0:
                        pass
                    has = scale is None
                    if has:
                        pass
            """
        ),
        "k",
    )
    assert if_tests(fn) == {
        "scale is not None": False,
        "on": True,
        "tl.load(flags + i).to(tl.int32).item() > 0": True,
        "has": False,
    }


def test_literals_under_a_runtime_branch_depend_on_the_path():
    fn = kernel(
        build(
            """
            @triton.jit
            def k(a, b, N, USE: tl.constexpr):
                done = False
                mode = 0
                for i in range(N):
                    if done:
                        pass
                    if mode == 1:
                        pass
                    if tl.load(a + i) != tl.load(b + i):
                        done = True
                    if USE:
                        mode = 1
            """
        ),
        "k",
    )
    tests = if_tests(fn)
    assert tests["done"] is True  # set under a runtime branch, carried around the loop
    assert tests["mode == 1"] is False  # set only under a constexpr branch


def test_the_binding_that_reaches_the_read_decides():
    fn = kernel(
        build(
            """
            @triton.jit
            def k(x, T, BT: tl.constexpr):
                n = BT // 2
                for i in range(T):
                    if n > 1:
                        pass
                n = tl.load(x)
                if n > 1:
                    pass
                acc = 0
                for j in range(T):
                    acc = acc + 1
                    if acc > 3:
                        pass
            """
        ),
        "k",
    )
    ifs = [s for s in fn.statements if isinstance(s, ast.If)]
    assert [fn.is_runtime(s.test, None, at=s) for s in ifs] == [False, True, True]
    assert "n" in fn.runtime_names  # some binding of it is runtime


# -- strides ------------------------------------------------------------------------------

STRIDES = """
@triton.jit
def k(x, s_inner, s_only, s_outer, s_bare, s_shape, s_grid, H: tl.constexpr, BT: tl.constexpr):
    i_bh = tl.program_id(0)
    i_h = i_bh % H
    tl.store(x, 0)

def launch(x, y, s_bare):
    B, T, HV = x.shape
    m = torch.empty(T)
    z = y.view(-1, 8)
    k[(4, HV)](x, x.stride(-1), m.stride(0), z.stride(0), s_bare, x.shape[1], HV, H=4, BT=64)
"""


@pytest.mark.parametrize(
    "param,kind",
    [
        ("s_inner", UNIT),  # x.stride(-1)
        ("s_only", UNIT),  # stride(0) of a 1-D tensor
        ("s_outer", NON_UNIT),  # stride(0) of a 2-D view
        ("s_bare", None),  # a stride argument nothing shows to be non-unit
        ("s_shape", NON_UNIT),  # a dimension of a tensor
        ("s_grid", NON_UNIT),  # an extent of the launch grid
        ("H", NON_UNIT),  # the literal 4 (and the kernel splits an index by it)
    ],
)
def test_stride_evidence_comes_from_the_launcher(param, kind):
    index = build(STRIDES)
    fn = kernel(index, "k")
    assert index.strides.stride_of(fn, ast.Name(param, ast.Load())).kind == kind


def test_stride_products_and_literals():
    index = build(STRIDES)
    fn = kernel(index, "k")
    stride = index.strides.stride_of
    assert stride(fn, ast.parse("1", mode="eval").body).kind == UNIT
    assert stride(fn, ast.parse("2", mode="eval").body).kind == NON_UNIT
    assert stride(fn, ast.parse("s_bare * BT", mode="eval").body).kind == NON_UNIT
    assert stride(fn, ast.parse("s_inner * s_only", mode="eval").body).kind == UNIT


def test_helper_strides_are_what_callers_pass():
    index = build(
        """
        @triton.jit
        def helper(p, s):
            return tl.load(p + s)

        @triton.jit
        def k(x, H: tl.constexpr):
            i_bh = tl.program_id(0)
            v = helper(x, i_bh % H)
            w = helper(x, H)
        """
    )
    assert (
        index.strides.stride_of(kernel(index, "helper"), ast.Name("s", ast.Load())).kind == NON_UNIT
    )


# -- sequences ----------------------------------------------------------------------------


def test_offsets_tables_are_found_by_use_whatever_their_name():
    index = build(
        """
        @triton.jit
        def k(x, cu_q_lens_ptr, chunk_map, offsets, BT: tl.constexpr):
            b = tl.program_id(0)
            start = tl.load(cu_q_lens_ptr + b)
            end = tl.load(cu_q_lens_ptr + b + 1)
            seq, blk = tl.load(chunk_map + b * 2), tl.load(chunk_map + b * 2 + 1)
            o = offsets + tl.arange(0, BT)
            rows = start + blk * BT + tl.arange(0, BT)
            tl.store(x + rows, tl.load(x + rows), mask=rows < end)
        """
    )
    seq = index.sequences.of(kernel(index, "k"))
    assert seq.offsets_tables == {"cu_q_lens_ptr"}  # chunk_map's pair delimits no span
    assert {"start", "end"} <= seq.token_offsets
    assert "rows" in seq.time_vectors
    assert "o" not in seq.time_vectors


def test_lengths_and_time_vectors_of_a_varlen_kernel():
    index = build(
        """
        @triton.jit
        def k(g, query_start_loc, T, BT: tl.constexpr, BK: tl.constexpr, IS_VARLEN: tl.constexpr):
            i_t, i_b = tl.program_id(0), tl.program_id(1)
            if IS_VARLEN:
                bos, eos = tl.load(query_start_loc + i_b), tl.load(query_start_loc + i_b + 1)
                T = eos - bos
            else:
                bos, eos = i_b * T, i_b * T + T
            o_t = i_t * BT + tl.arange(0, BT)
            o_k = tl.arange(0, BK)
            o_i = tl.arange(0, BT)
            m_t = o_t < T
            m_i = (i_t * BT + o_i) < T
        """
    )
    seq = index.sequences.of(kernel(index, "k"))
    assert "T" in seq.lengths
    assert {"bos", "eos"} <= seq.token_offsets
    assert seq.time_vectors == {"o_t", "o_i"}  # o_i: bounded once offset by a chunk start


def test_helpers_learn_sequences_from_their_callers():
    index = build(
        """
        @triton.jit
        def helper(p, start, n, BT: tl.constexpr):
            o = start + tl.arange(0, BT)
            return tl.load(p + o * 4, mask=o < n)

        @triton.jit
        def k(x, cu, BT: tl.constexpr):
            b = tl.program_id(0)
            bos, eos = tl.load(cu + b), tl.load(cu + b + 1)
            v = helper(x, bos, eos - bos, BT)
        """
    )
    seq = index.sequences.of(kernel(index, "helper"))
    assert "start" in seq.token_offsets
    assert "o" in seq.time_vectors


# -- one finding per defect ---------------------------------------------------------------


def test_a_more_specific_rule_supersedes_a_broader_one_on_the_same_site():
    source = (
        HEADER
        + textwrap.dedent(
            """
            @triton.jit
            def k(g, bos, T, HV: tl.constexpr, BT: tl.constexpr):
                i_h = tl.program_id(1)
                p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (0,), (BT,), (0,))

            def launch(g, bos, T):
                B, T, HV = g.shape
                k[(1, HV)](g.transpose(1, 2).contiguous(), bos, T, HV=HV, BT=64)
            """
        )
    ).encode()
    both = lint_source("k.py", source, frozenset({"ASC001", "ASC002"}))
    assert [d.code for d in both.diagnostics] == ["ASC002"]
    alone = lint_source("k.py", source, frozenset({"ASC001"}))
    assert [d.code for d in alone.diagnostics] == ["ASC001"]  # still reported when selected alone
    assert "ASC001" in RULES_BY_CODE["ASC002"].supersedes


def test_files_no_rule_can_fire_on_are_parsed_but_not_indexed():
    from ascend_lint.results import RULE_TOKENS
    from ascend_lint.rules.asc004.rule import KNOBS

    assert {k.encode() for k in KNOBS} <= set(RULE_TOKENS)  # every launch knob keeps a file
    codes = frozenset(RULES_BY_CODE)
    imports_only = b"import triton\n\ndef test():\n    assert triton.cdiv(3, 2) == 2\n"
    assert lint_source("t.py", imports_only, codes).diagnostics == []
    broken = b"import triton\n\ndef test(:\n"
    assert [d.code for d in lint_source("t.py", broken, codes).diagnostics] == ["ASC000"]


# -- names as Python scopes them ---------------------------------------------------------


def test_a_nested_grid_function_is_the_one_of_its_own_launcher():
    """Each launcher defines its own `def grid(meta)`: a launch uses the one of its
    function, never another launcher's of the same name (nor, when its function has
    none, a function nested elsewhere)."""
    index = build(
        """
        @triton.jit
        def seq_kernel(x, T, BT: tl.constexpr):
            tl.store(x + tl.program_id(0), 0)

        @triton.jit
        def head_kernel(x, K, BK: tl.constexpr):
            tl.store(x + tl.program_id(0), 0)

        def launch_seq(x):
            T, H = x.shape
            def grid(meta):
                return (triton.cdiv(T, meta["BT"]), H)
            seq_kernel[grid](x, T, BT=64)

        def launch_heads(x, K):
            N, H = x.shape
            def grid(meta):
                return (triton.cdiv(K, meta["BK"]), N * H)
            head_kernel[grid](x, K, BK=32)

        def launch_unseen(x, T):
            seq_kernel[grid](x, T, BT=64)
        """
    )
    axes = {
        host.name: [
            [ast.unparse(a) for a in shape] for shape in index.quantities.grid_axes(call, host)
        ]
        for call, host in index.launch_calls
    }
    assert axes["launch_seq"] == [["triton.cdiv(T, meta['BT'])", "H"]]
    assert axes["launch_heads"] == [["triton.cdiv(K, meta['BK'])", "N * H"]]
    assert axes["launch_unseen"] == [["grid"]]  # no `grid` this function can see
