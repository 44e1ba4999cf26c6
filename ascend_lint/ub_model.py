"""The Unified Buffer model: how much on-chip memory one Ascend vector core gives a
program, how a tile's footprint is counted, and how a pair of bounds becomes a verdict.

The static rule (ASC022) and the compile gate's UB verdict both read this module, so
that a lint finding and a lowered specialisation speak of the same budget.

The model, from public sources:

* Capacity. One vector core's Unified Buffer is 192 KB = 1,572,864 bits on Atlas A2
  (910B1..B4) and A3 (910_93); A5 (910_95) leaves 248 KiB = 2,031,616 bits usable. The
  compiler's error states the A2 figure ("ub overflow, requires N bits while 1572864
  bits available"); triton-ascend's programming guide and its UB-overflow debugging
  guide give the per-core sizes.
* What counts. The peak of the buffers live at once on one core, each allocation
  counted on its own. A triton-ascend maintainer, on triton-ascend issue #302, explains
  a reported "requires 3072000 bits" as 48000 fp32 elements x 32 bits x 2.
* Multibuffer. On by default on A2/A3, it doubles each multibuffered allocation (the
  "x 2" above) so that the next tile's copy overlaps this tile's compute.
* Alignment. The last dimension of every buffer is padded to 32 bytes (`ALIGN_BYTES`).
* Calibration. sgl-kernel-npu PR #477 reports "requires 2097152 bits" for
  `move_cache_dynamic_last_kernel_h_block` at H_BLOCK_SIZE=2, BLOCK_V=BLOCK_K=128: the
  aligned allocations of that load/store kernel times 2 give exactly that number.
* Peer practice. Liger-Kernel's Ascend backend sizes its blocks through a UB manager
  (capacity per SoC, hand-tuned memory multipliers per op), the same budget from the
  host side.

Bounds are in bits, like the compiler's message. A lower bound counts only what is
provably live together; an upper bound, when known, everything that could be. The
verdict is definite only when a bound settles it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ALIGN_BYTES = 32
"""The last dimension of every UB buffer is padded to this many bytes."""

BITS_PER_BYTE = 8


@dataclass(frozen=True)
class UbTarget:
    """One SoC family's Unified Buffer per vector core."""

    name: str
    capacity_bits: int
    multibuffer: bool
    aliases: tuple[str, ...]

    @property
    def multibuffer_factor(self) -> int:
        """How many copies of a multibuffered allocation the compiler keeps."""
        return 2 if self.multibuffer else 1


TARGETS: dict[str, UbTarget] = {
    "ascend910b": UbTarget(
        name="ascend910b",
        capacity_bits=1_572_864,
        multibuffer=True,
        aliases=("ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "a2"),
    ),
    "ascend910_93": UbTarget(
        name="ascend910_93",
        capacity_bits=1_572_864,
        multibuffer=True,
        aliases=("a3",),
    ),
    "ascend910_95": UbTarget(
        name="ascend910_95",
        capacity_bits=2_031_616,
        multibuffer=True,
        aliases=("a5",),
    ),
}

DEFAULT_TARGET = "ascend910b"


def target_names() -> tuple[str, ...]:
    """Every spelling `get_target` accepts, canonical names first."""
    names = list(TARGETS)
    for target in TARGETS.values():
        names.extend(target.aliases)
    return tuple(names)


def get_target(name: str) -> UbTarget:
    """The target named `name` or one of its aliases, case-insensitively."""
    wanted = name.strip().lower()
    for target in TARGETS.values():
        if wanted == target.name or wanted in target.aliases:
            return target
    raise ValueError(f"unknown target {name!r}; choose one of: {', '.join(target_names())}")


def aligned_bytes(shape: tuple[int, ...], element_bytes: int) -> int:
    """Bytes a buffer of `shape` takes in UB: the last dimension padded to `ALIGN_BYTES`.

    A scalar (`shape == ()`) still takes one aligned unit.
    """
    if any(extent <= 0 for extent in shape):
        return 0
    last = shape[-1] if shape else 1
    row_bytes = math.ceil(last * element_bytes / ALIGN_BYTES) * ALIGN_BYTES
    return math.prod(shape[:-1]) * row_bytes


def verdict(lower_bits: int, upper_bits: int | None, capacity_bits: int) -> str:
    """`overflows` when even the lower bound exceeds the capacity, `fits` when the upper
    bound is known and within it, `uncertain` otherwise."""
    if lower_bits > capacity_bits:
        return "overflows"
    if upper_bits is not None and upper_bits <= capacity_bits:
        return "fits"
    return "uncertain"
