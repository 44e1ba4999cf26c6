"""ASC017 unsupported-dtype: float64 and fp8 dtypes in a kernel.

Where a kernel uses a dtype and how it got there (spelled out, a local or a module
constant holding it, a constexpr a launch binds to one, bitcasts included) is the
index's (`index.dtypes`); which statements compile only on the 910_95, the one SoC that
accepts them, is `index.platform`'s. The rule picks the unsupported dtypes and words
the message.
"""

from __future__ import annotations

from collections.abc import Iterator

from ascend_lint.index import LANGUAGE
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

# triton.language's float64 and fp8 dtypes (and their short aliases).
UNSUPPORTED = frozenset(
    f"{LANGUAGE}.{name}"
    for name in (
        "float64",
        "float8e4nv",
        "float8e5",
        "float8e4b15",
        "float8e4b8",
        "float8e5b16",
    )
)


class UnsupportedDtype(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        # Every path a dtype reaches a kernel by ends at one spelled in this module, so a
        # module that never spells one has nothing to report.
        text = ctx.source.text
        if "float64" not in text and "float8" not in text:
            return
        index = ctx.index
        for fn in index.kernels:
            for use in index.dtypes.uses(fn, UNSUPPORTED):
                if use.stmt is not None and index.platform.kernel_on_a5_only(fn, use.stmt):
                    continue  # the 910_95 side of a compile-time SoC test
                yield Finding(
                    use.node, self._message(use.dtype, use.how, use.kind), related=use.cited
                )

    @staticmethod
    def _message(qual: str, how: str, kind: str) -> str:
        name = qual.rsplit(".", 1)[1]
        via = f" ({how})" if how else ""
        if name != "float64":
            if kind == "cast":
                error = "`[fp8, fp64] is unsupported on Ascend`"
            elif kind == "bitcast":
                error = "`unexpected type fp8.`, even with `bitcast=True`"
            else:
                error = "`unexpected type fp8.`"
            return (
                f"`{name}`{via}: triton-ascend rejects fp8 types on A2/A3 (ValueError {error}); "
                "keep fp8 data as uint8 bits and compute in bf16/fp16/float32"
            )
        if kind == "bitcast":
            return (
                f"`{name}`{via}: a bitcast to float64 makes an fp64 value; triton-ascend's "
                "front end accepts the bitcast, but A2/A3 have no fp64 arithmetic, loads or "
                "stores; keep the bits in int64"
            )
        if kind == "cast":
            return (
                f"`{name}`{via}: `tl.cast` to or from float64 raises `[fp8, fp64] is "
                "unsupported on Ascend` in triton-ascend on A2/A3; use float32 (or bf16/fp16)"
            )
        return (
            f"`{name}`{via} is not supported by triton-ascend on A2/A3 (no fp64 arithmetic, "
            "loads or stores; its cast raises `[fp8, fp64] is unsupported on Ascend`); use "
            "float32 (or bf16/fp16)"
        )

    VALID = [
        """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK)).to(tl.float32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    if x.dtype.element_ty == tl.float64:
        v = v * 2
    if o.dtype.element_ty == tl.constexpr(tl.float8e5):
        v = v + 1
    tl.store(o + tl.arange(0, BLOCK), acc + v)

def host(x):
    # float64 on the host is fine: reference results in double precision
    return x.to(torch.float64).sum()
""",
        # bitcasts between same-width integer types, a dtype constant used only in a
        # comparison, dtype names in strings
        """
import triton
import triton.language as tl

FP8 = tl.float8e4nv
BITS = tl.uint8

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK))
    u = v.to(tl.uint8, bitcast=True).to(tl.int8, bitcast=True)
    w = tl.cast(u, BITS, bitcast=True)
    if x.dtype.element_ty == FP8:
        w = w + 1
    tl.static_assert(o.dtype.element_ty != tl.float64, "tl.float64 output")
    tl.store(o + tl.arange(0, BLOCK), w)
""",
        # native fp8 only on the 910_95 side of a compile-time SoC test
        """
import triton
import triton.language as tl

@triton.jit
def k(x, o, BLOCK: tl.constexpr, IS_910_95: tl.constexpr):
    bits = tl.load(x + tl.arange(0, BLOCK))
    if IS_910_95:
        v = bits.to(tl.float8e4nv, bitcast=True).to(tl.float32)
    else:
        v = (bits & 0x7F).to(tl.float32)
    tl.store(o + tl.arange(0, BLOCK), v)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl
from triton.language import float8e4nv

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK)).to(tl.float64)
    acc = tl.zeros([BLOCK], dtype=tl.float64)
    q = (acc + v).to(float8e4nv)
    tl.store(o + tl.arange(0, BLOCK), q)
""",
            rows=[8, 9, 10],
        ),
        # fp8 reached by bitcasts: a chain, `tl.cast(..., bitcast=True)`, a module constant
        Invalid(
            """
import triton
import triton.language as tl

FP8 = tl.float8e4nv

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK))
    a = v.to(tl.uint8, bitcast=True).to(tl.float8e4nv, bitcast=True)
    b = tl.cast(v, tl.float8e5, bitcast=True)
    c = v.to(FP8, bitcast=True)
    tl.store(o + tl.arange(0, BLOCK), a.to(tl.uint8, bitcast=True))
""",
            rows=[10, 11, 12],
        ),
        # a dtype held in a local and in a constexpr the launch binds
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, o, N, BLOCK: tl.constexpr, ACC: tl.constexpr):
    dt = tl.float64
    acc = tl.zeros([BLOCK], dtype=dt)
    z = tl.full([BLOCK], 0, dtype=ACC)
    tl.store(o + tl.arange(0, BLOCK), (acc + z).to(tl.float32))

def launch(x, o, n):
    k[(1,)](x, o, n, BLOCK=128, ACC=tl.float64)
""",
            rows=[8, 9],
        ),
        # the other side of the SoC test compiles on A2/A3
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, o, BLOCK: tl.constexpr, IS_A5: tl.constexpr):
    bits = tl.load(x + tl.arange(0, BLOCK))
    if not IS_A5:
        v = bits.to(tl.float8e5, bitcast=True).to(tl.float32)
    else:
        v = bits.to(tl.float32)
    tl.store(o + tl.arange(0, BLOCK), v)
""",
            rows=[9],
        ),
    ]
