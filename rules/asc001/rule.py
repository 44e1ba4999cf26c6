"""ASC001 strided-time-gather: 1-D loads/stores along time with a non-unit stride."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.diagnostics import Applicability
from ascend_lint.index import (
    LANGUAGE,
    JitFunction,
    KernelIndex,
    additive_terms,
    factors,
    names_in,
    pointer_root,
)
from ascend_lint.index.sequences import Sequences, address_terms, broadcasts
from ascend_lint.index.strides import NON_UNIT
from ascend_lint.index.syntax import frozen_names
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules._layout import (
    MAKE_BLOCK_PTR,
    block_ptr_arg,
    length_name,
    one_d_stride,
    transposed_fix,
)
from ascend_lint.rules.asc001.fix import gate_contig_fix

_ACCESSES = (f"{LANGUAGE}.load", f"{LANGUAGE}.store")


def _block_along_time(call: ast.Call, stride: ast.AST, seq: Sequences) -> bool:
    """A 1-D block over a sequence length, or placed at a token offset scaled by its own
    stride (`g + bos * HV + i_h` with strides `(HV,)`)."""
    shape = block_ptr_arg(call, "shape")
    if isinstance(shape, (ast.Tuple, ast.List)) and shape.elts:
        if names_in(shape.elts[0]) & seq.lengths:
            return True
    base = block_ptr_arg(call, "base")
    if base is None:
        return False
    shown = ast.unparse(stride)
    for term in additive_terms(base):
        parts = factors(term)
        if any(ast.unparse(p) == shown for p in parts) and any(
            names_in(p) & seq.token_offsets for p in parts
        ):
            return True
    return False


def _product(parts: list[ast.AST]) -> ast.AST:
    expr = parts[0]
    for part in parts[1:]:
        expr = ast.BinOp(expr, ast.Mult(), part)
    return expr


def _documented_fallback(index: KernelIndex, fn: JitFunction, stmt: ast.stmt) -> bool:
    """The legacy side of a `*_T_CONTIG` flag that launchers select only when the stride
    is 1 anyway (`G_T_CONTIG=HV != 1`)."""
    branch = index.layout.contig_branch(fn, stmt)
    return bool(
        branch
        and not branch.contig_side
        and index.layout.flag_selects_fallback_only_for_one_head(branch.flag)
    )


class StridedTimeGather(Rule):
    # Unsafe where the gate rewrite applies (kernel, helpers and launcher in one file),
    # else a display-only suggestion.
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        fixes: dict = {}  # one gate rewrite per (kernel, gate), however many findings
        for fn in index.kernels:
            yield from self._block_gathers(fn, ctx, fixes)
            yield from self._vector_gathers(fn, ctx, fixes)

    def _block_gathers(self, fn: JitFunction, ctx: RuleContext, fixes: dict) -> Iterator[Finding]:
        index = ctx.index
        for call, stmt in index.calls_in(fn, MAKE_BLOCK_PTR):
            stride = one_d_stride(call)
            if stride is None:
                continue
            evidence = index.strides.stride_of(fn, stride)
            if evidence.kind != NON_UNIT:
                continue
            if not _block_along_time(call, stride, index.sequences.of(fn)):
                continue
            if _documented_fallback(index, fn, stmt):
                continue
            base = block_ptr_arg(call, "base")
            root = pointer_root(base) if base is not None else None
            fix = gate_contig_fix(index, ctx.source, fn, root, fixes) if root else None
            if fix is None and base is not None:
                # Display-only: the kernel side alone is only right together with the
                # host-side transpose, which only the gate rewrite above makes.
                fix = transposed_fix(
                    ctx,
                    fn,
                    base,
                    pointer_root(base),
                    stride,
                    length_name(fn, call),
                    Applicability.DISPLAY_ONLY,
                )
            yield Finding(
                call,
                f"1-D block pointer along time with stride `{ast.unparse(stride)}` "
                f"({evidence.why}) is a DMA gather; transpose the tensor on the host "
                "and load with stride `(1,)`",
                fix=fix,
            )

    def _vector_gathers(self, fn: JitFunction, ctx: RuleContext, fixes: dict) -> Iterator[Finding]:
        index = ctx.index
        vectors = index.sequences.vector_locals(fn)
        if not vectors:
            return  # no `tl.arange` vector reaches this function
        accesses = [
            (call, stmt)
            for qual in _ACCESSES
            for call, stmt in index.calls_in(fn, qual)
            if call.args and frozen_names(call.args[0]) & vectors and not broadcasts(call.args[0])
        ]
        if not accesses:
            return  # no 1-D vector access: the sequence facts are not needed
        seq = index.sequences.of(fn)
        if not seq.time_vectors:
            return
        keep = seq.time_vectors | seq.token_offsets | seq.lengths
        pointers = index.values.of(fn).pointers
        for call, stmt in accesses:
            if _documented_fallback(index, fn, stmt):
                continue
            followed: list[ast.AST] = []  # the locals' values: where else it is written
            terms = address_terms(call.args[0], fn, index.aliases, keep, followed=followed)
            if any(broadcasts(f) for term in terms for f in term):
                continue  # a 2-D tile: one of its dimensions has unit stride
            for term in terms:
                time = [f for f in term if isinstance(f, ast.Name) and f.id in seq.time_vectors]
                rest = [f for f in term if f not in time]
                if not time or not rest:
                    continue
                stride = _product(rest)
                evidence = index.strides.stride_of(fn, stride)
                if evidence.kind == NON_UNIT:
                    yield Finding(
                        call,
                        f"vector access over the time vector `{time[0].id}` with stride "
                        f"`{ast.unparse(stride)}` ({evidence.why}) is a gather; use a "
                        "time-contiguous layout",
                        fix=self._gate_fix(ctx, fn, call, fixes),
                        also_at=tuple(v for v in followed if pointer_root(v) in pointers),
                    )
                    break

    @staticmethod
    def _gate_fix(ctx: RuleContext, fn: JitFunction, call: ast.Call, fixes: dict):
        root = pointer_root(call.args[0])
        return gate_contig_fix(ctx.index, ctx.source, fn, root, fixes) if root else None

    VALID = [
        # 2-D block pointer with a unit-stride dimension
        """
import triton
import triton.language as tl

@triton.jit
def k(q, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    i_t = tl.program_id(0)
    p_q = tl.make_block_ptr(q, (T, K), (H * K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
    b_q = tl.load(p_q, boundary_check=(0, 1))
""",
        # stride-1 gate load from a transposed [B, HV, T] gate
        """
import triton
import triton.language as tl

@triton.jit
def k(g, T, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p_g = tl.make_block_ptr(g, (T,), (1,), (i_t * BT,), (BT,), (0,))
    b_g = tl.load(p_g, boundary_check=(0,))
""",
        # the legacy fallback selected only when HV == 1
        """
import triton
import triton.language as tl

@triton.jit
def k(g, T, HV: tl.constexpr, BT: tl.constexpr, G_T_CONTIG: tl.constexpr):
    i_t = tl.program_id(0)
    if G_T_CONTIG:
        p_g = tl.make_block_ptr(g, (T,), (1,), (i_t * BT,), (BT,), (0,))
    else:
        p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))

def launch(g, T, HV):
    k[(1,)](g.transpose(1, 2).contiguous() if HV != 1 else g, T, HV=HV, BT=64, G_T_CONTIG=HV != 1)
""",
        # a vector over K with a stride is not a time gather
        """
import triton
import triton.language as tl

@triton.jit
def k(x, K: tl.constexpr, BK: tl.constexpr):
    o_k = tl.arange(0, BK)
    b_x = tl.load(x + o_k * K)
""",
        # a bare stride argument is no evidence: Triton specialises a stride equal to 1
        """
import triton
import triton.language as tl

@triton.jit
def k(x, seq_len, stride_t, BLOCK_T: tl.constexpr):
    o_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    b_x = tl.load(x + o_t * stride_t, mask=o_t < seq_len)
""",
        # the launcher binds the innermost stride (or the only one of a 1-D tensor)
        """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, mean, cu_seqlens, stride_x, stride_m, BLOCK: tl.constexpr):
    i_n = tl.program_id(0)
    bos, eos = tl.load(cu_seqlens + i_n), tl.load(cu_seqlens + i_n + 1)
    o = bos + tl.arange(0, BLOCK)
    b = tl.load(x + o * stride_x, mask=o < eos)
    tl.store(mean + o * stride_m, b, mask=o < eos)

def launch(x, cu_seqlens):
    mean = torch.empty(x.shape[0])
    k[(len(cu_seqlens) - 1,)](x, mean, cu_seqlens, x.stride(-1), mean.stride(0), BLOCK=64)
""",
        # a vector over rows of a matrix, with a stride the launcher shows to be 1
        """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, out, n_rows, stride_row, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(out + rows * stride_row, tl.load(x + rows), mask=rows < n_rows)

def launch(x):
    out = torch.empty(x.shape[0])
    k[(4,)](x, out, x.shape[0], out.stride(0), BLOCK_M=64)
""",
        # a vector over top-k slots with a literal stride is not along time
        """
import triton
import triton.language as tl

@triton.jit
def k(idx, out, max_topk, BLOCK_K: tl.constexpr):
    slot = tl.arange(0, BLOCK_K)
    b = tl.load(idx + slot * 2, mask=slot < max_topk, other=-1)
    tl.store(out + slot, b)
""",
    ]
    INVALID = [
        # the Example of ASC001.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def gate_kernel(g, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    bos = i_b * T
    p_g = tl.make_block_ptr(g + bos * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))  # ASC001
    b_g = tl.load(p_g, boundary_check=(0,))
    o_t = i_t * BT + tl.arange(0, BT)
    b_g2 = tl.load(g + bos * HV + o_t * HV + i_h, mask=o_t < T)  # ASC001


def launch(g, BT=64):
    B, T, HV = g.shape
    gate_kernel[(triton.cdiv(T, BT), B * HV)](g, T, HV=HV, BT=BT)
""",
            rows=[11, 14],
        ),
        # kernel and launcher in one file: the unsafe fix moves both to the stride-1 layout
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    bos = tl.load(cu_seqlens + i_n)
    eos = tl.load(cu_seqlens + i_n + 1)
    T = eos - bos
    g += bos * HV + i_h
    b_g = tl.load(tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,)), boundary_check=(0,))

def launch(g, cu_seqlens):
    B, T, HV = g.shape
    k[(4, HV)](g, cu_seqlens, T, HV=HV, BT=64)
""",
            rows=[13],
        ),
        # the stride is a head count: the kernel splits a program index by it
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    p_g = tl.make_block_ptr(g + i_b * T * HV + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    b_g = tl.load(p_g, boundary_check=(0,))
""",
            rows=[9],
        ),
        # the fallback is real when the launcher can pick it with many heads
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, T, HV: tl.constexpr, BT: tl.constexpr, G_T_CONTIG: tl.constexpr):
    if G_T_CONTIG:
        p_g = tl.make_block_ptr(g, (T,), (1,), (0,), (BT,), (0,))
    else:
        p_g = tl.make_block_ptr(g, (T,), (HV,), (0,), (BT,), (0,))

def launch(g, T):
    B, T, HV = g.shape
    k[(1,)](g, T, HV=HV, BT=64, G_T_CONTIG=T > 4096)
""",
            rows=[10],
        ),
        # a vector gather over the time axis; the stride is a literal
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, cu_seqlens, BT: tl.constexpr):
    i_t, i_n = tl.program_id(0), tl.program_id(1)
    bos, eos = tl.load(cu_seqlens + i_n), tl.load(cu_seqlens + i_n + 1)
    o_t = i_t * BT + tl.arange(0, BT)
    b_g = tl.load(g + (bos + o_t) * 4 + 1, mask=o_t < eos - bos)
""",
            rows=[10],
        ),
        # the pointer is built in a local and loaded later; the launcher binds an outer stride
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def k(g, seq_offsets, stride_t, BT: tl.constexpr):
    i_t, i_n = tl.program_id(0), tl.program_id(1)
    start = tl.load(seq_offsets + i_n)
    end = tl.load(seq_offsets + i_n + 1)
    o_t = start + i_t * BT + tl.arange(0, BT)
    p_g = g + o_t * stride_t
    b_g = tl.load(p_g, mask=o_t < end)

def launch(g, seq_offsets):
    g2 = g.view(-1, 8)
    k[(4, 2)](g2, seq_offsets, g2.stride(0), BT=64)
""",
            rows=[13],
        ),
        # a helper handed the time vector by its caller gathers with it
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def _scaled(row, o_t, m_t, HV: tl.constexpr):
    return tl.load(row + o_t * HV, mask=m_t, other=0.0) * 2

@triton.jit
def k(g, cu_seqlens, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    bos, eos = tl.load(cu_seqlens + i_n), tl.load(cu_seqlens + i_n + 1)
    o_t = i_t * BT + tl.arange(0, BT)
    b_g = _scaled(g + bos * HV + i_h, o_t, o_t < eos - bos, HV)
""",
            rows=[7],
        ),
    ]
