"""ASC007 judges an int64 cast per path and says what each value is; ASC017 follows a
dtype through bitcasts, locals, module constants and launches."""

from __future__ import annotations

from lint_helpers import lint_code

HEADER = "import triton\nimport triton.language as tl\n\n"


def findings(code: str, rule: str) -> list[tuple[int, str]]:
    """(row, message) of each finding, rows counted in `code`."""
    result = lint_code(HEADER + code, select=rule)
    assert result.error is None
    offset = HEADER.count("\n")
    return sorted((d.start.row - offset, d.message) for d in result.diagnostics)


def rows(code: str, rule: str) -> list[int]:
    return [row for row, _ in findings(code, rule)]


def row_of(code: str, text: str) -> int:
    """The row in `code` of the first line containing `text`."""
    return next(i for i, line in enumerate(code.split("\n"), start=1) if text in line)


def file_row(code: str, text: str) -> int:
    """The same row as a message counts it, in the whole file."""
    return row_of(code, text) + HEADER.count("\n")


# -- ASC007: int64 on every path, or not ---------------------------------------------------


def test_asc007_cast_on_one_path_only_is_still_int32_on_the_other():
    code = """
@triton.jit
def k(x, cu, T, H: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    if IS_VARLEN:
        bos = tl.load(cu + i_n).to(tl.int64)
    else:
        bos = i_n * T
    p = x + (bos * H + i_h).to(tl.int64)
"""
    [(row, message)] = findings(code, "ASC007")
    assert row == row_of(code, "(bos * H + i_h)")
    assert "`bos` is int64 on some paths only" in message
    assert f"line {file_row(code, 'bos = i_n * T')}" in message
    assert "specialis" not in message


def test_asc007_every_path_int64_is_not_reported():
    code = """
@triton.jit
def k(x, cu, T, H: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    if IS_VARLEN:
        bos = tl.load(cu + i_n).to(tl.int64)
    else:
        bos = tl.cast(i_n, tl.int64) * T
    p = x + (bos * H + i_h).to(tl.int64)
    q = x + (tl.minimum(bos, T) * H).to(tl.int64)
"""
    assert rows(code, "ASC007") == []


def test_asc007_a_cast_after_the_read_does_not_widen_it():
    code = """
@triton.jit
def k(x, T, H: tl.constexpr):
    i_b = tl.program_id(0)
    bos = i_b * T
    p = x + (bos * H).to(tl.int64)
    bos = bos.to(tl.int64)
"""
    assert rows(code, "ASC007") == [row_of(code, "(bos * H)")]


def test_asc007_a_definition_on_the_other_side_of_the_if_does_not_reach():
    # `T = eos - bos` (int64) is on the varlen side only: the else side multiplies
    # the int32 argument.
    code = """
@triton.jit
def k(x, cu, T, IS_VARLEN: tl.constexpr):
    i_n = tl.program_id(0)
    if IS_VARLEN:
        bos, eos = tl.load(cu + i_n).to(tl.int64), tl.load(cu + i_n + 1).to(tl.int64)
        T = eos - bos
    else:
        bos = (i_n * T).to(tl.int64)
    tl.store(x + bos, 1)
"""
    [(row, message)] = findings(code, "ASC007")
    assert row == row_of(code, "(i_n * T)")
    assert "`T` (an int kernel argument)" in message and "`i_n` (a program id)" in message


def test_asc007_a_zero_on_the_single_sequence_path_is_no_int32_evidence():
    code = """
@triton.jit
def k(x, T, MULTI: tl.constexpr):
    if MULTI:
        i_n = tl.program_id(2).to(tl.int64)
    else:
        i_n = 0
    bos = (i_n * T).to(tl.int64)
    tl.store(x + bos, 1)
"""
    # only the program-id cast (see below), not the product
    assert rows(code, "ASC007") == [row_of(code, "tl.program_id(2)")]


def test_asc007_int64_annotated_length_is_a_64_bit_multiply():
    code = """
@triton.jit
def k(x, T: tl.int64, H: tl.constexpr):
    i_n = tl.program_id(0)
    bos = (i_n * T).to(tl.int64)
    tl.store(x + bos, 1)
"""
    assert rows(code, "ASC007") == []


# -- ASC007: what the value is --------------------------------------------------------------


def test_asc007_loop_derived_task_index_product_says_what_it_is():
    code = """
@triton.jit
def k(x, T, n_tasks, H: tl.constexpr, NUM_CORES: tl.constexpr):
    for task in range(tl.program_id(0), n_tasks, NUM_CORES):
        i_b, i_h = task // H, task % H
        bos = (i_b * T).to(tl.int64)
        j = i_b.to(tl.int64)
        r = (task + i_h).to(tl.int64)
        tl.store(x + bos + j + r, 1)
"""
    [(row, message)] = findings(code, "ASC007")
    assert row == row_of(code, "(i_b * T)")
    assert "loop variable `task`" in message and "int32 multiply" in message
    assert "specialis" not in message and "constexpr" not in message
    assert "fails to compile" not in message


def test_asc007_program_id_cast_is_not_called_a_compile_failure():
    code = """
@triton.jit
def k(x):
    i_t = tl.program_id(1) + 3
    i_tg = i_t.to(tl.int64)
    tl.store(x + i_tg, 1)
"""
    [(row, message)] = findings(code, "ASC007")
    assert row == row_of(code, "i_t.to(")
    assert "a program id" in message and "runtime int32" in message
    assert "specialis" not in message and "fails to compile" not in message


def test_asc007_argument_and_constexpr_casts_fail_to_compile():
    code = """
@triton.jit(do_not_specialize=["N"])
def k(x, T, N, BT: tl.constexpr):
    n = T.to(tl.int64)
    m = N.to(tl.int64)
    b = BT.to(tl.int64)
    tl.store(x + n + m + b, 1)

def launch(x, t, n):
    k[(1,)](x, t, n, BT=64)
"""
    found = findings(code, "ASC007")
    # N is never specialised
    assert [row for row, _ in found] == [row_of(code, "T.to("), row_of(code, "BT.to(")]
    assert "an int kernel argument" in found[0][1] and "equal to 1" in found[0][1]
    assert "`tl.constexpr`" in found[1][1] and "fails to compile" in found[1][1]


def test_asc007_helper_parameter_is_what_callers_pass():
    code = """
@triton.jit
def _base(p, i_h, T_seq):
    return p + i_h.to(tl.int64) * T_seq

@triton.jit
def _scaled(p, s):
    return p + s.to(tl.int64)

@triton.jit
def k(x, T, H: tl.constexpr):
    i_h = tl.program_id(0) % H
    q = _base(x, i_h, T)
    r = _scaled(x, H)
    tl.store(q + r, 1)

def launch(x, t):
    k[(4,)](x, t, H=4)
"""
    [(row, message)] = findings(code, "ASC007")
    assert row == row_of(code, "s.to(")  # `_base` gets a tensor; `_scaled` the constexpr H
    assert "helper `_scaled`" in message and "compile-time" in message


# -- ASC017: dtypes through bitcasts, locals, constants, launches ------------------------------


def test_asc017_bitcast_chains_to_fp8_are_reported():
    code = """
FP8 = tl.float8e4nv

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK))
    a = v.to(tl.uint8, bitcast=True).to(tl.float8e4nv, bitcast=True)
    b = tl.cast(v, tl.float8e5, bitcast=True)
    c = v.to(FP8, bitcast=True)
    d = v.to(tl.uint8, bitcast=True).to(tl.int8, bitcast=True)
    tl.store(o + tl.arange(0, BLOCK), d)
"""
    found = findings(code, "ASC017")
    assert [row for row, _ in found] == [row_of(code, t) for t in ("a = ", "b = ", "c = ")]
    assert all("unexpected type fp8." in m and "bitcast" in m for _, m in found)
    assert "module constant `FP8`" in found[2][1]


def test_asc017_dtype_in_local_constant_or_launch_is_reported_at_its_use():
    code = """
ACC64 = tl.float64

@triton.jit
def k(x, o, BLOCK: tl.constexpr, ACC: tl.constexpr):
    dt = tl.float64
    a = tl.zeros([BLOCK], dtype=dt)
    b = tl.full([BLOCK], 0, dtype=ACC)
    c = tl.zeros([BLOCK], dtype=ACC64)
    tl.store(o + tl.arange(0, BLOCK), (a + b + c).to(tl.float32))

def launch(x, o):
    k[(1,)](x, o, BLOCK=128, ACC=tl.float8e5)
"""
    found = findings(code, "ASC017")
    assert [row for row, _ in found] == [row_of(code, t) for t in ("a = ", "b = ", "c = ")]
    assert "held in `dt`" in found[0][1]
    assert f"launch on line {file_row(code, 'k[(1,)]')}" in found[1][1]
    assert "module constant `ACC64`" in found[2][1]


def test_asc017_comparisons_strings_and_integer_bitcasts_are_not_findings():
    code = """
FP8 = tl.float8e4nv

@triton.jit
def k(x, o, BLOCK: tl.constexpr, OUT: tl.constexpr):
    dt = tl.float64  # never used to convert
    v = tl.load(x + tl.arange(0, BLOCK))
    if x.dtype.element_ty == FP8:
        v = v + 1
    if OUT == dt:
        v = v * 2
    tl.static_assert(o.dtype.element_ty != tl.float8e5, "no tl.float8e5 output")
    w = v.to(tl.uint8, bitcast=True)
    tl.store(o + tl.arange(0, BLOCK), w)

def launch(x, o):
    k[(1,)](x, o, BLOCK=128, OUT=tl.float64)
"""
    assert rows(code, "ASC017") == []


def test_asc017_fp8_on_the_910_95_side_of_a_soc_test_is_not_a_finding():
    code = """
@triton.jit
def k(x, o, BLOCK: tl.constexpr, IS_910_95: tl.constexpr):
    bits = tl.load(x + tl.arange(0, BLOCK))
    if IS_910_95:
        v = bits.to(tl.float8e4nv, bitcast=True).to(tl.float32)
    else:
        v = bits.to(tl.float8e4nv, bitcast=True).to(tl.float32)
    tl.store(o + tl.arange(0, BLOCK), v)
"""
    assert rows(code, "ASC017") == [row_of(code, "else:") + 1]


def test_asc007_examples_of_runtime_indices_never_mention_specialisation():
    """The rule's own INVALID examples with a program id or a task-loop index. The first
    is the doc's Example, which also casts a specialised argument (`T.to(tl.int64)`) on
    purpose; the others each show runtime indices alone."""
    from ascend_lint.rules import ALL_RULES

    [rule] = [r for r in ALL_RULES if r.code == "ASC007"]
    cases = [c for c in rule.INVALID[1:] if "for task in range" in c.code or "IS_VARLEN" in c.code]
    assert len(cases) >= 2
    for case in cases:
        result = lint_code(case.code, select="ASC007")
        assert result.diagnostics
        for d in result.diagnostics:
            assert "specialis" not in d.message and "fails to compile" not in d.message
