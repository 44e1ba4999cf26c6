"""ASC008 int64-block-ptr-offset: int64 values as make_block_ptr offsets or block shape."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules.asc001.rule import MAKE_BLOCK_PTR, block_ptr_arg


class Int64BlockPtrOffset(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fn in ctx.index.kernels:
            for call, stmt in ctx.index.calls_in(fn, MAKE_BLOCK_PTR):
                values = ctx.index.values.of(fn)
                order = fn.order_of(stmt)
                for part in ("offsets", "block_shape"):
                    arg = block_ptr_arg(call, part)
                    elts = arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else []
                    for elt in elts:
                        # int64 on every path to this call (a later cast does not count)
                        if values.is_int64(elt, order):
                            yield Finding(
                                elt,
                                f"block pointer {part.replace('_', ' ')} `{ast.unparse(elt)}` is int64; "
                                "keep offsets int32 (e.g. `i_t * BT`) and put int64 math in the base pointer",
                            )
                            break

    VALID = [
        # the offset is read before the id is widened: int32 where the pointer is built
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p = tl.make_block_ptr(x, (T,), (1,), (i_t * BT,), (BT,), (0,))
    i_t = i_t.to(tl.int64)
    tl.store(x + i_t * BT, tl.load(p))
""",
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr):
    i_t = tl.program_id(0)
    i_b = tl.cast(tl.program_id(1), tl.int64)
    base = x + i_b * T
    p = tl.make_block_ptr(base, (T,), (1,), (i_t * BT,), (BT,), (0,))
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr):
    i_t = tl.program_id(0).to(tl.int64)
    p = tl.make_block_ptr(x, (T,), (1,), (i_t * BT,), (BT,), (0,))
    q = tl.make_block_ptr(x, (T,), (1,), (tl.cast(0, tl.int64),), (BT,), (0,))
""",
            rows=[8, 9],
        ),
    ]
