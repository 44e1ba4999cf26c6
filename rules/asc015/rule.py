"""ASC015 gpu-only-memory-hint: PTX cache and memory-ordering hints on loads, stores and atomics."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import remove_argument
from ascend_lint.diagnostics import Applicability, Fix
from ascend_lint.index import LANGUAGE, JitFunction, KernelIndex
from ascend_lint.index.aliases import ATOMIC_OPS
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

# keyword -> its default, which is no hint at all
ACCESS_HINTS = {"cache_modifier": "", "eviction_policy": "", "volatile": False}
ACCESSES = ("load", "store")
# The atomic defaults, the only orderings Ascend's A2/A3 atomics implement.
ATOMIC_DEFAULTS = {"sem": "acq_rel", "scope": "gpu"}


class GpuOnlyMemoryHint(Rule):
    fix_applicability = Applicability.SAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        simt_only = index.host.simt_only_kernels()
        for fn in index.kernels:
            if id(fn.node) in simt_only:
                continue  # the A5 SIMT-only mode honours cache hints
            calls = [
                (call, op, ACCESS_HINTS)
                for op in ACCESSES
                for call, _ in index.calls_in(fn, f"{LANGUAGE}.{op}")
            ]
            calls += [
                (call, op, ATOMIC_DEFAULTS)
                for op in ATOMIC_OPS
                for call, _ in index.calls_in(fn, f"{LANGUAGE}.{op}")
            ]
            calls.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
            for call, op, defaults in calls:
                for kw in call.keywords:
                    if kw.arg in defaults and _is_hint(index, fn, kw.value, defaults[kw.arg]):
                        yield self._finding(ctx, call, kw, op)

    def _finding(self, ctx: RuleContext, call: ast.Call, kw: ast.keyword, op: str) -> Finding:
        edit = remove_argument(ctx.source, call, kw.arg)
        fix = Fix(Applicability.SAFE, f"Remove `{kw.arg}`", (edit,)) if edit else None
        return Finding(
            kw,
            f"`{kw.arg}=` on `tl.{op}` is a GPU memory hint that Ascend ignores; remove it",
            fix=fix,
        )

    VALID = [
        """
import triton
import triton.language as tl

@triton.jit
def k(x, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0.0, cache_modifier="", eviction_policy=None)
    tl.store(o + offs, v, mask=offs < n)
    tl.atomic_add(o, 1.0, sem="acq_rel", scope="gpu")
    tl.atomic_max(o + 1, 2.0, sem="acq_rel")
""",
        # a parameter may hold the default: only known values are reported
        """
import triton
import triton.language as tl

@triton.jit
def k(o, v, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.atomic_and(o, v, sem=SEM, scope=SCOPE)
""",
        # SIMT-only mode (A5) honours the hints
        """
import triton
import triton.language as tl

@triton.jit
def k(x, o, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o + offs, tl.load(x + offs, cache_modifier=".cg"))

def launch(x, o):
    k[(1,)](x, o, x.numel(), BLOCK=64, compile_mode="simt_only")
""",
        # host code, strings and comments are not kernels
        """
import torch
import triton

HINT = "tl.load(p, eviction_policy='evict_last')"  # eviction_policy= on GPUs

def host(x):
    return torch.load(x, volatile=True)
""",
    ]
    INVALID = [
        # the Example of ASC015.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def scatter_add_kernel(x, idx, out, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(x + offs, mask=mask, other=0.0, eviction_policy="evict_first")  # ASC015
        i = tl.load(idx + offs, mask=mask, other=0, cache_modifier=".cg")  # ASC015
        tl.atomic_add(out + i, v, mask=mask, sem="relaxed")  # ASC015
""",
            rows=[11, 12, 13],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, eviction_policy="evict_last")
    tl.store(o + offs, v, mask=offs < n, cache_modifier=".wb")
    tl.atomic_add(o, 1.0, sem="relaxed")
    tl.atomic_cas(o + 1, 0, 1, scope="cta")
""",
            rows=[8, 9, 10, 11],
        ),
        # aliases, several hints in one call, one per line
        Invalid(
            """
import triton
from triton.language import load, constexpr

@triton.jit
def k(x, BLOCK: constexpr):
    v = load(
        x,
        cache_modifier=".cg",
        volatile=True,
    )
""",
            rows=[9, 10],
        ),
    ]


def _is_hint(index: KernelIndex, fn: JitFunction, value: ast.AST, default: object) -> bool:
    """A known value (a literal or a module constant) other than the default: a value
    the kernel takes from a parameter (`sem=SEM`) may well be the default."""
    known = index.host.constant_in_kernel(fn, value)
    return (
        known is not None
        and known.value is not None  # `cache_modifier=None`: no hint either
        and not (type(known.value) is type(default) and known.value == default)
    )
