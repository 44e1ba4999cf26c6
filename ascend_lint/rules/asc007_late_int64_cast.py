"""ASC007 late-int64-cast: `(a * b).to(tl.int64)` multiplies in int32 first, and `.to()`
on a program id or kernel argument fails to compile where the value is a constant."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import node_span
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import (
    LANGUAGE,
    JitFunction,
    ValueFacts,
    additive_terms,
    call_name,
    factors,
    from_program_id,
    is_int64_cast,
    names_in,
)
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


def _products(expr: ast.AST) -> list[ast.BinOp]:
    """Top-level products of a sum (not those hidden inside calls such as `min()`)."""
    out = []
    for term in additive_terms(expr):
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
            out.append(term)
    return out


def _int32_product(
    product: ast.BinOp, fn: JitFunction, facts: ValueFacts, runtime: set[str]
) -> bool:
    """Both sides int32 at run time: no operand is int64 and not all are compile-time.
    Loop-derived operands count: `(global_t * HV + i_h).to(tl.int64)` in a task loop wraps
    like any other int32 product (only a bare loop variable cast is harmless)."""
    names = names_in(product)
    if names & facts.int64:
        return False  # already a 64-bit multiply
    if any(isinstance(f, ast.Call) and call_name(f.func) != "cdiv" for f in factors(product)):
        return False  # a call's result type is its own (a load, a min()); cdiv keeps int32
    return bool(names & runtime)


class LateInt64Cast(Rule):
    code = "ASC007"
    name = "late-int64-cast"
    summary = "`(a * b).to(tl.int64)` overflows in int32 before the cast; `.to()` on a program id or argument breaks when specialised"
    reference = "reference_kernels/chunk_o.py::chunk_fwd_kernel_o"
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        tl_name = next((local for local, mod in aliases.modules.items() if mod == LANGUAGE), None)
        for fn in ctx.index.kernels:
            runtime = fn.runtime_names
            for call, _stmt in fn.calls:
                if not is_int64_cast(call, aliases):
                    continue
                facts = fn.facts(aliases)  # cached; kernels without a cast never compute it
                method = isinstance(call.func, ast.Attribute) and call.func.attr == "to"
                inner = call.func.value if method else call.args[0]
                products = [p for p in _products(inner) if _int32_product(p, fn, facts, runtime)]
                if products:
                    yield Finding(
                        call,
                        f"`{ast.unparse(products[0])}` is computed in int32 and can wrap before `.to(tl.int64)`; "
                        "cast an operand first: `tl.cast(a, tl.int64) * b`",
                        fix=self._cast_operands_fix(ctx, call, products, tl_name)
                        if method
                        else None,
                    )
                elif method and self._specialisable(inner, fn, facts, _stmt, aliases):
                    yield Finding(
                        call,
                        f"`.to(tl.int64)` on `{ast.unparse(inner)}` fails to compile wherever the value "
                        "is a compile-time constant (an int argument Triton specialised); "
                        "`tl.cast(x, tl.int64)` works in every case",
                        fix=self._tl_cast_fix(ctx, call, inner, tl_name),
                    )

    @staticmethod
    def _specialisable(inner, fn: JitFunction, facts: ValueFacts, stmt: ast.stmt, aliases) -> bool:
        """A program id (directly or through the name it was just assigned to), or a runtime
        kernel argument Triton may specialise (an int equal to 1 becomes a constant)."""
        if isinstance(inner, ast.Call):
            return aliases.resolve(inner.func) == f"{LANGUAGE}.program_id"
        if not isinstance(inner, ast.Name):
            return False
        value = fn.value_before(inner.id, stmt)
        if value is not None:
            return from_program_id(value, facts.program_ids, aliases)
        return (
            inner.id in fn.params
            and inner.id not in fn.constexpr_params
            and inner.id not in fn.do_not_specialize
        )

    @staticmethod
    def _tl_cast_fix(
        ctx: RuleContext, call: ast.Call, inner: ast.AST, tl_name: str | None
    ) -> Fix | None:
        if tl_name is None:
            return None
        start, end = node_span(ctx.source, call)
        # Same value wherever the original compiled: safe.
        edit = Edit(start, end, f"{tl_name}.cast({ast.unparse(inner)}, {tl_name}.int64)")
        return Fix(Applicability.SAFE, "Use `tl.cast(x, tl.int64)`", (edit,))

    @staticmethod
    def _cast_operands_fix(
        ctx: RuleContext, call: ast.Call, products: list[ast.BinOp], tl_name: str | None
    ) -> Fix | None:
        """`(a * b + c).to(tl.int64)` -> `(tl.cast(a, tl.int64) * b + c)`: the arithmetic moves
        to int64, which changes results exactly where the int32 version wrapped (unsafe)."""
        if tl_name is None:
            return None
        source = ctx.source
        edits = []
        for product in products:
            first = factors(product)[0]
            s, e = node_span(source, first)
            text = ast.unparse(first)
            edits.append(Edit(s, e, f"{tl_name}.cast({text}, {tl_name}.int64)"))
        # Drop `.to(tl.int64)`: from the end of the receiver's closing parenthesis to the call's end.
        _, value_end = node_span(source, call.func.value)
        _, call_end = node_span(source, call)
        line = source.line(value_end.row)
        dot = line.find(".", value_end.column) if value_end.row == call_end.row else -1
        if dot < 0:
            return None
        edits.append(Edit(type(value_end)(value_end.row, dot), call_end, ""))
        return Fix(
            Applicability.UNSAFE, "Cast an operand to int64 before multiplying", tuple(edits)
        )

    VALID = [
        """
import triton
import triton.language as tl

@triton.jit
def k(h, T, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    h_base = h + (tl.cast(i_t, tl.int64) * HV + i_h) * K * V
    i_tg = tl.cast(i_t, tl.int64)
    for i in range(T):
        j = i.to(tl.int64)
        j2 = (i + 2).to(tl.int64)
    s = (i_t + i_h).to(tl.int64)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(h, T, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    h_base = h + (i_t * HV + i_h).to(tl.int64) * K * V
    bos = (i_t * T).to(tl.int64)
""",
            rows=[8, 9],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, T):
    i_t = tl.program_id(1) + 3
    i_tg = i_t.to(tl.int64)
    n = T.to(tl.int64)
""",
            rows=[8, 9],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def k(x, T):
    i_t = tl.program_id(1) + 3
    i_tg = tl.cast(i_t, tl.int64)
    n = tl.cast(T, tl.int64)
""",
        ),
    ]
