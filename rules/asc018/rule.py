"""ASC018 vector-int-div-mod: `//` or `%` on a block tensor by a runtime divisor."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index import LANGUAGE, names_in
from ascend_lint.index.syntax import walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_ARANGE = f"{LANGUAGE}.arange"


class VectorIntDivMod(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        aliases = index.aliases
        for fn in index.kernels:
            if not fn.divisions:
                continue
            blocks = index.sequences.vector_locals(fn)
            lanes = index.lanes.of(fn)
            for node, stmt in fn.divisions:
                if not self._is_block(node.left, blocks, aliases):
                    continue
                if lanes.loaded_block(node.left, fn.order_of(stmt)):
                    continue  # data read from memory (`x % y` of loaded values), no index
                if not fn.is_runtime(node.right, aliases, at=stmt):
                    continue
                op = "//" if isinstance(node.op, ast.FloorDiv) else "%"
                yield Finding(
                    node,
                    f"`{ast.unparse(node)}`: `{op}` of a block index by the runtime "
                    f"`{ast.unparse(node.right)}` compiles to a scalar loop per element on "
                    "Ascend; index with one `tl.arange` per axis instead",
                )

    @staticmethod
    def _is_block(expr: ast.AST, blocks: set[str], aliases) -> bool:
        if names_in(expr) & blocks:
            return True
        return any(
            isinstance(n, ast.Call) and aliases.resolve(n.func) == _ARANGE for n in walk(expr)
        )

    VALID = [
        # a remainder of values the kernel loaded: data, not an index built from tl.arange
        """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x % y)
""",
        # constexpr divisor: the compiler linearises it
        """
import triton
import triton.language as tl

@triton.jit
def k(x, D: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    rows = offs // D
    cols = offs % D
    tl.store(x + rows * D + cols, 0.0)
""",
        # scalar program-id arithmetic
        """
import triton
import triton.language as tl

@triton.jit
def k(x, H, BLOCK: tl.constexpr):
    i_bh = tl.program_id(0)
    i_b, i_h = i_bh // H, i_bh % H
    tl.store(x + i_b * H + i_h + tl.arange(0, BLOCK), 0.0)
""",
        # 2-D indexing, one arange per axis
        """
import triton
import triton.language as tl

@triton.jit
def k(x, D, BR: tl.constexpr, BD: tl.constexpr):
    rows = tl.arange(0, BR)[:, None]
    cols = tl.arange(0, BD)[None, :]
    tl.store(x + rows * D + cols, 0.0, mask=cols < D)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def conv_kernel(x, D, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    t = offs // D
    d = offs % D
    tl.store(x + t * D + d, 0.0)
""",
            rows=[8, 9],
        ),
    ]
