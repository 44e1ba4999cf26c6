"""The Unified Buffer model shared by ASC022 and the compile gate."""

from __future__ import annotations

import pytest

from ascend_lint.ub_model import (
    ALIGN_BYTES,
    DEFAULT_TARGET,
    NO_TEMPS,
    TARGETS,
    OpShape,
    Temps,
    aligned_bytes,
    buffer_bytes,
    get_target,
    op_temps,
    verdict,
)


def test_default_target_is_a2_budget() -> None:
    target = get_target(DEFAULT_TARGET)
    assert target.capacity_bits == 1_572_864 == 192 * 1024 * 8
    assert target.multibuffer


def test_a5_compiles_without_multibuffer_and_no_known_reuse() -> None:
    # triton-ascend 3.2.0's compile options: multibuffer = not compiling on a 910_95
    a5 = get_target("a5")
    assert not a5.multibuffer and a5.multibuffer_factor == 1
    assert not a5.reuses_dead_buffers
    assert get_target("a3").multibuffer and get_target("a3").reuses_dead_buffers


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("ascend910b", "ascend910b"),
        ("Ascend910B2", "ascend910b"),
        ("A2", "ascend910b"),
        ("ascend910_93", "ascend910_93"),
        ("a3", "ascend910_93"),
        ("ASCEND910_95", "ascend910_95"),
    ],
)
def test_get_target_accepts_aliases_in_any_case(spelling: str, name: str) -> None:
    assert get_target(spelling).name == name


def test_a5_budget_and_a3_same_as_a2() -> None:
    assert TARGETS["ascend910_95"].capacity_bits == 2_031_616 == 248 * 1024 * 8
    assert TARGETS["ascend910_93"].capacity_bits == TARGETS["ascend910b"].capacity_bits


def test_unknown_target_names_the_choices() -> None:
    with pytest.raises(ValueError, match=r"ascend910b.*ascend910_95"):
        get_target("ascend310p")


def test_last_dimension_is_padded_to_32_bytes() -> None:
    assert ALIGN_BYTES == 32
    assert aligned_bytes((128, 128), 2) == 128 * 256
    assert aligned_bytes((4, 3), 4) == 4 * 32  # 12 bytes a row -> 32
    assert aligned_bytes((2, 1), 2) == 2 * 32
    assert aligned_bytes((), 4) == 32
    assert aligned_bytes((0, 8), 4) == 0


def test_issue_302_figure() -> None:
    # 48000 fp32 elements, multibuffered: the 3,072,000 bits a maintainer explained.
    assert aligned_bytes((48000,), 4) * 8 * 2 == 3_072_000


@pytest.mark.parametrize(
    ("lower", "upper", "expected"),
    [
        (1_572_865, None, "overflows"),
        (1_572_865, 2_000_000, "overflows"),
        (1_000, 1_572_864, "fits"),
        (1_000, 1_572_865, "uncertain"),
        (1_572_864, None, "uncertain"),
    ],
)
def test_verdict(lower: int, upper: int | None, expected: str) -> None:
    assert verdict(lower, upper, 1_572_864) == expected


# -- what an op lowers to (AscendNPU-IR's rewrites and temporary-buffer sizes) ---------------
def _op(kind: str, dims=(1024,), bits=32, **kw) -> OpShape:
    return OpShape(kind, dims=dims, element_bits=bits, **kw)


def test_buffer_bytes_handles_masks_and_stride_alignment() -> None:
    assert buffer_bytes((1024,), 1) == 128  # one bit an element
    assert buffer_bytes((1024, 8), 1) == 1024 * 32  # each row padded to a block
    assert buffer_bytes((1024,), 64, stride_aligned=True) == 1024 * 32
    assert buffer_bytes((64, 128), 16) == aligned_bytes((64, 128), 2)


def test_an_integer_compare_runs_as_a_scalar_loop_into_an_i8_mask() -> None:
    i64 = op_temps(_op("cmpi", bits=64, tensor_operands=2, is_float=False, predicate="slt"))
    assert i64.lower == 1024 - 128  # the i8 mask beyond the i1 result
    assert i64.upper == 1024 + 3 * 32
    # an i32 ordering compare first widens both operands to i64
    i32 = op_temps(_op("cmpi", bits=32, tensor_operands=2, is_float=False, predicate="slt"))
    assert i32.lower == 2 * 8192 + 1024 - 2 * 4096 - 128
    assert i32.upper == 2 * 8192 + 1024 + 3 * 32
    # i32 equality stays a vector compare; float compares need nothing
    eq = op_temps(_op("cmpi", bits=32, tensor_operands=2, is_float=False, predicate="eq"))
    assert eq == NO_TEMPS
    assert op_temps(_op("cmpi", bits=32, is_float=True, predicate="olt")) == NO_TEMPS


def test_integer_division_runs_in_fp32() -> None:
    div = op_temps(_op("divi", tensor_operands=1, splat_operands=1, is_float=False))
    assert div.lower == 0  # the quotient can take the fp32 dividend's place
    assert div.upper == 2 * 4096 + 4096 + 32
    rem = op_temps(_op("remi", tensor_operands=1, splat_operands=1, is_float=False))
    # fp32 dividend, quotient and product live together: one more than operand + result
    assert rem.lower == 4096
    assert rem.upper == 2 * 4096 + 3 * 4096 + 2 * 1024
    assert op_temps(_op("divi", bits=64, is_float=False)) == NO_TEMPS  # a scalar loop


def test_a_reduction_needs_the_temporary_its_axis_and_length_call_for() -> None:
    def reduce(dims, axes, bits=32, combiner="addf", is_float=True):
        shape = OpShape(
            "reduce", dims, bits, reduce_dims=axes, combiner=combiner, is_float=is_float
        )
        return op_temps(shape)

    assert reduce((64, 256), (0,)).lower == 64 * 256 * 4  # not the last axis: the input
    assert reduce((64, 256), (1,)).lower == 64 * 256 * 4 // 2  # past two repeats: half
    assert reduce((64, 128), (1,)).lower == 64 * 256  # up to two repeats: a repeat a row
    assert reduce((64, 64), (1,)) == Temps(0, 0, "reduction")  # one repeat: none
    assert reduce((64, 32), (1,), bits=32, combiner="addi", is_float=False).lower == 2 * 64 * 32 * 4
    # booleans are reduced as f16
    assert reduce((64, 64), (1,), bits=1, combiner="ori", is_float=False).lower > 0


def test_a_broadcast_needs_a_temporary_by_its_axis_and_alignment() -> None:
    def broadcast(src, out, axes, bits=32):
        return op_temps(OpShape("broadcast", src, bits, reduce_dims=axes, out_dims=out))

    assert broadcast((128,), (128,), ()) == NO_TEMPS
    # (a, 1) -> (a, b): a rounded up to 8 rows, times one block
    assert broadcast((100,), (100, 256), (1,)).lower == 104 * 32
    # (a, 1) -> (a, b) with b not a multiple of a block: b rounded up to one
    assert broadcast((100,), (100, 12), (1,)).lower == 104 * 16 * 4
    # (1, c) -> (b, c): nothing when c fills whole blocks, the output's rows otherwise
    assert broadcast((128,), (64, 128), (0,)).lower == 0
    assert broadcast((12,), (64, 12), (0,)).lower == 64 * 16 * 4


def test_casts_that_need_a_temporary() -> None:
    narrow = op_temps(OpShape("cast", (1024,), 32, result_bits=8))
    assert narrow.lower == narrow.upper == 2 * 4096
    assert op_temps(OpShape("cast", (1024,), 1, result_bits=32)).lower == 3 * 32
    widen = op_temps(OpShape("cast", (1024,), 8, result_bits=64))
    assert widen.lower == 0 and widen.upper == 4096
    assert op_temps(OpShape("cast", (1024,), 16, result_bits=32)) == NO_TEMPS


def test_selects_nan_min_max_and_math_only_widen_the_upper_bound() -> None:
    assert op_temps(_op("select", bits=64)) == Temps(0, 0, "select mask")
    assert op_temps(_op("select")).upper == 256
    nan = op_temps(_op("nan_minmax"))
    assert nan.lower == 0 and nan.upper == 2 * 4096 + 2 * 1024
    exp = op_temps(_op("math", bits=16))
    assert exp.lower == 0 and exp.upper == 4 * 4096


def test_stride_aligned_temporaries_take_a_block_an_element() -> None:
    rem = op_temps(_op("remi", tensor_operands=1, is_float=False), stride_aligned=True)
    assert rem.lower == 1024 * 32
