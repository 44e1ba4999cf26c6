"""The Unified Buffer (UB) model shared by the static rule, the compile gate and
``ascend-lint compile``: how much on-chip memory one vector core has, and how a tile's
bytes are counted there.

Public facts it rests on:

* 192 KB of UB per vector core on Atlas A2/A3 (910B, 910_93): the compiler's own
  message reads ``ub overflow, requires N bits while 1572864 bits available``
  (triton-ascend's programming guide and FAQ); 248 KiB usable on A5 (910_95).
* What the compiler counts is the peak of the buffers live at once on one core, with
  multibuffer (on by default on A2/A3) making each DMA buffer two independently
  allocated copies (a triton-ascend maintainer on triton-ascend issue #302:
  ``requires 3072000 bits`` = 48000 fp32 x 32 bits x 2).
* Buffers are laid out in 32-byte blocks: the last dimension is padded to 32 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

ALIGN_BYTES = 32
BITS_PER_BYTE = 8


@dataclass(frozen=True)
class UbTarget:
    name: str
    capacity_bits: int
    multibuffer: bool  # whether multibuffer is on by default (DMA buffers count twice)
    aliases: tuple[str, ...]


TARGETS: dict[str, UbTarget] = {
    "ascend910b": UbTarget(
        "ascend910b",
        1_572_864,
        True,
        ("ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "a2"),
    ),
    "ascend910_93": UbTarget("ascend910_93", 1_572_864, True, ("a3",)),
    "ascend910_95": UbTarget("ascend910_95", 2_031_616, True, ("a5",)),
}
DEFAULT_TARGET = "ascend910b"


def get_target(name: str | None) -> UbTarget:
    """The target named ``name`` or one of its aliases (case and ``-``/``_`` ignored)."""
    wanted = (name or DEFAULT_TARGET).strip().lower().replace("-", "_")
    for target in TARGETS.values():
        if wanted == target.name or wanted in target.aliases:
            return target
    known = ", ".join(sorted(n for t in TARGETS.values() for n in (t.name, *t.aliases)))
    raise ValueError(f"unknown target {name!r}; known targets: {known}")


def aligned_bytes(shape, element_bytes: int) -> int:
    """Bytes a buffer of ``shape`` takes in UB: the last dimension padded to 32 bytes
    (a scalar takes one 32-byte block)."""
    dims = [int(d) for d in shape]
    if not dims:
        return ALIGN_BYTES
    row = dims[-1] * element_bytes
    row = -(-row // ALIGN_BYTES) * ALIGN_BYTES
    rows = 1
    for d in dims[:-1]:
        rows *= d
    return rows * row


def verdict(lower_bits: int, upper_bits: int | None, capacity_bits: int) -> str:
    """``overflows`` when even the lower bound exceeds the capacity, ``fits`` when the
    upper bound is known and within it, ``uncertain`` otherwise."""
    if lower_bits > capacity_bits:
        return "overflows"
    if upper_bits is not None and upper_bits <= capacity_bits:
        return "fits"
    return "uncertain"
