"""ASC002 stale-pointer-math: [B, T, HV] pointer math on a tensor stored [B, HV, T]."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.diagnostics import Applicability
from ascend_lint.index import (
    JitFunction,
    additive_terms,
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


class StalePointerMath(Rule):
    supersedes = frozenset({"ASC001"})
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
        order = fn.order_of(stmt)
        if (
            isinstance(stmt, ast.AugAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id in pointers
        ):
            term = ctx.index.gates.time_math_term(fn, stmt.value, order, pointers)
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
            term = ctx.index.gates.time_math_term(fn, base, order, pointers)
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
                term = ctx.index.gates.time_math_term(fn, node, order, pointers)
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
        # a plane offset over a leading split axis: `total` counts every token on each
        # path (the packed length for varlen, B * T otherwise), the same in both layouts
        """
import triton
import triton.language as tl


@triton.jit
def k(g, dg, cu_seqlens, B, T, HV: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_k, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    T_seq = T
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        total = T
        T = eos - bos
        dg += i_k * total * HV + bos + i_h * T_seq
    else:
        bos = i_n * T
        total = B * T
        dg += i_k * total * HV + i_n * HV * T_seq + i_h * T_seq
    o_t = tl.arange(0, BT)
    tl.store(dg + o_t, tl.zeros([BT], dtype=tl.float32), mask=o_t < T)


def launch(g, cu_seqlens):
    B, T, HV = g.shape
    dg = g.new_empty(2, B, HV, T)
    k[(2, B * HV)](g, dg.transpose(-1, -2).contiguous(), cu_seqlens, B, T, HV=HV, BT=64, IS_VARLEN=cu_seqlens is not None)
""",
        # the launcher passes the row count of that plane (`B * T`)
        """
import triton
import triton.language as tl


@triton.jit
def k(dg, total, T, HV: tl.constexpr, BT: tl.constexpr):
    i_k, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    p_dg = tl.make_block_ptr(dg + i_k * total * HV + i_b * HV * T + i_h * T, (T,), (1,), (0,), (BT,), (0,))
    tl.store(p_dg, tl.zeros([BT], dtype=tl.float32), boundary_check=(0,))


def launch(x):
    B, T, HV = x.shape
    dg = x.new_empty(2, B, T, HV).transpose(-1, -2).contiguous()
    k[(2, B * HV)](dg, B * T, T, HV=HV, BT=64)
""",
        # `all = B * T` as an int64 fix writes it
        """
import triton
import triton.language as tl


@triton.jit
def k(dg, cu_seqlens, B, T, HV: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_k, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    all = tl.cast(B, tl.int64) * T
    T_seq = T
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        T = eos - bos
        dg += i_k * all * HV + bos + i_h * T_seq
    else:
        dg += i_k * all * HV + i_n * HV * T_seq + i_h * T_seq
    o_t = tl.arange(0, BT)
    tl.store(dg + o_t, tl.zeros([BT], dtype=tl.float32), mask=o_t < T)


def launch(x, cu_seqlens):
    B, T, HV = x.shape
    dg = x.new_empty(2, B, T, HV).transpose(-1, -2).contiguous()
    k[(2, B * HV)](dg, cu_seqlens, B, T, HV=HV, BT=64, IS_VARLEN=cu_seqlens is not None)
""",
    ]
    INVALID = [
        # the Example of ASC002.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def gate_kernel(g, cu_seqlens, chunk_indices, T, HV: tl.constexpr, BT: tl.constexpr):
    i_c, i_h = tl.program_id(0), tl.program_id(1)
    T_seq = T  # the packed length the tensor is stored with
    i_n, i_t = tl.load(chunk_indices + i_c * 2), tl.load(chunk_indices + i_c * 2 + 1)
    bos = tl.load(cu_seqlens + i_n)
    T = (tl.load(cu_seqlens + i_n + 1) - bos).to(tl.int32)
    g += bos * HV + i_h  # ASC002
    p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))  # ASC002 (and ASC001)
    b_g = tl.load(p_g, boundary_check=(0,))


def launch(g, cu_seqlens, chunk_indices, BT=64):
    B, T, HV = g.shape
    g_t = g.transpose(1, 2).contiguous()  # now [B, HV, T]
    gate_kernel[(chunk_indices.shape[0], HV)](g_t, cu_seqlens, chunk_indices, T, HV=HV, BT=BT)
""",
            rows=[13, 14],
        ),
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
        # a start that is a packed offset on the varlen path: time math there
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def k(dg, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_n).to(tl.int64)
    else:
        bos = i_n * T
    dg += bos * HV + i_h
    p_dg = tl.make_block_ptr(dg, (T,), (1,), (i_t * BT,), (BT,), (0,))
    tl.store(p_dg, tl.zeros([BT], dtype=tl.float32), boundary_check=(0,))


def launch(x, cu_seqlens):
    B, T, HV = x.shape
    dg = x.new_empty(B, T, HV).transpose(1, 2).contiguous()
    k[(4, B * HV)](dg, cu_seqlens, T, HV=HV, BT=64, IS_VARLEN=cu_seqlens is not None)
""",
            rows=[14],
        ),
    ]
