"""ASC009 int32-varlen-offsets: sequence offsets narrowed to int32 and used in pointer math."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascend_lint.index import (
    LANGUAGE,
    Aliases,
    additive_terms,
    names_in,
    pointer_names,
    pointer_root,
)
from ascend_lint.index.syntax import walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

# Where a kernel reads its offsets table only once (no start/end pair to find it by),
# the usual spellings are the tie-breaker: `cu_seqlens`, `query_start_loc`, `seq_offsets`
# (not `seqlens`, which usually holds lengths, not offsets).
_OFFSETS_NAME = re.compile(r"cu_seq|start_loc|seq_offsets", re.IGNORECASE)
_INT32 = f"{LANGUAGE}.int32"


def _int32_offset_load(value: ast.AST, aliases: Aliases, tables: set[str]) -> bool:
    """`tl.load(<offsets table> + i).to(tl.int32)` (or `tl.cast(..., tl.int32)`)."""
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute) and value.func.attr == "to" and value.args:
        inner, dtype = value.func.value, value.args[0]
    elif aliases.resolve(value.func) == f"{LANGUAGE}.cast" and len(value.args) >= 2:
        inner, dtype = value.args[0], value.args[1]
    else:
        return False
    if not (
        aliases.resolve(dtype) == _INT32
        and isinstance(inner, ast.Call)
        and aliases.resolve(inner.func) == f"{LANGUAGE}.load"
        and inner.args
    ):
        return False
    root = pointer_root(inner.args[0])
    return root is not None and (root in tables or bool(_OFFSETS_NAME.search(root)))


class Int32VarlenOffsets(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        for fn in ctx.index.kernels:
            tables = ctx.index.sequences.of(fn).offsets_tables
            for stmt in fn.statements:
                if not isinstance(stmt, ast.Assign):
                    continue
                narrowed = self._narrowed_targets(stmt, aliases, tables)
                if not narrowed:
                    continue
                values = ctx.index.values.of(fn)
                pointers = values.pointers | values.block_pointers
                derived = pointer_names(fn, narrowed) - pointers
                if self._feeds_pointer_math(fn, derived, pointers, aliases):
                    names = ", ".join(f"`{n}`" for n in sorted(narrowed))
                    yield Finding(
                        stmt,
                        f"{names} loaded from the sequence offsets as int32 and used in pointer arithmetic; "
                        "load them as int64 and narrow only the local length (`T = (eos - bos).to(tl.int32)`)",
                    )

    @staticmethod
    def _narrowed_targets(stmt: ast.Assign, aliases: Aliases, tables: set[str]) -> set[str]:
        out: set[str] = set()
        for target in stmt.targets:
            if isinstance(target, ast.Name) and _int32_offset_load(stmt.value, aliases, tables):
                out.add(target.id)
            elif isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple):
                for t, v in zip(target.elts, stmt.value.elts):
                    if isinstance(t, ast.Name) and _int32_offset_load(v, aliases, tables):
                        out.add(t.id)
        return out

    @staticmethod
    def _feeds_pointer_math(fn, derived: set[str], pointers: set[str], aliases: Aliases) -> bool:
        for stmt in fn.statements:
            if (
                isinstance(stmt, ast.AugAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id in pointers
            ):
                if names_in(stmt.value) & derived:
                    return True
            for node in (
                walk(stmt) if not isinstance(stmt, (ast.For, ast.While, ast.If)) else [stmt]
            ):
                if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
                    terms = additive_terms(node)
                    if (
                        any(isinstance(t, ast.Name) and t.id in pointers for t in terms)
                        and names_in(node) & derived
                    ):
                        return True
        return False

    VALID = [
        # int64 offsets; only the local length is narrowed
        """
import triton
import triton.language as tl

@triton.jit
def k(x, cu_seqlens, H: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    bos, eos = tl.load(cu_seqlens + i_n), tl.load(cu_seqlens + i_n + 1)
    T = (eos - bos).to(tl.int32)
    b = tl.load(x + bos * H + i_h)
""",
        # an int32 load used only in a comparison
        """
import triton
import triton.language as tl

@triton.jit
def k(x, cu_seqlens, i_tg, N):
    lo = 0
    mid = (lo + N) // 2
    if i_tg < tl.load(cu_seqlens + mid + 1).to(tl.int32):
        lo = mid
""",
        # a vector named `offsets` cast to int32 is not an offsets table
        """
import triton
import triton.language as tl

@triton.jit
def k(x, idx, out, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rows = tl.load(idx + offsets).to(tl.int32)
    tl.store(out + offsets, tl.load(x + rows))
""",
        # a table of lengths (one read per sequence, no span) is not a table of offsets
        """
import triton
import triton.language as tl

@triton.jit
def k(x, seqlens, T: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    n = tl.load(seqlens + b).to(tl.int32)
    o = tl.arange(0, BLOCK)
    tl.store(x + b * T + o, 0.0, mask=o < n)
""",
    ]
    INVALID = [
        # found by use: a start/end pair read from one table, whatever it is called
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(q, cu_q_lens_ptr, D: tl.constexpr, BLOCK: tl.constexpr):
    b_id = tl.program_id(0)
    q_start = tl.load(cu_q_lens_ptr + b_id).to(tl.int32)
    q_end = tl.load(cu_q_lens_ptr + b_id + 1).to(tl.int32)
    for pos in range(q_start, q_end):
        tl.store(q + pos * D + tl.arange(0, BLOCK), 0.0)
""",
            rows=[8, 9],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, cu_seqlens, H: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
    x += (bos * H + i_h)
    b = tl.load(x + tl.arange(0, 16))
""",
            rows=[8],
        ),
    ]
