"""ASC002 stale-pointer-math: [B, T, HV] pointer math on a tensor stored [B, HV, T]."""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator

from ascend_lint.diagnostics import Applicability
from ascend_lint.index import (
    JitFunction,
    additive_terms,
    factors,
    is_head_count,
    is_length,
    is_literal,
    names_in,
    own_nodes,
    pointer_names,
    pointer_root,
)
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules._layout import (
    MAKE_BLOCK_PTR,
    block_ptr_arg,
    length_name,
    one_d_stride,
    transposed_fix,
)


def legacy_term(expr: ast.AST, whole_rows: Collection[str] = ()) -> ast.AST | None:
    """A summand scaled by a head count but by no sequence length: `bos * HV`, `idx * HV`.
    A factor in `whole_rows` (`all = B * T`) counts whole planes like a length does."""
    for term in additive_terms(expr):
        names = {f.id for f in factors(term) if isinstance(f, ast.Name)}
        if (
            any(is_head_count(n) for n in names)
            and not any(is_length(n) or n in whole_rows for n in names)
            and len(factors(term)) > 1
        ):
            return term
    return None


class StalePointerMath(Rule):
    code = "ASC002"
    name = "stale-pointer-math"
    summary = (
        "legacy [B, T, HV] pointer math applied to a tensor the host stored transposed [B, HV, T]"
    )
    supersedes = frozenset({"ASC001"})
    reference = "reference_kernels/chunk_o.py::chunk_fwd_kernel_o"
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            transposed = index.layout.transposed_params(fn)
            launched_pointers = pointer_names(fn, transposed) if transposed else set()
            for stmt in fn.statements:
                branch = index.layout.contig_branch(fn, stmt)
                if branch and not branch.contig_side:
                    continue  # the legacy side of a contig flag: the layout is the old one there
                pointers = set(launched_pointers)
                if branch:
                    pointers |= pointer_names(fn, set(branch.tensors))
                if pointers:
                    yield from self._check_statement(fn, stmt, pointers, ctx)

    def _check_statement(
        self, fn: JitFunction, stmt: ast.stmt, pointers: set[str], ctx: RuleContext
    ) -> Iterator[Finding]:
        if (
            isinstance(stmt, ast.AugAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id in pointers
        ):
            term = legacy_term(stmt.value, ctx.index.gates.whole_row_counts(fn))
            if term is not None:
                fix = transposed_fix(ctx, fn, stmt.value, None, None, length_name(fn))
                yield Finding(stmt, self._message(stmt.target.id, term), fix=fix)
                return
        for call in (c for c in own_nodes(stmt) if isinstance(c, ast.Call)):
            if ctx.index.aliases.resolve(call.func) != MAKE_BLOCK_PTR:
                continue
            base = block_ptr_arg(call, "base")
            if base is None or not (names_in(base) & pointers):
                continue
            stride = one_d_stride(call)
            term = legacy_term(base, ctx.index.gates.whole_row_counts(fn))
            if term is not None or (stride is not None and not is_literal(stride, 1)):
                shown = term if term is not None else stride
                root = pointer_root(base)
                fix = transposed_fix(ctx, fn, base, root, stride, length_name(fn, call))
                yield Finding(
                    call, self._message(sorted(names_in(base) & pointers)[0], shown), fix=fix
                )
                return
        for node in own_nodes(stmt):
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Add)
                and names_in(node) & pointers
            ):
                heads = [
                    t for t in additive_terms(node) if isinstance(t, ast.Name) and t.id in pointers
                ]
                term = legacy_term(node, ctx.index.gates.whole_row_counts(fn))
                if heads and term is not None:
                    fix = transposed_fix(ctx, fn, node, heads[0].id, None, length_name(fn))
                    yield Finding(node, self._message(heads[0].id, term), fix=fix)
                    return

    @staticmethod
    def _message(pointer: str, term: ast.AST) -> str:
        return (
            f"`{pointer}` is stored transposed [B, HV, T] but indexed with [B, T, HV] math "
            f"(`{ast.unparse(term)}`); use `i_h * T_seq` for the head and stride 1 along time"
        )

    VALID = [
        # legacy math kept in the else branch of the contig flag
        """
import triton
import triton.language as tl

@triton.jit
def k(g, bos, T, T_seq, HV: tl.constexpr, BT: tl.constexpr, G_T_CONTIG: tl.constexpr):
    i_h = tl.program_id(1)
    if G_T_CONTIG:
        p_g = tl.make_block_ptr(g + bos + i_h * T_seq, (T,), (1,), (0,), (BT,), (0,))
    else:
        p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (0,), (BT,), (0,))
""",
        # a transposed view without .contiguous() keeps the old storage
        """
import triton
import triton.language as tl

@triton.jit
def k(g, T, HV: tl.constexpr, BT: tl.constexpr):
    i_h = tl.program_id(1)
    p_g = tl.make_block_ptr(g + i_h, (T,), (HV,), (0,), (BT,), (0,))

def launch(g, T, HV):
    k[(1, HV)](g.transpose(1, 2), T, HV=HV, BT=64)
""",
    ]
    INVALID = [
        # through a helper that receives the flag under a name of its own
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def gate_ptr(x, bos, i_h, T, HV: tl.constexpr, BT: tl.constexpr, TRANSPOSED: tl.constexpr):
    if TRANSPOSED:
        return tl.make_block_ptr(x + bos * HV + i_h, (T,), (1,), (0,), (BT,), (0,))
    return tl.make_block_ptr(x + bos * HV + i_h, (T,), (HV,), (0,), (BT,), (0,))

@triton.jit
def k(g, bos, T, HV: tl.constexpr, BT: tl.constexpr, G_T_CONTIG: tl.constexpr):
    i_h = tl.program_id(1)
    p_g = gate_ptr(g, bos, i_h, T, HV, BT, G_T_CONTIG)
""",
            rows=[8],
        ),
        # a kernel that is a staticmethod, launched through `self`
        Invalid(
            """
import triton
import triton.language as tl

class Gate:
    @staticmethod
    @triton.jit
    def _kernel(g, bos, T, HV: tl.constexpr, BT: tl.constexpr):
        i_h = tl.program_id(1)
        p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (0,), (BT,), (0,))

    def forward(self, g, bos):
        B, T, HV = g.shape
        self._kernel[(1, HV)](g.transpose(1, 2).contiguous(), bos, T, HV=HV, BT=64)
""",
            rows=[10],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, bos, T, HV: tl.constexpr, BT: tl.constexpr):
    i_h = tl.program_id(1)
    g += bos * HV + i_h
    p_g = tl.make_block_ptr(g, (T,), (HV,), (0,), (BT,), (0,))

def launch(g, bos, T, HV):
    g_t = g.transpose(1, 2).contiguous()
    k[(1, HV)](g_t, bos, T, HV=HV, BT=64)
""",
            rows=[8, 9],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, bos, T, HV: tl.constexpr, BT: tl.constexpr, G_T_CONTIG: tl.constexpr):
    i_h = tl.program_id(1)
    if G_T_CONTIG:
        p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (1,), (0,), (BT,), (0,))
""",
            rows=[9],
        ),
    ]
