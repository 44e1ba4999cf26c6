"""How the sanitizer follows a mask's construction through the interpreter's builder ops
(``ascend_lint.sanitizer.masks``), and which masked-out lanes it takes as issued: the
masks triton-ascend's mask analysis parses into a box the copy is clipped to, the ones it
does not, and scalar accesses."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("triton")

import triton.language as tl
from triton.runtime.interpreter import TensorHandle, interpreter_builder

from ascend_lint.sanitizer import masks

B = interpreter_builder
CLIPS_NOT = "the mask is not one the compiler clips by: "


@pytest.fixture(autouse=True)
def marking():
    undo = masks.install(B)
    yield
    undo()  # (under --ascend-sanitize the session's own layers stay)


def scalar(value: int) -> TensorHandle:
    """A kernel argument or any other runtime scalar (not a literal)."""
    return TensorHandle(np.array([value], dtype=np.int32), tl.int32)


def offsets(n: int = 8) -> TensorHandle:
    return B.create_make_range(0, n)


def splat(handle, n: int = 8) -> TensorHandle:
    return B.create_splat(handle, [n])


def why(handle) -> str | None:
    return masks.issued_reason("load", handle, np.shape(handle.data))


def test_a_compare_of_an_arange_plus_scalars_against_a_scalar_is_a_box():
    o = B.create_add(splat(B.create_mul(scalar(2), B.get_int32(8))), offsets())
    assert masks.mark_of(o) == masks.RANGE
    for compare in (B.create_icmpSLT, B.create_icmpSLE, B.create_icmpSGE, B.create_icmpEQ):
        assert masks.mark_of(compare(o, splat(scalar(5)))) == masks.BOX
    # arith.extsi is followed; the front end passes the block's type
    for wider in (tl.int64, tl.block_type(tl.int64, [8])):
        wide = B.create_int_cast(o, wider, True)
        assert masks.mark_of(B.create_icmpSLT(wide, splat(B.get_int64(5)))) == masks.BOX
    assert why(B.create_icmpSLT(o, splat(scalar(5)))) is None


@pytest.mark.parametrize(
    ("build", "what"),
    [
        (lambda o: B.create_icmpSGT(o, splat(scalar(2))), "a `>` compare"),
        (lambda o: B.create_icmpNE(o, splat(scalar(2))), "a `!=` compare"),
        (lambda o: B.create_icmpULT(o, splat(scalar(2))), "an unsigned compare"),
        (
            lambda o: B.create_icmpSGE(B.create_sub(o, splat(B.get_int32(1))), splat(scalar(0))),
            "a compare of a tl.arange offset with a value subtracted",
        ),
        (
            lambda o: B.create_icmpSLT(B.create_mul(o, splat(B.get_int32(2))), splat(scalar(8))),
            "a compare of a multiplied tl.arange offset",
        ),
        (
            lambda o: B.create_icmpEQ(B.create_srem(o, splat(B.get_int32(2))), splat(scalar(0))),
            "a compare of a tl.arange offset taken modulo",
        ),
        (
            lambda o: B.create_icmpSLT(B.create_add(o, offsets()), splat(scalar(8))),
            "a compare of the sum of two tl.arange offsets",
        ),
        (
            lambda o: B.create_icmpSLT(
                B.create_int_cast(o, tl.int16, True), B.create_splat(B.get_int16(8), [8])
            ),
            "a compare of a tl.arange offset cast to a narrower or unsigned type",
        ),
        (
            lambda o: B.create_icmpSGT(splat(scalar(5)), o),
            "a compare with the tl.arange offset on the right (n > offs)",
        ),
        (
            lambda o: B.create_icmpSLT(o, B.create_add(o, splat(B.get_int32(1)))),
            "a compare against values that differ per lane",
        ),
        (lambda o: B.create_fcmpOGT(o, o), "a compare of floating-point values"),
    ],
)
def test_compares_the_analysis_does_not_parse_name_why(build, what):
    mask = build(offsets())
    assert isinstance(masks.mark_of(mask), masks.Unparsed)
    assert why(mask).startswith(CLIPS_NOT + what)


def test_a_literal_on_the_left_is_folded_to_the_right():
    o = offsets()
    assert masks.mark_of(B.create_icmpSGT(splat(B.get_int32(6)), o)) == masks.BOX  # 6 > o
    assert masks.mark_of(B.create_icmpSLE(splat(B.get_int32(2)), o)) == masks.BOX  # 2 <= o
    assert why(B.create_icmpSLT(splat(B.get_int32(2)), o)) == CLIPS_NOT + (
        "a `>` compare (the compiler parses <, <=, >= and ==)"
    )


def test_a_compare_of_loaded_values():
    ptrs = TensorHandle(np.zeros(8, dtype=np.uint64), tl.pointer_type(tl.int32))
    values = B.create_masked_load(
        ptrs, TensorHandle(np.zeros(8, dtype=bool), tl.int1), None, None, None, False
    )
    mask = B.create_icmpNE(values, splat(B.get_int32(0)))
    assert why(mask) == CLIPS_NOT + "a compare of values loaded from memory"


def test_masks_of_boxes_and_what_breaks_them():
    o = offsets()
    low = B.create_icmpSGE(o, splat(scalar(2)))
    high = B.create_icmpSLT(o, splat(scalar(6)))
    assert masks.mark_of(B.create_and(low, high)) == masks.BOX
    # a scalar condition splat over the block: all lanes or none
    flag = B.create_icmpSLT(scalar(3), scalar(4))
    assert masks.mark_of(B.create_and(B.create_splat(flag, [8]), high)) == masks.BOX
    # the splat of a compare of scalars holds integers under an integer type, and so does
    # an & whose left side is one (sgl-kernel-npu's causal_conv1d: `(lane_active & m_tok)`
    # where m_tok = use_tail & (dst_tok < n) & (x_tok < m), lowered to a clipped copy)
    both_splats = B.create_and(
        B.create_splat(flag, [8]), B.create_and(B.create_splat(flag, [8]), high)
    )
    assert masks.mark_of(both_splats) == masks.BOX
    assert why(B.create_or(B.create_splat(flag, [8]), B.create_splat(flag, [8]))) == (
        CLIPS_NOT + "masks combined with |"
    )
    rows = B.create_broadcast(B.create_expand_dims(low, 1), [8, 4])
    assert masks.mark_of(rows) == masks.BOX
    gt = B.create_icmpSGT(o, splat(scalar(2)))
    assert masks.mark_of(B.create_and(gt, high)) == masks.mark_of(gt)
    assert why(B.create_or(low, high)) == CLIPS_NOT + "masks combined with |"
    assert why(B.create_xor(low, high)) == CLIPS_NOT + "a mask negated with ~ or combined with ^"
    assert why(B.create_select(low, high, low)) == CLIPS_NOT + "a mask built with tl.where"
    assert why(B.create_reshape(rows, [32], False)) == CLIPS_NOT + "a reshaped or permuted mask"
    spread = B.create_broadcast(B.create_expand_dims(o, 1), [8, 4])
    assert why(B.create_icmpSLT(spread, B.create_splat(scalar(4), [8, 4]))) == CLIPS_NOT + (
        "a compare of a tl.arange offset spread over two dimensions"
    )
    # built by no compare at all (a literal block, a loaded i1 row)
    unknown = TensorHandle(np.ones(8, dtype=bool), tl.int1)
    assert (
        why(unknown)
        == CLIPS_NOT + "a mask that does not derive from compares of a tl.arange offset"
    )


def test_scalar_accesses():
    flag = B.create_icmpSLT(scalar(9), scalar(4))
    assert masks.issued_reason("load", flag, (1,)) == masks.SCALAR_LOAD
    assert masks.issued_reason("atomic", flag, (1,)) == masks.SCALAR_ATOMIC
    assert masks.issued_reason("store", flag, (1,)) is None  # an scf.if
    # a one-lane block with a parsed mask is a clipped copy like any other
    one = B.create_icmpSLT(offsets(1), B.create_splat(scalar(0), [1]))
    assert masks.issued_reason("load", one, (1,)) is None
