"""ASC032 int-vector-compare: integer vector compares that feed a select, and integer
vector shifts and masks, repeated in a loop.

What a value holds per lane (int, float, bool; block or scalar), where it is consumed
(an address, a load mask, a select, data) and whether a statement runs in a loop are
the index's (`index.lanes`); int64 values are the value model's (`index.values`) and
token offsets the sequence facts' (`index.sequences`). The rule picks the operations
and words the message.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

from ascend_lint.codemods import node_span
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import LANGUAGE
from ascend_lint.index.syntax import own_nodes, show, walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_BIT_OPS = (ast.RShift, ast.LShift, ast.BitAnd, ast.BitOr, ast.BitXor)
_OP_TEXT = {ast.RShift: ">>", ast.LShift: "<<", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
# operands that need no parentheses before `.to(...)`
_ATOMIC = (ast.Name, ast.Subscript, ast.Call, ast.Attribute, ast.Constant)


def _outer_names(expr: ast.AST) -> set[str]:
    """The names of `expr` outside any call (`n` in `n - 1`, not `p` in `tl.load(p)`)."""
    found: set[str] = set()
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif not isinstance(node, ast.Call):
            todo.extend(ast.iter_child_nodes(node))
    return found


def _spelled(bit_ops: list[ast.BinOp]) -> str:
    """The shift and mask operators of `bit_ops` and what they hold: "`>>` and `&`"."""
    ops = sorted(
        {
            _OP_TEXT[type(n.op)]
            for op in bit_ops
            for n in walk(op)
            if isinstance(n, ast.BinOp) and type(n.op) in _OP_TEXT
        }
    )
    return " and ".join(f"`{op}`" for op in ops)


class IntVectorCompare(Rule):
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        aliases = index.aliases
        tl_name = next((local for local, mod in aliases.modules.items() if mod == LANGUAGE), None)
        for fn in index.kernels:
            lanes = index.lanes.of(fn)
            values = index.values.of(fn)
            sequences = index.sequences.of(fn)
            positions = (
                sequences.token_offsets | sequences.offsets_tables,
                sequences.time_vectors,
                sequences.lengths,
            )
            for order, stmt in enumerate(fn.statements):
                if isinstance(stmt, (ast.For, ast.While, ast.If)) or not lanes.in_loop(stmt):
                    continue  # a loop's range or a branch test is scalar control flow
                yield from self._statement(ctx, stmt, order, lanes, values, positions, tl_name)

    def _statement(self, ctx, stmt, order, lanes, values, positions, tl_name) -> list[Finding]:
        """The findings of one statement in a loop. A compare's float32 fix is offered
        only where it leaves the statement without an ASC032 finding: a shift or mask
        inside the compare (`(bits & m) != 0`), reported with it, would be reported on
        its own once the compare is float, and any other finding of the statement stays
        as it is; a reviewer would rewrite that statement by hand anyway (testing bits
        changes the compare too), and an unsafe cast that leaves the statement on the
        Scalar unit is not worth its rounding risk."""
        compares = [n for n in own_nodes(stmt) if isinstance(n, ast.Compare)]
        bit_ops = [
            n for n in own_nodes(stmt) if isinstance(n, ast.BinOp) and isinstance(n.op, _BIT_OPS)
        ]
        bit_findings = {}
        for node in bit_ops:
            finding = self._bit_op(node, order, lanes, values)
            if finding is not None and lanes.varies_in_loop(node, stmt):
                bit_findings[id(node)] = finding
        found: list[Finding] = []
        in_compares: set[int] = set()
        for node in compares:
            inside = {id(n) for n in walk(node)}
            bits = [b for b in bit_ops if id(b) in bit_findings and id(b) in inside]
            finding = self._compare(ctx, node, order, lanes, values, positions, tl_name, bits)
            if finding is not None and lanes.varies_in_loop(node, stmt):
                in_compares |= inside
                found.append(finding)
        # a shift or mask inside a reported compare is reported once, with the compare
        found += [f for key, f in bit_findings.items() if key not in in_compares]
        if any(f.fix is None for f in found):
            found = [replace(f, fix=None) for f in found]
        return found

    def _int_block(self, operands, order, lanes, values, positions) -> ast.AST | None:
        """The first operand that is an int block, when every operand is an int (or of no
        known kind), none is int64 and none is a token position; else None."""
        if not any(lanes.is_block(o, order) for o in operands):
            return None  # a scalar compare
        kinds = [lanes.kind(o, order) for o in operands]
        if any(k in ("float", "pointer", "bool") for k in kinds):
            return None
        if any(values.may_be_int64(o, order) for o in operands):
            return None  # an int64 index (ASC009's): fp32 cannot hold it exactly
        absolute, time_vectors, lengths = positions
        mentioned = [{n.id for n in walk(o) if isinstance(n, ast.Name)} for o in operands]
        if any(names & absolute for names in mentioned):
            return None  # an absolute token position (an offsets table's): may pass 2**24
        if any(names & time_vectors for names in mentioned) and any(
            not names & time_vectors and not _outer_names(o) & lengths and lanes.loaded(o, order)
            for o, names in zip(operands, mentioned)
        ):
            return None  # token positions against entries read from a table: the same
        return next(
            (o for o, k in zip(operands, kinds) if k == "int" and lanes.is_block(o, order)), None
        )

    def _compare(self, ctx, node, order, lanes, values, positions, tl_name, bits) -> Finding | None:
        """`bits`: the shifts and masks inside the compare that are findings themselves."""
        # where the result goes first: most compares are load/store masks, and that
        # answer is cheaper than the operands' kinds
        roles = lanes.consumers(node)
        if "select" not in roles:
            return None  # a load/store mask: the compiler turns it into the copy's bounds
        operands = [node.left, *node.comparators]
        block = self._int_block(operands, order, lanes, values, positions)
        if block is None:
            return None
        if all(lanes.consumers(select) <= {"address", "mask"} for select in lanes.selects(node)):
            return None  # `tl.where(o < n, o, 0)` clamps an index: address arithmetic
        also = (
            "; it also masks a load or store, so keep an integer copy for that mask"
            if "mask" in roles
            else ""
        )
        if bits:
            spelled = _spelled(bits)
            return Finding(
                node,
                f"`{show(node)}` compares integer vectors in a loop and selects with the "
                f"result, and {spelled} on an integer vector feeds it: Triton-Ascend lowers "
                "both to element-by-element loops on the Scalar unit, and a float32 compare "
                f"alone would leave {spelled} there; test the bits once outside the loop, or "
                "with float arithmetic (`* 2.0 ** -k`, `floor`) where the values fit in 24 "
                f"bits{also}",
            )
        fix = None
        if roles == {"select"} and len(node.ops) == 1 and tl_name is not None:
            fix = self._float_compare_fix(ctx, block, tl_name)
        return Finding(
            node,
            f"`{show(node)}` compares integer vectors in a loop and selects with the result: "
            "Triton-Ascend lowers an integer vector compare to an element-by-element loop on "
            f"the Scalar unit; compare in float32 (`{show(block)}.to(tl.float32)`, exact "
            f"below 2**24){also}",
            fix=fix,
        )

    def _bit_op(self, node, order, lanes, values) -> Finding | None:
        parent = lanes.parent(node)
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, _BIT_OPS):
            if lanes.kind(parent, order) == "int" and lanes.is_block(parent, order):
                return None  # reported once, at the outermost shift or mask
        if lanes.kind(node, order) != "int" or not lanes.is_block(node, order):
            return None
        operands = [node.left, node.right]
        if any(lanes.kind(o, order) not in ("int", None) for o in operands):
            return None
        if not any(lanes.kind(o, order) == "int" and lanes.is_block(o, order) for o in operands):
            return None
        roles = lanes.consumers(node)
        if not roles & {"data", "select"}:
            return None  # index arithmetic the compiler folds into the copy, or unknown
        return Finding(
            node,
            f"`{show(node)}`: {_spelled([node])} on an integer vector in a loop runs element by element "
            "on the Scalar unit in Triton-Ascend's lowering; unpack once outside the loop, or "
            "with float arithmetic (`* 2.0 ** -k`, `floor`) where the values fit in 24 bits",
        )

    @staticmethod
    def _float_compare_fix(ctx: RuleContext, operand: ast.AST, tl_name: str) -> Fix | None:
        start, end = node_span(ctx.source, operand)
        cast = f".to({tl_name}.float32)"
        before = ctx.source.line(start.row)[start.column - 1 : start.column]
        after = ctx.source.line(end.row)[end.column : end.column + 1]
        if isinstance(operand, _ATOMIC):
            edits = (Edit(end, end, cast),)
        elif before == "(" and after == ")":  # already parenthesised: cast the group
            closed = type(end)(end.row, end.column + 1)
            edits = (Edit(closed, closed, cast),)
        else:
            edits = (Edit(start, start, "("), Edit(end, end, ")" + cast))
        return Fix(
            Applicability.UNSAFE,
            "Compare in float32 (equal results while the integers stay below 2**24)",
            edits,
        )

    VALID = [
        # the compare only masks a load: the compiler makes it the copy's bounds
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, n, BLOCK):
        cols = s + o
        acc += tl.load(x + cols, mask=cols < n, other=0.0)
    tl.store(y + o, acc)
""",
        # the fixed form: the select compares in float32
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, n, BLOCK):
        cols = s + o
        v = tl.load(x + cols, mask=cols < n, other=0.0)
        acc += tl.where(cols.to(tl.float32) < n, v * v, 0.0)
    tl.store(y + o, acc)
""",
        # outside any loop (once per program)
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + cols, mask=cols < n, other=0.0)
    tl.store(y + cols, tl.where(cols < n, v, 0.0))
""",
        # a float compare, and a scalar compare
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    for i in range(n):
        v = tl.load(x + i * BLOCK + o)
        w = tl.where(v > 0.0, v, 0.0)
        w = tl.where(i < n - 1, w, 0.0)
        tl.store(y + i * BLOCK + o, w)
""",
        # shifts of a block index that only address memory
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    for i in range(n):
        v = tl.load(x + i * BLOCK + (o >> 1))
        tl.store(y + i * BLOCK + o, v)
""",
        # a select that clamps an index: address arithmetic, done once per copy
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    for s in range(0, n, BLOCK):
        cols = s + o
        safe = tl.where(cols < n, cols, n - 1)
        tl.store(y + cols, tl.load(x + safe), mask=cols < n)
""",
        # masks combined from compares (booleans, not integers) that only mask loads
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    for i in range(4):
        m = (rm[:, None] < M) & (rn[None, :] < N)
        v = tl.load(x + rm[:, None] * N + rn[None, :], mask=m, other=0.0)
        tl.store(y + rm[:, None] * N + rn[None, :], v, mask=m)
""",
        # int64 token positions (ASC009's): a float32 compare would round them
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, cu_seqlens, BT: tl.constexpr):
    i_n = tl.program_id(0)
    bos = tl.load(cu_seqlens + i_n).to(tl.int64)
    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    for t0 in range(bos, eos, BT):
        o_t = t0 + tl.arange(0, BT)
        v = tl.load(x + o_t, mask=o_t < eos, other=0.0)
        tl.store(y + o_t, tl.where(o_t < eos, v, 0.0), mask=o_t < eos)
""",
    ]
    INVALID = [
        # the Example of ASC032.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def row_var(x, var, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x + row * N + cols, mask=cols < N, other=0.0)
        acc += tl.where(cols < N, v * v, 0.0)  # ASC032
    tl.store(var + row, tl.sum(acc) / N)
""",
            rows=[13],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def row_sum_sq(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, n, BLOCK):
        cols = s + o
        v = tl.load(x + cols, mask=cols < n, other=0.0)
        acc += tl.where(cols < n, v * v, 0.0)
    tl.store(y + o, acc)
""",
            rows=[12],
        ),
        # a causal mask built in the loop, through a local; the operand is parenthesised
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(a, out, NT, BT: tl.constexpr):
    o_i = tl.arange(0, BT)
    for i_t in range(NT):
        m = (i_t * BT + o_i)[:, None] >= o_i[None, :]
        b = tl.load(a + i_t * BT * BT + o_i[:, None] * BT + o_i[None, :])
        tl.store(out + i_t * BT * BT + o_i[:, None] * BT + o_i[None, :], tl.where(m, b, 0.0))
""",
            rows=[9],
        ),
        # 4-bit unpacking in the K loop (AWQ dequantisation)
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def dequant(qw, out, K, BK: tl.constexpr, N: tl.constexpr):
    rn = tl.arange(0, N)
    shifts = (rn % 8) * 4
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        w = tl.load(qw + rk[:, None] * (N // 8) + (rn // 8)[None, :]).to(tl.int32)
        iw = (w >> shifts[None, :]) & 0xF
        tl.store(out + rk[:, None] * N + rn[None, :], iw.to(tl.float16))
""",
            rows=[12],
        ),
        # a parenthesised operand: the group is cast
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, n, BLOCK):
        acc += tl.where((s + tl.arange(0, BLOCK)) < n, 1.0, 0.0)
    tl.store(y + tl.arange(0, BLOCK), acc)
""",
            rows=[9],
        ),
        # a compare that masks a load and feeds a select: no automatic fix
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, n, BLOCK):
        m = s + o < n
        acc += tl.where(m, tl.load(x + s + o, mask=m, other=0.0), 0.0)
    tl.store(y + o, acc)
""",
            rows=[10],
        ),
        # bits tested in the loop (a packed token bitmap): the `&` is reported with the
        # compare, and no float32 fix is offered, since it would leave the `&` there
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(packed, y, n, B: tl.constexpr):
    bit_masks = 1 << tl.arange(0, 32)
    acc = tl.zeros([B, 32], dtype=tl.float32)
    for s in range(0, n, B):
        words = tl.load(packed + s + tl.arange(0, B))
        hit = (words[:, None] & bit_masks[None, :]) != 0
        acc += tl.where(hit, 1.0, 0.0)
    tl.store(y + tl.arange(0, B)[:, None] * 32 + tl.arange(0, 32)[None, :], acc)
""",
            rows=[11],
        ),
        # a fixable compare next to a nibble unpacked on the same statement: no fix for
        # the compare either (the statement keeps the `>>` and `&` finding)
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(qw, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, n, BLOCK):
        cols = s + o
        w = tl.load(qw + cols // 8, mask=cols < n, other=0)
        acc += tl.where(cols < n, ((w >> (cols % 8) * 4) & 0xF).to(tl.float32), 0.0)
    tl.store(y + o, acc)
""",
            rows=[12, 12],
        ),
    ]
