"""ASC029 mixed-base-pointer: one pointer value chosen at run time between two tensors.

Where a kernel chooses a pointer between tensors (a `tl.where` or conditional
expression with arms from different pointer parameters, a local assigned different
tensors on the two sides of a runtime `if`) is the index's (`index.accesses`); the
rule words the message.
"""

from __future__ import annotations

from collections.abc import Iterator

from ascend_lint.diagnostics import cite
from ascend_lint.index.accesses import PointerChoice
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


def _bases(side: frozenset[str]) -> str:
    names = sorted(side)
    return " or ".join(f"`{n}`" for n in names)


class MixedBasePointer(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            for choice in index.accesses.pointer_choices(fn):
                if not index.tiles.compiled_by_some_launch(fn, choice.stmt):
                    continue  # under a flag every launch in the module turns off
                cited = (choice.access.call,) if choice.how == "if" and choice.access else ()
                yield Finding(choice.node, self._message(choice), related=cited)

    @staticmethod
    def _message(choice: PointerChoice) -> str:
        sides = " and ".join(_bases(s) for s in choice.bases)
        tail = (
            "triton-ascend cannot tell which tensor the access addresses and rejects the "
            "kernel (`ptr type from different source not supported`; 3.2.0's adapter "
            "aborts); load from each tensor and select the loaded values, or split the "
            "kernel by a compile-time flag"
        )
        if choice.how == "if":
            assert choice.name is not None and choice.access is not None
            return (
                f"`{choice.name}` points into {sides} depending on this runtime `if`, and "
                f"the {choice.access.kind} at {cite(0)} goes through it: {tail}"
            )
        what = "`tl.where`" if choice.how == "where" else "conditional expression"
        return f"this {what} chooses a pointer into {sides} at run time: {tail}"

    VALID = [
        # select the loaded values, not the pointers
        """
import triton
import triton.language as tl

@triton.jit
def blend(a, b, out, n, split, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    va = tl.load(a + offs, mask=mask & (offs < split))
    vb = tl.load(b + offs, mask=mask & (offs >= split))
    tl.store(out + offs, tl.where(offs < split, va, vb), mask=mask)
""",
        # a compile-time flag picks the tensor: one side is compiled
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, out, USE_Y: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if USE_Y:
        src = y
    else:
        src = x
    tl.store(out + offs, tl.load(src + offs))
""",
        # both arms offset the same tensor
        """
import triton
import triton.language as tl

@triton.jit
def k(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.where(offs < n, x + offs, x + n)
    tl.store(out + offs, tl.load(p))
""",
        # a conditional expression on `is None` is decided at compile time
        """
import triton
import triton.language as tl

@triton.jit
def k(x, bias, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = x if bias is None else bias
    tl.store(out + offs, tl.load(src + offs))
""",
        # a runtime `if` that loads from each tensor on its own side
        """
import triton
import triton.language as tl

@triton.jit
def k(a, b, out, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if flag > 0:
        v = tl.load(a + offs)
    else:
        v = tl.load(b + offs)
    tl.store(out + offs, v)
""",
        # a `tl.where` between data values of two tensors, not pointers
        """
import triton
import triton.language as tl

@triton.jit
def k(a, b, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(a + offs)
    y = tl.load(b + offs)
    tl.store(out + offs, tl.where(offs < n, x, y))
""",
        # distinct output buffers written on the two sides of a runtime branch
        """
import triton
import triton.language as tl

@triton.jit
def k(x, out_even, out_odd, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    if pid % 2 == 0:
        tl.store(out_even + offs, v)
    else:
        tl.store(out_odd + offs, v)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def blend(a, b, out, n, split, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = tl.where(offs < split, a + offs, b + offs)
    tl.store(out + offs, tl.load(src, mask=offs < n), mask=offs < n)
""",
            rows=[8],
        ),
        # a base chosen by a runtime `if`, offset after it
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(cache_a, cache_b, out, layer, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if layer % 2 == 0:
        base = cache_a
    else:
        base = cache_b
    p = base + offs
    tl.store(out + offs, tl.load(p))
""",
            rows=[8],
        ),
        # a pointer parameter rebound on one side only: the other path keeps the argument
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(a, b, out, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if flag > 0:
        a = b
    tl.store(out + offs, tl.load(a + offs))
""",
            rows=[8],
        ),
        # a conditional expression on a runtime value, the store side
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, out_a, out_b, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    dst = out_a if flag > 0 else out_b
    tl.store(dst + offs, tl.load(x + offs))
""",
            rows=[8],
        ),
    ]
