"""bfloat16 as the interpreter stores it: the upper 16 bits of a float32."""

from __future__ import annotations

import numpy as np


def bf16_bits_to_fp32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def fp32_to_bf16_bits(values) -> np.ndarray:
    """Round to nearest even, NaN kept a (quiet) NaN."""
    as_f32 = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    bits = as_f32.view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    nan = np.isnan(as_f32)
    if nan.any():
        rounded = np.where(nan, ((bits >> 16) | np.uint32(0x40)).astype(np.uint16), rounded)
    return rounded
