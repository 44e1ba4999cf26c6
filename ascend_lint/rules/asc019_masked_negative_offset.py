"""ASC019 masked-negative-offset: a negative offset kept out by the mask, not by a clamp."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import node_span
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import LANGUAGE, JitFunction, pointer_names
from ascend_lint.index.syntax import int_literal, walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_ACCESSES = {f"{LANGUAGE}.load": 1, f"{LANGUAGE}.store": 2}  # -> position of `mask`
_CLAMPS = {f"{LANGUAGE}.maximum", f"{LANGUAGE}.where", f"{LANGUAGE}.clamp"}


def _lower_bound_tests(mask: ast.AST) -> list[tuple[ast.Name, ast.Compare]]:
    """`o >= 0`, `o > -1`, `idx != -1`, `0 <= o` in a mask: the lanes it keeps out are the
    ones whose offset is negative."""
    found = []
    for node in walk(mask):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        left, op, right = node.left, node.ops[0], node.comparators[0]
        value = int_literal(right)
        if isinstance(left, ast.Name) and (
            (isinstance(op, ast.GtE) and value == 0)
            or (isinstance(op, (ast.Gt, ast.NotEq)) and value == -1)
        ):
            found.append((left, node))
        value = int_literal(left)
        if isinstance(right, ast.Name) and (
            (isinstance(op, ast.LtE) and value == 0) or (isinstance(op, ast.Lt) and value == -1)
        ):
            found.append((right, node))
    return found


def _mask_of(call: ast.Call, position: int) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == "mask":
            return kw.value
    return call.args[position] if len(call.args) > position else None


class MaskedNegativeOffset(Rule):
    code = "ASC019"
    name = "masked-negative-offset"
    summary = (
        "a load/store whose mask keeps out negative offsets the address still uses: "
        "Ascend issues the masked-out access"
    )
    reference = "reference_kernels/shift_window.py::causal_conv1d_fwd_kernel"
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            vectors: set[str] | None = None  # computed for the kernels that need it
            for qual, position in _ACCESSES.items():
                for call, _stmt in index.calls_in(fn, qual):
                    mask = _mask_of(call, position)
                    if mask is None or not call.args:
                        continue
                    for name, test in _lower_bound_tests(mask):
                        if vectors is None:
                            vectors = self._vectors(ctx, fn)
                        if name.id not in vectors:
                            continue
                        use = self._unclamped_use(ctx, fn, call.args[0], name.id)
                        if use is None:
                            continue
                        yield Finding(
                            call,
                            f"the mask `{ast.unparse(test)}` keeps out negative `{name.id}`, "
                            "but the address still uses it: Triton-Ascend issues the access "
                            "of masked-out lanes, which faults out of range; clamp it with "
                            f"`tl.maximum({name.id}, 0)` and keep the mask",
                            fix=self._fix(ctx, use, name.id),
                        )
                        break

    @staticmethod
    def _vectors(ctx: RuleContext, fn: JitFunction) -> set[str]:
        """Block values: derived from `tl.arange` or loaded from memory."""
        loaded = ctx.index.assigned_from(fn, f"{LANGUAGE}.load")
        return pointer_names(fn, ctx.index.sequences.vector_names(fn) | loaded)

    @staticmethod
    def _unclamped_use(
        ctx: RuleContext, fn: JitFunction, address: ast.AST, name: str
    ) -> ast.Name | None:
        """Where the address reads `name` outside a clamp, directly or through the
        locals it is built in (`p = x + o * D; tl.load(p, mask=o >= 0)`)."""
        pending, seen = [address], set()
        while pending:
            expr = pending.pop()
            clamped = {
                id(n)
                for call in walk(expr)
                if isinstance(call, ast.Call) and ctx.index.aliases.resolve(call.func) in _CLAMPS
                for n in walk(call)
            }
            for node in walk(expr):
                if not isinstance(node, ast.Name) or id(node) in clamped:
                    continue
                if node.id == name:
                    return node
                values = fn.assignments.get(node.id, ())
                if node.id not in seen and len(values) == 1:  # a local the address is built in
                    seen.add(node.id)
                    pending.append(values[0])
        return None

    @staticmethod
    def _fix(ctx: RuleContext, use: ast.Name, name: str) -> Fix:
        start, end = node_span(ctx.source, use)
        return Fix(
            Applicability.UNSAFE,
            f"Clamp `{name}` in the address",
            (Edit(start, end, f"tl.maximum({name}, 0)"),),
        )

    VALID = [
        # clamped address, mask kept
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - (W - 1)
    b = tl.load(x + tl.maximum(o_t, 0), mask=o_t >= 0, other=0.0)
    tl.store(y + tl.arange(0, BT), b)
""",
        # an upper bound only
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, 0.0, mask=offs < n)
""",
        # a scalar index tested before use
        """
import triton
import triton.language as tl

@triton.jit
def k(x, idx, BLOCK: tl.constexpr):
    i = tl.program_id(0) - 1
    tl.store(x + tl.arange(0, BLOCK), 0.0, mask=i >= 0)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def conv_kernel(x, y, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - (W - 1)
    b = tl.load(x + o_t, mask=o_t >= 0, other=0.0)
    tl.store(y + tl.arange(0, BT), b)
""",
            rows=[8],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def conv_kernel(x, y, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - (W - 1)
    b = tl.load(x + tl.maximum(o_t, 0), mask=o_t >= 0, other=0.0)
    tl.store(y + tl.arange(0, BT), b)
""",
        ),
        # loaded indices with a -1 sentinel, the address built in a local
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def gather_kernel(src, idx, out, D: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.load(idx + tl.arange(0, BLOCK))
    p = src + rows[:, None] * D + tl.arange(0, D)[None, :]
    vals = tl.load(p, mask=(rows != -1)[:, None], other=0.0)
    tl.store(out + tl.arange(0, BLOCK)[:, None] * D + tl.arange(0, D)[None, :], vals)
""",
            rows=[9],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def gather_kernel(src, idx, out, D: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.load(idx + tl.arange(0, BLOCK))
    p = src + tl.maximum(rows, 0)[:, None] * D + tl.arange(0, D)[None, :]
    vals = tl.load(p, mask=(rows != -1)[:, None], other=0.0)
    tl.store(out + tl.arange(0, BLOCK)[:, None] * D + tl.arange(0, D)[None, :], vals)
""",
        ),
    ]
