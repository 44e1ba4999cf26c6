"""ASC017 unsupported-dtype: float64 and fp8 dtypes in a kernel."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index import LANGUAGE, is_literal
from ascend_lint.index.syntax import all_params, walk
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


_CONSTEXPR = f"{LANGUAGE}.constexpr"


class UnsupportedDtype(Rule):
    code = "ASC017"
    name = "unsupported-dtype"
    summary = "`tl.float64` or an fp8 dtype in a kernel: rejected by triton-ascend except on 910_95"
    reference = "reference_kernels/core_grid.py::rms_norm_fwd_kernel"

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        resolve = ctx.index.aliases.resolve
        for fn in ctx.index.kernels:
            found = [n for n in fn.dtype_mentions if resolve(n) in UNSUPPORTED]
            for arg in all_params(fn.node.args):
                if arg.annotation is not None:
                    found += [n for n in walk(arg.annotation) if resolve(n) in UNSUPPORTED]
            if not found:
                continue
            # A comparison with a dtype (`x.dtype == tl.float64`, `== tl.constexpr(...)`)
            # dispatches at compile time, and a bitcast (`x.to(tl.float8e5, bitcast=True)`)
            # reinterprets bits without the conversion triton-ascend rejects: neither
            # converts a value to that type.
            exempt = set()
            for node in fn.compares:
                for operand in (node.left, *node.comparators):
                    exempt.add(id(operand))
                    if isinstance(operand, ast.Call) and resolve(operand.func) == _CONSTEXPR:
                        exempt.update(id(a) for a in operand.args)
            for call, _stmt in fn.calls:
                if any(kw.arg == "bitcast" and is_literal(kw.value, True) for kw in call.keywords):
                    exempt.update(id(a) for a in call.args)
                    exempt.update(id(kw.value) for kw in call.keywords)
            for node in sorted(found, key=lambda n: (n.lineno, n.col_offset)):
                if id(node) in exempt:
                    continue
                name = resolve(node).rsplit(".", 1)[1]
                yield Finding(
                    node,
                    f"`{name}` is not supported by triton-ascend on A2/A3 "
                    f'("[fp8, fp64] is unsupported on Ascend"); use float32 (or bf16/fp16)',
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
    bits = v.to(tl.int8).to(tl.float8e5, bitcast=True)
    tl.store(o + tl.arange(0, BLOCK), acc + v)

def host(x):
    # float64 on the host is fine: reference results in double precision
    return x.to(torch.float64).sum()
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
    ]
