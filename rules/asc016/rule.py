"""ASC016 dot-precision-option: `tl.dot` precision options that triton-ascend 3.2 rejects."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import append_after, node_text, remove_argument, replace_node
from ascend_lint.diagnostics import Applicability, Fix
from ascend_lint.index import LANGUAGE, JitFunction, KernelIndex
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

TF32 = ("tf32", "tf32x3")
HALF_OUTPUTS = {f"{LANGUAGE}.bfloat16": "bfloat16", f"{LANGUAGE}.float16": "float16"}
_FLOAT32 = f"{LANGUAGE}.float32"


class DotPrecisionOption(Rule):
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            for call, _stmt in index.calls_in(fn, f"{LANGUAGE}.dot"):
                keywords = {kw.arg: kw for kw in call.keywords if kw.arg}
                precision = _precision(index, fn, call, keywords)
                allow = keywords.get("allow_tf32")
                if allow is not None and _constant(index, fn, allow.value) is True:
                    if "input_precision" in keywords:
                        edit = remove_argument(ctx.source, call, "allow_tf32")
                        message = "Remove `allow_tf32`"
                    else:
                        edit = replace_node(ctx.source, allow, f'input_precision="{precision}"')
                        message = f'Use `input_precision="{precision}"`'
                    yield Finding(
                        allow,
                        f"`allow_tf32=True` is rejected by triton-ascend 3.2 (tf32 does not exist "
                        f'on Ascend); use `input_precision="{precision}"`',
                        fix=Fix(Applicability.UNSAFE, message, (edit,)) if edit else None,
                    )
                chosen = keywords.get("input_precision")
                if chosen is not None:
                    value = _constant(index, fn, chosen.value)
                    if value in TF32:
                        edit = replace_node(ctx.source, chosen.value, f'"{precision}"')
                        yield Finding(
                            chosen,
                            f'`input_precision="{value}"` is rejected by triton-ascend 3.2; use '
                            f'`input_precision="{precision}"`',
                            fix=Fix(Applicability.UNSAFE, f'Use `"{precision}"`', (edit,)),
                        )
                out = keywords.get("out_dtype")
                if out is not None and index.aliases.resolve(out.value) in HALF_OUTPUTS:
                    yield self._out_dtype(ctx, call, out)

    def _out_dtype(self, ctx: RuleContext, call: ast.Call, out: ast.keyword) -> Finding:
        dtype = HALF_OUTPUTS[ctx.index.aliases.resolve(out.value)]
        fix = None
        # With an accumulator the result keeps the accumulator's type: no cast to add.
        if len(call.args) < 3 and not any(kw.arg == "acc" for kw in call.keywords):
            removal = remove_argument(ctx.source, call, "out_dtype")
            if removal is not None:
                cast = append_after(ctx.source, call, f".to({node_text(ctx.source, out.value)})")
                fix = Fix(
                    Applicability.UNSAFE,
                    f"Accumulate in float32 and cast the result to {dtype}",
                    (removal, cast),
                )
        return Finding(
            out,
            f"`out_dtype={dtype}` on `tl.dot` is not supported by triton-ascend 3.2; accumulate "
            f"in float32 and cast the result with `.to(...)`",
            fix=fix,
        )

    VALID = [
        """
import triton
import triton.language as tl

PRECISION = "ieee"

@triton.jit
def k(a, b, o, BM: tl.constexpr):
    x = tl.load(a + tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :])
    y = tl.load(b + tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :])
    acc = tl.dot(x, y, input_precision="ieee")
    acc += tl.dot(x, y, allow_tf32=False)
    acc += tl.dot(x, y, input_precision=PRECISION, out_dtype=tl.float32)
    acc += tl.dot(x.to(tl.float32), y.to(tl.float32), input_precision="hf32")
    tl.store(o + tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :], acc)
""",
        # host-side torch matmul flags and strings are not kernel code
        """
import torch
import triton

torch.backends.cuda.matmul.allow_tf32 = True
DOC = 'tl.dot(a, b, input_precision="tf32")'

def host(a, b):
    return torch.matmul(a, b, out_dtype=torch.float16)
""",
    ]
    INVALID = [
        # the Example of ASC016.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a, b, c, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, K)
    x = tl.load(a + offs_m[:, None] * K + offs_k[None, :], mask=offs_m[:, None] < M, other=0.0)
    y = tl.load(b + offs_k[:, None] * N + offs_n[None, :], mask=offs_n[None, :] < N, other=0.0)
    acc = tl.dot(x, y, allow_tf32=True, out_dtype=tl.float16)  # ASC016 (twice)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c + offs_m[:, None] * N + offs_n[None, :], acc, mask=mask)
""",
            rows=[13, 13],
        ),
        Invalid(
            """
import triton
import triton.language as tl

PREC = "tf32"

@triton.jit
def k(a, b, o, BM: tl.constexpr):
    x = tl.load(a + tl.arange(0, BM))
    y = tl.load(b + tl.arange(0, BM))
    acc = tl.dot(x, y, allow_tf32=True)
    acc += tl.dot(x, y, input_precision="tf32x3")
    acc += tl.dot(x, y, input_precision=PREC)
    h = tl.dot(x, y, out_dtype=tl.bfloat16)
    tl.store(o, acc)
""",
            rows=[11, 12, 13, 14],
        ),
        # `from triton.language import float16`; fp32 operands known from their casts
        Invalid(
            """
import triton
from triton.language import dot, float16, float32, load

@triton.jit
def k(a, b, o):
    x = load(a).to(float32)
    y = load(b).to(float32)
    acc = dot(x, y, allow_tf32=True)
    h = dot(load(a), load(b), out_dtype=float16)
""",
            rows=[9, 10],
        ),
    ]


def _constant(index: KernelIndex, fn: JitFunction, node: ast.AST) -> object:
    known = index.host.constant_in_kernel(fn, node)
    return None if known is None else known.value


def _precision(
    index: KernelIndex, fn: JitFunction, call: ast.Call, keywords: dict[str, ast.keyword]
) -> str:
    """ "hf32" (Ascend's fast fp32 mode) when both operands are known to be float32,
    otherwise "ieee"."""
    operands = list(call.args[:2])
    operands += [keywords[k].value for k in ("input", "other") if k in keywords]
    if len(operands) == 2 and all(_is_fp32(index, fn, v) for v in operands):
        return "hf32"
    return "ieee"


def _is_fp32(index: KernelIndex, fn: JitFunction, expr: ast.AST, depth: int = 0) -> bool:
    """A cast to float32 (`x.to(tl.float32)`, `tl.cast(x, tl.float32)`), or a local
    every assignment of which is one."""
    resolve = index.aliases.resolve
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "to" and expr.args:
            return resolve(expr.args[0]) == _FLOAT32
        if resolve(expr.func) == f"{LANGUAGE}.cast" and len(expr.args) >= 2:
            return resolve(expr.args[1]) == _FLOAT32
        return False
    if isinstance(expr, ast.Name) and depth < 4:
        values = fn.assignments.get(expr.id, [])
        return bool(values) and all(_is_fp32(index, fn, v, depth + 1) for v in values)
    return False
