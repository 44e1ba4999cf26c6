"""Block-pointer arguments and the [B, T, HV] -> [B, HV, T] re-addressing that ASC001
(display-only suggestion) and ASC002 (unsafe fix) both offer."""

from __future__ import annotations

import ast

from ascend_lint.codemods import node_span, transposed_offset
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import LANGUAGE, JitFunction, is_head_count, is_length, is_literal, names_in
from ascend_lint.index.gates import block_ptr_arg
from ascend_lint.index.syntax import walk
from ascend_lint.rules._base import RuleContext

MAKE_BLOCK_PTR = f"{LANGUAGE}.make_block_ptr"


def one_d_stride(call: ast.Call) -> ast.AST | None:
    """The single stride of a 1-D block pointer, or None when it is not 1-D."""
    strides = block_ptr_arg(call, "strides")
    if isinstance(strides, (ast.Tuple, ast.List)) and len(strides.elts) == 1:
        return strides.elts[0]
    return None


def length_name(fn: JitFunction, call: ast.Call | None = None) -> str:
    """What the head index is scaled by in [B, HV, T] storage: the packed length the
    kernel was given (`T_seq` by the documented convention), else the block's extent."""
    for name in ("T_seq", "T_max", "T_total"):
        if name in fn.params or name in fn.assignments:
            return name
    shape = block_ptr_arg(call, "shape") if call is not None else None
    if isinstance(shape, ast.Tuple) and shape.elts and isinstance(shape.elts[0], ast.Name):
        return shape.elts[0].id
    return "T"


def _batch_offsets(fn: JitFunction, offset: ast.AST) -> bool:
    """Does the offset scale a batch offset (`bos = i_b * T`) by the head count?
    In [B, T, HV] that term is `i_b * T * HV`, which [B, HV, T] keeps as is, while a
    packed token offset (`bos` loaded from cu_seqlens) loses the head count. The two
    read the same, so no mechanical rewrite is offered when a name may be either."""
    for name in names_in(offset):
        for value in fn.assignments.get(name, []):
            for node in walk(value):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                    if any(
                        isinstance(f, ast.Name) and is_length(f.id) for f in (node.left, node.right)
                    ):
                        return True
    return False


def transposed_fix(
    ctx: RuleContext,
    fn: JitFunction,
    offset: ast.AST,
    pointer: str | None,
    stride: ast.AST | None,
    length: str,
    applicability: Applicability = Applicability.UNSAFE,
) -> Fix | None:
    """Edits that re-address [B, T, HV] math for [B, HV, T] storage: the offset
    rewritten term by term and a 1-D stride set to 1. Unsafe: the numbers change (from
    wrong to right only if the storage really is transposed)."""
    edits = []
    if isinstance(offset, ast.Name) and offset.id == pointer:
        # The base carries no offset here: only the stride changes.
        message = f"Read `{pointer}` with stride `(1,)`"
    else:
        if _batch_offsets(fn, offset):
            return None
        new = transposed_offset(offset, length, is_head_count, is_length, pointer)
        if new is None:
            return None
        start, end = node_span(ctx.source, offset)
        edits.append(Edit(start, end, new))
        message = f"Address the [B, HV, T] layout: `{new}`"
    if stride is not None and not is_literal(stride, 1):
        s_start, s_end = node_span(ctx.source, stride)
        edits.append(Edit(s_start, s_end, "1"))
    if not edits:
        return None
    edits.sort(key=lambda e: e.start)
    return Fix(applicability, message, tuple(edits))
