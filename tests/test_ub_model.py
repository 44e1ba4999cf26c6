"""The Unified Buffer model shared by ASC022 and the compile gate."""

from __future__ import annotations

import pytest

from ascend_lint.ub_model import (
    ALIGN_BYTES,
    DEFAULT_TARGET,
    TARGETS,
    aligned_bytes,
    get_target,
    verdict,
)


def test_default_target_is_a2_budget() -> None:
    target = get_target(DEFAULT_TARGET)
    assert target.capacity_bits == 1_572_864 == 192 * 1024 * 8
    assert target.multibuffer


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
