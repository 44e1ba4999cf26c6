"""ASC030 aliased-pointer-args: one tensor passed to two pointer parameters of a launch,
where the kernel writes through one and then reads or writes through the other.

Which arguments are one tensor and what the kernel does through each parameter, in
program order, are the index's (`index.storage`). The rule looks for a write through
one of two aliased parameters followed by a read through the other (or two writes) and
words the message.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from ascend_lint.diagnostics import cite
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class AliasedPointerArgs(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        storage = index.storage
        for binding in index.launches:
            accesses = storage.accesses(binding.callee)
            if not accesses:
                continue
            by_param: dict[str, list] = {}
            for access in accesses:
                by_param.setdefault(access.param, []).append(access)
            pointers = [p for p in binding.callee.params if p in by_param]
            for first, second in combinations(pointers, 2):
                if not any(a.writes for a in (*by_param[first], *by_param[second])):
                    continue  # two parameters only read: nothing to order
                a_args, b_args = binding.args.get(first, ()), binding.args.get(second, ())
                tensor = next(
                    (
                        t
                        for a in a_args
                        for b in b_args
                        if (t := storage.same_tensor(a, b, binding.host)) is not None
                    ),
                    None,
                )
                if tensor is None:
                    continue
                hazard = self._hazard(storage, binding.callee, by_param[first], by_param[second])
                if hazard is None:
                    continue
                write, then = hazard
                what = "reads it back" if not then.writes else "writes it again"
                if then.kind == "atomic":
                    what = "updates it atomically"
                yield Finding(
                    binding.call.func,
                    f"`{tensor}` is passed as both `{first}` and `{second}` of "
                    f"`{binding.callee.name}`, which writes through `{write.param}` "
                    f"({cite(0)}) and then {what} through `{then.param}` "
                    f"({cite(1)}): triton-ascend compiles pointer arguments as "
                    "distinct memory, so nothing orders the second access after the first "
                    "and the result depends on scheduling; pass a separate output tensor, "
                    "or read and write through one parameter",
                    related=(write.node, then.node),
                )
                break

    @staticmethod
    def _hazard(storage, kernel, xs: list, ys: list):
        """(a write through one, a later read or write through the other), or None."""
        for write in (a for a in [*xs, *ys] if a.writes):
            others = ys if write in xs else xs
            for then in others:
                if storage.follows(kernel, write, then):
                    return write, then
                if then.writes and storage.follows(kernel, then, write):
                    return then, write
        return None

    VALID = [
        # in place, read before write in every iteration: the data dependence orders them
        """
import triton
import triton.language as tl

@triton.jit
def scale(x, y, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        o = start + tl.arange(0, BLOCK)
        v = tl.load(x + o, mask=o < n)
        tl.store(y + o, v * 2, mask=o < n)

def launch(x, cores):
    scale[(cores,)](x, x, x.numel(), BLOCK=1024)
""",
        # distinct output buffers; two different slices of one buffer
        """
import torch
import triton
import triton.language as tl

@triton.jit
def split(x, a, b, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(a + o, tl.load(x + o))
    tl.store(b + o, tl.load(x + BLOCK + o))
    r = tl.load(a + o)

def launch(x):
    out = torch.empty_like(x)
    a = torch.empty(64, device=x.device)
    split[(1,)](x, a, out, BLOCK=64)
    qk = torch.empty(2, 64, device=x.device)
    split[(1,)](x, qk[0], qk[1], BLOCK=64)
""",
        # two pointers from one base inside the kernel: one parameter, nothing aliased
        """
import triton
import triton.language as tl

@triton.jit
def shift(x, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x + BLOCK + o, tl.load(x + o))
    v = tl.load(x + BLOCK + o)

def launch(x):
    shift[(1,)](x, BLOCK=64)
""",
    ]
    INVALID = [
        # write the partial result, then read it back through the input parameter
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def renorm(x, out, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.load(x + o)
    tl.store(out + o, tl.exp(v))
    total = tl.sum(tl.load(x + o), axis=0)
    tl.store(out + o, tl.exp(v) / total)

def launch(x):
    renorm[(1,)](x, x, BLOCK=64)
""",
            rows=[14],
        ),
        # `out` is `x` on the in-place path; a view of `x` is still `x`; two outputs
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def two_outputs(x, a, b, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.load(x + o)
    tl.store(a + o, v)
    tl.store(b + o, v * 2)

def launch(x, inplace: bool):
    out = x if inplace else torch.empty_like(x)
    two_outputs[(1,)](x, out.view(-1), x, BLOCK=64)
""",
            rows=[15],
        ),
        # the aliased write happens in a helper
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def _emit(p, v, BLOCK: tl.constexpr):
    tl.store(p + tl.arange(0, BLOCK), v)

@triton.jit
def k(src, dst, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    _emit(dst, tl.load(src + o) + 1, BLOCK)
    w = tl.load(src + o)
    tl.store(dst + o, w)

def _launch(a, b):
    k[(1,)](a, b, BLOCK=32)

def op(x):
    _launch(x, x)
""",
            rows=[17],
        ),
    ]
