"""ASC005 runtime-dma-path-split: a runtime if/else that keeps a block-pointer DMA path
and a masked-load path alive together."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index import LANGUAGE, Aliases
from ascend_lint.index.syntax import walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_ACCESS = {f"{LANGUAGE}.load", f"{LANGUAGE}.store"}


def dma_kinds(body: list[ast.stmt], block_pointers: set[str], aliases: Aliases) -> set[str]:
    """'block' for make_block_ptr traffic, 'masked' for `tl.load/store(..., mask=...)`."""
    kinds: set[str] = set()
    for stmt in body:
        for node in walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            qual = aliases.resolve(node.func)
            if qual == f"{LANGUAGE}.make_block_ptr":
                kinds.add("block")
            elif qual in _ACCESS and node.args:
                if isinstance(node.args[0], ast.Name) and node.args[0].id in block_pointers:
                    kinds.add("block")
                elif any(k.arg == "mask" for k in node.keywords) or len(node.args) >= (
                    3 if qual.endswith("store") else 2
                ):
                    kinds.add("masked")
    return kinds


class RuntimeDmaPathSplit(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        for fn in ctx.index.kernels:
            block_pointers = ctx.index.values.of(fn).block_pointers
            for stmt in fn.statements:
                if (
                    not isinstance(stmt, ast.If)
                    or not stmt.orelse
                    or not fn.is_runtime(stmt.test, aliases, at=stmt)
                ):
                    continue
                body, orelse = (
                    dma_kinds(stmt.body, block_pointers, aliases),
                    dma_kinds(stmt.orelse, block_pointers, aliases),
                )
                split = ("block" in body and "masked" in orelse) or (
                    "masked" in body and "block" in orelse
                )
                both_everywhere = body == orelse == {"block", "masked"}
                if split and not both_everywhere:
                    yield Finding(
                        stmt,
                        "runtime branch between a block-pointer DMA path and a masked-load path: "
                        "both stay resident in UB; split the tail into its own launch with a constexpr mode",
                        end_node=stmt.test,
                    )

    VALID = [
        # the split is on a constexpr: each specialisation has one path
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr, TAIL_MODE: tl.constexpr):
    i_t = tl.program_id(0)
    if TAIL_MODE:
        o = i_t * BT + tl.arange(0, BT)
        b = tl.load(x + o, mask=o < T, other=0.0)
    else:
        b = tl.load(tl.make_block_ptr(x, (T,), (1,), (i_t * BT,), (BT,), (0,)))
""",
        # both sides use both kinds of access
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, W, BT: tl.constexpr):
    i_t = tl.program_id(0)
    o = tl.arange(0, BT)
    if i_t * BT >= W:
        a = tl.load(tl.make_block_ptr(x, (T,), (1,), (i_t * BT,), (BT,), (0,)))
        b = tl.load(y + o, mask=o < T)
    else:
        a = tl.load(tl.make_block_ptr(y, (T,), (1,), (i_t * BT,), (BT,), (0,)))
        b = tl.load(x + o, mask=o < T)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, T, W, BT: tl.constexpr):
    i_t = tl.program_id(0)
    if i_t * BT >= W:
        b = tl.load(tl.make_block_ptr(x, (T,), (1,), (i_t * BT,), (BT,), (0,)))
    else:
        o = i_t * BT + tl.arange(0, BT)
        b = tl.load(x + o, mask=(o >= 0) & (o < T), other=0.0)
""",
            rows=[8],
        ),
    ]
