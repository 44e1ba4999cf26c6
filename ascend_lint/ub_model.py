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
* Multibuffer. On by default on A2/A3 (off on A5: triton-ascend's compile options), it
  doubles each multibuffered allocation (the "x 2" above) so that the next tile's copy
  overlaps this tile's compute; the compiler marks for it the local side of each DMA
  inside `scf.for` loops only (AscendNPU-IR `MarkMultiBuffer`).
* Alignment. The last dimension of every buffer is padded to 32 bytes (`ALIGN_BYTES`).
* What ops hold. The compiler (BiShengIR, public as AscendNPU-IR) rewrites several ops
  into sequences and gives vector instructions temporary buffers: `op_temps` below.
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

import functools
import math
from dataclasses import dataclass

from ascend_lint import toolchain

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
    # whether the compiler's memory planning is known to reuse the buffers of values that
    # are dead; triton-ascend issue #2246 shows the A5 pipeline keeping one tile per
    # unrolled loop iteration, so its upper bound assumes no reuse at all
    reuses_dead_buffers: bool = True

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
    # triton-ascend 3.2.0 turns multibuffer off by default when it compiles on an A5
    # (`multibuffer: bool = not is_compile_on_910_95` in its backend's compile options)
    "ascend910_95": UbTarget(
        name="ascend910_95",
        capacity_bits=2_031_616,
        multibuffer=False,
        aliases=("a5",),
        reuses_dead_buffers=False,
    ),
}

DEFAULT_TARGET = toolchain.DEFAULT_TARGET  # a canonical name of TARGETS


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


def buffer_bytes(dims: tuple[int, ...], element_bits: int, stride_aligned: bool = False) -> int:
    """Bytes a buffer of `dims` takes in UB, for element widths down to one bit (`i1`).

    Rows are padded to `ALIGN_BYTES`; a stride-aligned buffer (one the compiler gives
    every element of its last dimension its own 32-byte block, see `StrideAlign`) takes
    `ALIGN_BYTES` per element of that dimension.
    """
    if any(extent <= 0 for extent in dims):
        return 0
    last = dims[-1] if dims else 1
    if stride_aligned:
        row_bytes = last * ALIGN_BYTES
    else:
        row_bytes = math.ceil(last * element_bits / (ALIGN_BYTES * 8)) * ALIGN_BYTES
    return math.prod(dims[:-1]) * row_bytes


# -- what an op lowers to ----------------------------------------------------------------------
# The compiler behind the UB message is BiShengIR (its source: the AscendNPU-IR repository,
# `bishengir/lib/Dialect/HFusion/Transforms/Normalize.cpp` for the rewrites of one op into
# several, `bishengir/lib/Dialect/HIVM/IR/ExtraBufferOpInterface/` for the temporary
# buffer each vector instruction is given, `.../HIVM/Transforms/AlignBuffer/` for stride
# alignment).  `op_temps` turns those rules into the buffers one op of the lowered Triton
# IR holds beyond its operands and its result, as a pair: what must be there (the lower
# bound) and what may be (the upper bound).

BLOCK_BYTES = ALIGN_BYTES  # one vector block
REPEAT_BYTES = 256  # one vector repeat: 8 blocks
BROADCAST_ROWS_PER_REPEAT = 8  # rows one last-axis broadcast instruction reads


@dataclass(frozen=True)
class OpShape:
    """What `op_temps` needs to know of one op: its kind and its operands' shapes."""

    kind: str  # see `op_temps`
    dims: tuple[int, ...]  # the result's shape (a reduction's and broadcast's: the input's)
    element_bits: int  # the operands' element width
    result_bits: int = 0  # the result's element width, where it differs (casts)
    tensor_operands: int = 1  # operands that are tensors computed in the kernel
    splat_operands: int = 0  # operands that are splat constants (`linalg.fill`)
    predicate: str = ""  # a compare's predicate
    reduce_dims: tuple[int, ...] = ()
    combiner: str = ""  # a reduction's combining op: addf, maxnumf, ori...
    is_float: bool = True
    out_dims: tuple[int, ...] = ()  # a broadcast's output shape


@dataclass(frozen=True)
class Temps:
    """Bytes one op holds beyond its operands and result, with the reason."""

    lower: int
    upper: int
    why: str = ""


NO_TEMPS = Temps(0, 0)


def op_temps(op: OpShape, stride_aligned: bool = False) -> Temps:
    """The temporary UB an op of the lowered IR needs while it runs.

    The lower bound is what the op's lowering must hold at one moment beyond its operands
    and its result (a temporary the result could later reuse is not counted); the upper
    bound adds every intermediate the rewrite creates, as if none were reused.
    """
    n_bytes = functools.partial(buffer_bytes, op.dims, stride_aligned=stride_aligned)
    kind = op.kind
    if kind == "cmpi":
        return _integer_compare(op, n_bytes)
    if kind in ("divi", "remi"):
        return _integer_division(op, n_bytes)
    if kind == "reduce":
        return _reduction(op)
    if kind == "broadcast":
        return _broadcast(op)
    if kind == "cast":
        return _cast(op, n_bytes)
    if kind == "select":
        # a select of 64-bit values on an i1 mask needs none; others one repeat of
        # mask bits (VSelOp::allocExtraBuffersIfPossible)
        wide = op.element_bits == 64
        return Temps(0, 0 if wide else REPEAT_BYTES, "select mask")
    if kind == "nan_minmax":
        # maximumf/minimumf propagate NaN: rewritten to compares and selects
        return Temps(0, 2 * n_bytes(op.element_bits) + 2 * n_bytes(8), "NaN-propagating min/max")
    if kind == "math":
        # transcendental ops on 16-bit floats run in fp32 (NormalizeF16ToF32Type); the
        # longer ones (tanh, erf, sin...) are rewritten to several fp32 steps
        steps = 4
        return Temps(0, steps * n_bytes(32), "math op lowered to fp32 steps")
    if kind in ("generic", "transpose"):
        return Temps(0, n_bytes(max(op.element_bits, op.result_bits)), kind)
    return NO_TEMPS


def _integer_compare(op: OpShape, n_bytes) -> Temps:
    """An integer compare other than i32 ==/!= runs as a scalar loop writing an i8 mask,
    then cast to i1 (HIVMDecomposeOp `VCmpOpLowering`, `shouldVCmpOpLowerToScalarLoops`);
    before that, i32 operands of an ordering compare are cast to i64 and i8 ones to f16
    (Normalize `NormalizeI8I32CmpOp`)."""
    bits = op.element_bits
    if not bits or op.is_float or (bits == 32 and op.predicate in ("eq", "ne")):
        return NO_TEMPS
    mask = n_bytes(8)
    widened = {32: 64, 8: 16}.get(bits, 0)
    computed = widened and op.tensor_operands * n_bytes(widened)
    splats = widened and op.splat_operands * n_bytes(widened)
    result = n_bytes(1)
    operands = op.tensor_operands * n_bytes(bits)
    # the widened operands and the mask are all read by the scalar loop
    lower = max(0, computed + mask - operands - result) if widened else max(0, mask - result)
    return Temps(lower, computed + splats + mask + BLOCK_BYTES * 3, "integer compare")


def _integer_division(op: OpShape, n_bytes) -> Temps:
    """Integer division and remainder of i8/i16/i32 run in fp32: `a / b` as
    cast(cast(a) / cast(b)) (Normalize `NormalizeDivSIandDivUIOp`), `a % b` through a
    truncated fp32 division, a multiply, a subtract, an add for negative remainders, two
    compares, an or and a select, then the cast back and a select for a zero divisor
    (`NormalizeModOp`).  i64 ones run as scalar loops (no temporary)."""
    if op.element_bits not in (8, 16, 32):
        return NO_TEMPS
    f32 = n_bytes(32)
    operands = (op.tensor_operands + op.splat_operands) * f32
    if op.kind == "divi":
        # the fp32 quotient can take the place of the fp32 dividend, the result that of
        # the quotient: nothing is certain beyond the operands and the result
        return Temps(0, operands + f32 + BLOCK_BYTES, "integer division in fp32")
    # at the multiply: the fp32 dividend, the quotient and the product are live together
    # (plus the fp32 divisor while the add needs it); later the remainder, its corrected
    # copy and the quotient with two masks.  The upper bound takes the widest step with
    # every fp32 operand cast still held: the casts, three fp32 values and two masks
    live = (3 + (op.tensor_operands > 1)) * f32
    counted = op.tensor_operands * n_bytes(op.element_bits) + n_bytes(op.element_bits)
    masks = 2 * n_bytes(8)
    return Temps(max(0, live - counted), operands + 3 * f32 + masks, "remainder")


def _reduction(op: OpShape) -> Temps:
    """The temporary of a vector reduction (HIVM `getExtraBufferSizeForReduceOp`): the whole
    input for a reduction over any axis but the last; over the last axis of floats, half the
    input past two repeats of the axis; integers and or/xor/prod reductions use twice the
    input for short rows, or a repeat and a block per row for long ones.  Booleans and int8
    are first cast to a wider type (Normalize `NormalizeToTargetType`)."""
    dims = op.dims
    if not dims or not op.reduce_dims:
        return NO_TEMPS
    bits = op.element_bits
    widened = 0
    if bits in (1, 8):
        widened = buffer_bytes(dims, 16)
        bits = 16
    source = buffer_bytes(dims, bits)
    rank = len(dims)
    per_block = BLOCK_BYTES * 8 // bits
    per_repeat = REPEAT_BYTES * 8 // bits
    temps = []
    for axis in op.reduce_dims:
        if op.combiner.startswith("arg"):
            temps.append(BLOCK_BYTES)
            continue
        if axis != rank - 1:
            temps.append(source)
            continue
        length = dims[axis]
        rows = 1 if axis == 0 else dims[0]
        integer_like = not op.is_float or op.combiner in ("ori", "xori", "mulf", "muli", "prod")
        if integer_like:
            factor = 3 if op.combiner == "xori" else 2
            if length > per_repeat:
                repeats = 2 if op.combiner == "xori" else 1
                temps.append(rows * (per_repeat * repeats + per_block) * bits // 8)
            else:
                temps.append(factor * source)
            continue
        if op.combiner in ("maxnumf", "minnumf", "maximumf", "minimumf") and rank == 1:
            temps.append(0 if length <= per_repeat else REPEAT_BYTES)
        elif length < per_block:
            temps.append(source // 2 if length % 2 == 0 else 0)
        elif length <= per_repeat:
            temps.append(0)
        elif length <= 2 * per_repeat:
            temps.append(rows * REPEAT_BYTES)
        else:
            temps.append(source // 2)
    extra = max(temps, default=0) + widened
    return Temps(extra, extra, "reduction")


def _broadcast(op: OpShape) -> Temps:
    """The temporary of a vector broadcast (HFusion `refineBroadcastExtraBufferSize`): none
    for 1-D or middle-axis ones; a first-axis broadcast of an unaligned row needs the
    output's rows; a last-axis one (a, 1) -> (a, b) needs a, rounded up to the eight rows
    one instruction reads, times a block (b aligned) or times b rounded up to a block.
    Booleans are broadcast as f16 (Normalize `NormalizeToTargetType<bool, BroadcastOp>`)."""
    out = op.out_dims
    bits = op.element_bits
    if len(out) < 2:
        return NO_TEMPS
    boolean = 0
    if bits == 1:
        boolean = buffer_bytes(out, 16) + buffer_bytes(op.dims, 16)
        bits = 16
    per_block = BLOCK_BYTES * 8 // bits
    rank = len(out)
    temps = []
    for axis in op.reduce_dims:
        if axis == 0:
            row = out[-1] if rank == 2 else out[-1] * out[-2]
            if (row * bits) % (BLOCK_BYTES * 8) == 0:
                continue
            temps.append(out[0] * _round_up(row, per_block) * bits // 8)
        elif axis == rank - 1:
            a, b = out[-2], out[-1]
            aligned = (b * bits) % (BLOCK_BYTES * 8) == 0
            rows = _round_up(a, BROADCAST_ROWS_PER_REPEAT)
            if aligned:
                needed = (a % BROADCAST_ROWS_PER_REPEAT != 0 or b != per_block) and bits != 64
                temps.append(rows * per_block * bits // 8 if needed else 0)
            else:
                temps.append(rows * _round_up(b, per_block) * bits // 8)
    extra = max(temps, default=0)
    # a boolean broadcast holds its f16 input and output together, in place of the i1 ones
    certain = boolean and max(0, boolean - buffer_bytes(out, 1) - buffer_bytes(op.dims, 1))
    return Temps(extra + certain, extra + boolean, "broadcast")


def _cast(op: OpShape, n_bytes) -> Temps:
    """Casts narrowing i32/i16 to i8 transpose through a buffer twice the input; casts from
    i1 take three blocks (HIVM `VCastOp::allocExtraBuffersIfPossible`); casts between
    8/16-bit values and i64 go through a 32-bit type (Normalize `NormalizeCastLoweringOp`)."""
    src, dst = op.element_bits, op.result_bits
    if src in (16, 32) and dst == 8:
        extra = 2 * n_bytes(src)
        return Temps(extra, extra, "narrowing cast")
    if src == 1:
        return Temps(3 * BLOCK_BYTES, 3 * BLOCK_BYTES, "cast from i1")
    if (src in (8, 16) and dst == 64) or (src == 64 and dst in (8, 16)):
        return Temps(0, n_bytes(32), "cast through a 32-bit type")
    return NO_TEMPS


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def verdict(lower_bits: int, upper_bits: int | None, capacity_bits: int) -> str:
    """`overflows` when even the lower bound exceeds the capacity, `fits` when the upper
    bound is known and within it, `uncertain` otherwise."""
    if lower_bits > capacity_bits:
        return "overflows"
    if upper_bits is not None and upper_bits <= capacity_bits:
        return "fits"
    return "uncertain"
