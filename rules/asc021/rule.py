"""ASC021 transposed-batch-base: the varlen row base of a transposed tensor used on the
fixed-length path, where it reads another batch's row."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import node_offsets, reindent
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import (
    JitFunction,
    additive_terms,
    factors,
    is_head_count,
    is_length,
    own_nodes,
)
from ascend_lint.index.sequences import Sequences, strip_casts
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class TransposedBatchBase(Rule):
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            transposed = index.layout.transposed_params(fn)
            if not transposed:
                continue
            seq = index.sequences.of(fn)
            if not seq.token_offsets:
                continue
            for stmt in fn.statements:
                found = self._varlen_base(fn, stmt, transposed, seq)
                if found is None:
                    continue
                node, pointer, offset, row_length = found
                split = index.gates.fixed_length_start(fn, offset, fn.order_of(stmt))
                if split is None:
                    continue
                fixed_value, varlen_test = split
                bos = offset.id
                yield Finding(
                    node,
                    f"`{pointer}` is stored [B, HV, T] and its row base `{ast.unparse(node)}` "
                    f"is the varlen form; on the fixed-length path `{bos} = "
                    f"{ast.unparse(fixed_value)}` steps one row per batch instead of HV, so every "
                    f"batch but the first reads the wrong row; split the base on `{varlen_test}`",
                    fix=self._fix(ctx, fn, stmt, node, bos, fixed_value, row_length, varlen_test),
                )

    @staticmethod
    def _varlen_base(fn: JitFunction, stmt: ast.stmt, transposed: set[str], seq: Sequences):
        """`g + bos + i_h * T_seq`: the pointer, a bare token offset, a head row term."""
        for node in own_nodes(stmt):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
                continue
            terms = additive_terms(node)
            pointers = [t.id for t in terms if isinstance(t, ast.Name) and t.id in transposed]
            offsets = [t for t in terms if isinstance(t, ast.Name) and t.id in seq.token_offsets]
            rows = [
                f.id
                for t in terms
                if len(factors(t)) > 1
                for f in factors(t)
                if isinstance(f, ast.Name) and (f.id in seq.lengths or is_length(f.id))
            ]
            if pointers and offsets and rows:
                return node, pointers[0], offsets[0], rows[0]
        return None

    @staticmethod
    def _fix(
        ctx: RuleContext,
        fn: JitFunction,
        stmt: ast.stmt,
        node: ast.AST,
        bos: str,
        fixed_value: ast.AST,
        row_length: str,
        varlen_test: str,
    ) -> Fix | None:
        """Wrap the statement in `if <varlen>: ... else: ...` with the batch offset times
        the head count on the fixed-length side (`i_b * HV * T_seq` for `bos = i_b * T`)."""
        if not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
            return None
        heads = [p for p in fn.params if is_head_count(p)]
        batch = [
            ast.unparse(f)
            for f in factors(strip_casts(fixed_value, ctx.index.aliases))
            if not (isinstance(f, ast.Name) and (is_length(f.id)))
        ]
        if not heads or len(batch) != 1 or len(factors(fixed_value)) != 2:
            return None
        source = ctx.source
        start, end = node_offsets(source, stmt)
        end_row = stmt.end_lineno or stmt.lineno
        line_start = source.offset(stmt.lineno, 0)
        indent = source.text[line_start:start]
        rest_of_line = source.line(end_row)[source.char_column(end_row, stmt.end_col_offset) :]
        if indent.strip() or rest_of_line.strip():
            return None  # not alone on its lines
        text = source.text[start:end]
        term = next(t for t in additive_terms(node) if isinstance(t, ast.Name) and t.id == bos)
        term_start, _ = node_offsets(source, term)
        fixed_text = (
            text[: term_start - start]
            + f"{batch[0]} * {heads[0]} * {row_length}"
            + text[term_start - start + len(bos) :]
        )
        inner = indent + "    "
        new = (
            f"{indent}if {varlen_test}:\n{reindent(text, inner, '    ')}\n"
            f"{indent}else:\n{reindent(fixed_text, inner, '    ')}"
        )
        return Fix(
            Applicability.UNSAFE,
            f"Split the base on `{varlen_test}`",
            (Edit(source.position_of(line_start), source.position_of(end), new),),
        )

    VALID = [
        # the base split on the varlen flag, as FLA's kernels do
        """
import triton
import triton.language as tl

@triton.jit
def k(g, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    T_seq = T
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n), tl.load(cu_seqlens + i_n + 1)
        T = eos - bos
        g_ptr = g + bos + i_h * T_seq
    else:
        bos = i_n * T
        g_ptr = g + i_n * HV * T_seq + i_h * T_seq
    tl.store(g_ptr + tl.arange(0, BT), 0.0, mask=tl.arange(0, BT) < T)

def launch(g, cu_seqlens, HV):
    g = g.transpose(1, 2).contiguous()
    k[(1, HV)](g, cu_seqlens, g.shape[-1], HV=HV, BT=64, IS_VARLEN=cu_seqlens is not None)
""",
        # the tensor is not transposed: [B, T, HV] math is its own rule (ASC002)
        """
import triton
import triton.language as tl

@triton.jit
def k(g, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n), tl.load(cu_seqlens + i_n + 1)
    else:
        bos = i_n * T
    g_ptr = g + bos + i_h * T
    tl.store(g_ptr + tl.arange(0, BT), 0.0)

def launch(g, cu_seqlens, HV):
    k[(1, HV)](g, cu_seqlens, g.shape[1], HV=HV, BT=64, IS_VARLEN=cu_seqlens is not None)
""",
        # the batch step in a local of its own and a start that is 0 on the fixed-length
        # path: the base steps whole batches of heads there
        """
import triton
import triton.language as tl


@triton.jit
def k(beta, cu_seqlens, chunk_indices, T, H: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    T_max = T
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
        beta_batch_off = 0
    else:
        bos = 0
        beta_batch_off = i_b * H * T_max
    o_t = i_t * BT + tl.arange(0, BT)
    p_beta = beta + beta_batch_off + bos + i_h * T_max + o_t
    b_beta = tl.load(p_beta, mask=o_t < T, other=0.0)
    tl.store(p_beta, b_beta * 2, mask=o_t < T)


def launch(beta, cu_seqlens, chunk_indices):
    B, T, H = beta.shape
    beta = beta.transpose(1, 2).contiguous()
    k[(4, B * H)](beta, cu_seqlens, chunk_indices, T, H=H, BT=64, IS_VARLEN=cu_seqlens is not None)
""",
    ]
    INVALID = [
        # the Example of ASC021.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def gate_kernel(g, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    T_seq = T  # the stored length; the varlen branch rebinds T
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n), tl.load(cu_seqlens + i_n + 1)
        T = eos - bos
    else:
        bos = i_n * T
    o_t = tl.arange(0, BT)
    b_g = tl.load(
        g + bos + i_h * T_seq + o_t,  # ASC021
        mask=o_t < T,
    )


def launch(g, cu_seqlens, BT=64):
    B, T, HV = g.shape
    g_t = g.transpose(1, 2).contiguous()  # now [B, HV, T]
    N = B if cu_seqlens is None else cu_seqlens.numel() - 1
    gate_kernel[(N, HV)](g_t, cu_seqlens, T, HV=HV, BT=BT, IS_VARLEN=cu_seqlens is not None)
""",
            rows=[17],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    T_seq = T
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n), tl.load(cu_seqlens + i_n + 1)
        T = eos - bos
    else:
        bos = i_b * T
    g_ptr = g + bos + i_h * T_seq
    tl.store(g_ptr + tl.arange(0, BT), 0.0, mask=tl.arange(0, BT) < T)

def launch(g, cu_seqlens, HV):
    g = g.transpose(1, 2).contiguous()
    k[(1, HV)](g, cu_seqlens, g.shape[-1], HV=HV, BT=64, IS_VARLEN=cu_seqlens is not None)
""",
            rows=[15],
        ),
    ]
