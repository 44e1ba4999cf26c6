"""ASC019 masked-negative-offset: a negative offset kept out by the mask, not by a clamp.

The evidence is the mask's own test. A lower bound on a value (`o >= 0`, `o > -1`,
`slot != -1`, `0 <= o`, `o >= c`, `o > c - 1`) says the lanes it keeps out hold a
negative `o` (or `o - c`); the finding is an address that still reads that quantity (it
is a non-negative multiple of it plus the rest) and can be negative there. Only values
that differ between lanes or come from memory count: `tl.arange` vectors and `tl.load`
results (index tables with a -1 sentinel, scalar or block) and what is computed from
them, not program-id arithmetic. Safe: a clamped index (`tl.maximum`, `tl.where`,
`tl.clamp`, in the address or where it is assigned), a quantity the branches around the
access or an early exit before it keep non-negative, or one the values every launch
binds keep non-negative.

Every fact comes from the index (`index.bounds`): the lower bounds a mask puts on the
lanes it keeps, the address as a linear form, whether a form can be negative where the
access runs, whether the address reads the bounded quantity and where, which values
vary, and the table an index is loaded from. The rule matches them, words the message
and builds the fix.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.diagnostics import Applicability
from ascend_lint.index import LANGUAGE, BoundFacts, JitFunction
from ascend_lint.index.bounds import MaskBound
from ascend_lint.index.linear import Occurrence
from ascend_lint.index.syntax import show
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules._clamp import clamp_fix, language_prefix, mask_of, occurrence_text

_ACCESSES = {f"{LANGUAGE}.load": 1, f"{LANGUAGE}.store": 2}  # -> position of `mask`


class MaskedNegativeOffset(Rule):
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            for qual, position in _ACCESSES.items():
                for call, stmt in index.calls_in(fn, qual):
                    mask = mask_of(call, position)
                    if mask is None or not call.args:
                        continue
                    kept_out = self._kept_out(index.bounds, fn, call.args[0], mask, stmt)
                    if kept_out:
                        yield self._finding(ctx, fn, call, kept_out)

    def _kept_out(
        self,
        bounds: BoundFacts,
        fn: JitFunction,
        address: ast.AST,
        mask: ast.AST,
        stmt: ast.stmt,
    ) -> list[tuple[MaskBound, list[Occurrence]]]:
        """The mask's lower bounds whose kept-out lanes the address reaches below its
        start (`reads_kept_out`), each with where the address reads the bounded quantity
        (or, where it never spells it, the quantity it scales: `o_t` of `o_t * D`
        against `o_t >= start`)."""
        at = fn.order_of(stmt)
        offset = None
        found = []
        for bound in bounds.mask_bounds(fn, mask, at):
            if not bounds.varies(fn, bound.form):
                continue  # no lane to keep out
            if offset is None:
                offset = bounds.offset(fn, bounds.linear_form(fn, address, at))
            if not bounds.may_read_kept_out(fn, offset, bound):
                continue  # the address goes up where the quantity goes below 0
            if not bounds.can_be_negative(fn, bound.form, stmt):
                continue  # no lane to keep out (any path brings a value it bounds)
            shares = bounds.reads_kept_out(fn, offset, bound, stmt)
            if not shares:
                continue
            uses = bounds.occurrences(fn, address, at, bound.form, bound.name)
            unsplit = bounds.share(fn, offset, bound.form)  # the address as written
            for share in (unsplit, *shares):
                if not uses and share is not None and share.value is not None:
                    uses = bounds.occurrences(fn, address, at, share.value, bound.name)
            found.append((bound, uses))
        return found

    # -- the report ---------------------------------------------------------------------
    def _finding(
        self,
        ctx: RuleContext,
        fn: JitFunction,
        call: ast.Call,
        kept_out: list[tuple[MaskBound, list[Occurrence]]],
    ) -> Finding:
        bound = kept_out[0][0]
        uses = list({id(o.node): o for _b, occurrences in kept_out for o in occurrences}.values())
        texts = [occurrence_text(ctx, o) for o in uses]
        use = texts[0] if texts else bound.text
        clamp = f"{language_prefix(ctx) or 'tl'}.maximum({use}, 0)"
        test = show(bound.test)
        mask = f"the mask `{bound.via}` (from `{test}`)" if bound.via else f"the mask test `{test}`"
        others = sorted(set(texts[1:]) - {use})
        also = f" (and `{'`, `'.join(others)}`)" if others else ""
        table = ctx.index.bounds.table_of(fn, bound.form) if bound.text == bound.name else None
        if table is not None:
            message = (
                f"`{bound.name}` is loaded from `{table}`, whose -1 entries {mask} keeps "
                f"out, but the address still uses `{use}` unclamped{also}: Triton-Ascend "
                "issues the access of masked-out lanes, which faults out of range; clamp it "
                f"with `{clamp}` and keep the mask"
            )
        else:
            message = (
                f"{mask} keeps out the lanes where `{use}` is negative, but the address "
                f"still uses it unclamped{also}: Triton-Ascend issues the access of "
                "masked-out lanes, which faults out of range; clamp it with "
                f"`{clamp}` and keep the mask"
            )
        fix = clamp_fix(ctx, uses, use) if uses else None
        return Finding(call, message, fix=fix)

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
        # clamped through `tl.where` in a local, the mask built in another local
        """
import triton
import triton.language as tl

@triton.jit
def k(src, dst, n, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = offs - PAD
    keep = (idx >= 0) & (idx < n)
    safe = tl.where(keep, idx, 0)
    tl.store(dst + offs, tl.load(src + safe, mask=keep, other=0.0), mask=offs < n)
""",
        # a shifted guard whose shifted use is clamped
        """
import triton
import triton.language as tl

@triton.jit
def k(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    before = tl.load(x + tl.maximum(o - 1, 0), mask=(o > 0) & (o < n), other=0.0)
    tl.store(out + o, before, mask=o < n)
""",
        # `o > 0` guarding `o` itself: the kept-out lane reads x[0], in range
        """
import triton
import triton.language as tl

@triton.jit
def k(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    b = tl.load(x + o, mask=(o > 0) & (o < n), other=0.0)
    tl.store(out + o, b, mask=o < n)
""",
        # an early exit on the sentinel before the access: the store never runs with -1
        """
import triton
import triton.language as tl

@triton.jit
def k(key, cache, slots, stride, D: tl.constexpr):
    i = tl.program_id(0)
    slot = tl.load(slots + i).to(tl.int64)
    if slot < 0:
        return
    offs = tl.arange(0, D)
    row = tl.load(key + i * D + offs)
    tl.store(cache + slot * stride + offs, row, mask=(slot >= 0) & (offs < D))
""",
        # a scalar branch around the access (a branch, not a mask)
        """
import triton
import triton.language as tl

@triton.jit
def k(state, table, out, D: tl.constexpr):
    b = tl.program_id(0)
    src = tl.load(table + b)
    offs = tl.arange(0, D)
    if src >= 0:
        row = tl.load(state + src * D + offs, mask=(src >= 0) & (offs < D))
        tl.store(out + b * D + offs, row)
""",
        # the tested index is not in the address
        """
import triton
import triton.language as tl

@triton.jit
def k(flags, x, y, D: tl.constexpr):
    r = tl.program_id(0)
    tag = tl.load(flags + r)
    offs = tl.arange(0, D)
    live = (tag >= 0) & (offs < D)
    tl.store(y + r * D + offs, tl.load(x + r * D + offs, mask=live, other=0.0), mask=live)
""",
        # program-id arithmetic tested as a scalar: no lane- or table-varying value
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, D: tl.constexpr):
    row = tl.program_id(0) - 1
    offs = tl.arange(0, D)
    prev = tl.load(x + row * D + offs, mask=(row >= 0) & (offs < D), other=0.0)
    tl.store(y + (row + 1) * D + offs, prev)
""",
        # a defensive test on an offset that cannot be negative
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    m_t = (o_t >= 0) & (o_t < T)
    tl.store(y + o_t, tl.load(x + o_t, mask=m_t, other=0.0), mask=m_t)
""",
        # the index is clamped where it is loaded
        """
import triton
import triton.language as tl

@triton.jit
def k(pages, table, out, PAGE: tl.constexpr):
    i = tl.program_id(0)
    page = tl.maximum(tl.load(table + i), 0)
    offs = tl.arange(0, PAGE)
    vals = tl.load(pages + page * PAGE + offs, mask=page >= 0, other=0.0)
    tl.store(out + i * PAGE + offs, vals)
""",
        # the branch bounds the window start from below: `t0 + i_w >= 1` there
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, W: tl.constexpr, BT: tl.constexpr):
    t0 = tl.program_id(0) * BT
    acc = tl.zeros((BT,), dtype=tl.float32)
    if t0 >= W:
        for i_w in tl.static_range(-W + 1, 1):
            o_x = t0 + i_w + tl.arange(0, BT)
            acc += tl.load(x + o_x, mask=(o_x >= 0) & (o_x < T), other=0.0)
    tl.store(y + t0 + tl.arange(0, BT), acc)
""",
        # an early exit on a sentinel the launcher passes as an argument
        """
import triton
import triton.language as tl

PAD_SLOT = -1


@triton.jit
def k(state, state_indices, out, pad_slot_id, D: tl.constexpr):
    b = tl.program_id(0)
    line = tl.load(state_indices + b).to(tl.int64)
    if line == pad_slot_id:
        return
    offs = tl.arange(0, D)
    row = tl.load(state + line * D + offs, mask=(line != pad_slot_id) & (offs < D), other=0.0)
    tl.store(out + b * D + offs, row)


def read_states(state, state_indices, out, pad_slot_id: int = PAD_SLOT):
    k[(out.shape[0],)](state, state_indices, out, pad_slot_id, D=64)
""",
        # the `else` of `if ti == 0:`: `ti >= 1` there, so `ti * BT - 1 + tl.arange(0, BT)` is >= 0
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, BT: tl.constexpr):
    ti = tl.program_id(0)
    o = ti * BT - 1 + tl.arange(0, BT)
    if ti == 0:
        prev = tl.zeros((BT,), dtype=tl.float32)
    else:
        prev = tl.load(x + o, mask=(o >= 0) & (o < T), other=0.0)
    tl.store(y + ti * BT + tl.arange(0, BT), prev)
""",
        # an early exit on `ti == 0` before the access: `(ti - 1) * BT` is >= 0 after it
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, NT, BT: tl.constexpr):
    pid = tl.program_id(0)
    ti = pid % NT
    if ti == 0:
        return
    o = (ti - 1) * BT + tl.arange(0, BT)
    prev = tl.load(x + o, mask=(o >= 0) & (o < T), other=0.0)
    tl.store(y + pid * BT + tl.arange(0, BT), prev)
""",
        # every launch binds `BW = W`: `tl.arange(0, BW) + W - BW` is the arange itself
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, W: tl.constexpr, BW: tl.constexpr):
    o_w = tl.arange(0, BW) + W - BW
    w = tl.load(x + o_w, mask=(o_w >= 0) & (o_w < W), other=0.0)
    tl.store(y + tl.arange(0, BW), w)


def last_taps(x, y, width):
    k[(1,)](x, y, W=width, BW=width)
""",
        # the launch binds `T_CHUNK = 256` and asserts `T_CHUNK >= width`; in the `else` of `ti == 0`
        # the window start `ti * T_CHUNK - (width - 1)` is >= 1
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, seq_len, width, NT, T_CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    ti = pid % NT
    if ti == 0:
        o = tl.arange(0, T_CHUNK)
    else:
        o = ti * T_CHUNK - (width - 1) + tl.arange(0, T_CHUNK)
        b = tl.load(x + o, mask=(o >= 0) & (o < seq_len), other=0.0)
        tl.store(y + pid * T_CHUNK + tl.arange(0, T_CHUNK), b)


def run(x, y, weight):
    _, width = weight.shape
    T_CHUNK = 256
    assert T_CHUNK >= width
    NT = triton.cdiv(x.shape[-1], T_CHUNK)
    k[(NT,)](x, y, x.shape[-1], int(width), NT, T_CHUNK=T_CHUNK)
""",
        # `tl.where` selects a safe index before the load (the select alone would not clamp it)
        """
import triton
import triton.language as tl

@triton.jit
def k(cu, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    has_prev = o > 0
    prev_idx = tl.where(has_prev, o - 1, 0)
    prev = tl.load(cu + prev_idx, mask=has_prev & (o < n), other=0)
    cur = tl.load(cu + o, mask=o < n, other=0)
    tl.store(out + o, cur - prev, mask=o < n)
""",
        # a threshold on loaded rows: the kept-out lanes read rows below it, still in range
        """
import triton
import triton.language as tl

@triton.jit
def k(a, idx_ptr, out, HALF, N: tl.constexpr, M: tl.constexpr):
    rows = tl.load(idx_ptr + tl.arange(0, M))
    cols = tl.arange(0, N)
    vals = tl.load(a + rows[:, None] * N + cols[None, :], mask=(rows >= HALF)[:, None], other=0.0)
    tl.store(out + tl.arange(0, M)[:, None] * N + cols[None, :], vals)
""",
        # an upper bound whose bound is also the row stride: the lanes go the other way
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, K, BK: tl.constexpr):
    i = tl.program_id(0)
    o_k = tl.arange(0, BK)
    b = tl.load(x + i * K + o_k, mask=o_k < K, other=0.0)
    tl.store(y + i * K + o_k, b, mask=o_k < K)
""",
        # the diagonal and the clamped subdiagonal of a row-major matrix under `ar >= 1`:
        # `ar * N` is `(ar - 1) * N + N`, so the kept-out lane `ar = 0` reads row 0
        """
import triton
import triton.language as tl

@triton.jit
def k(a, out, N, M: tl.constexpr):
    ar = tl.arange(0, M)
    sub = tl.load(a + ar * N + tl.maximum(ar - 1, 0), mask=(ar >= 1) & (ar < N), other=0.0)
    diag = tl.load(a + ar * N + ar, mask=(ar >= 1) & (ar < N), other=0.0)
    tl.store(out + ar, sub + diag, mask=ar < N)
""",
        # an early `continue` on a negative slot inside the loop
        """
import triton
import triton.language as tl

@triton.jit
def k(state, table, out, n, D: tl.constexpr):
    offs = tl.arange(0, D)
    for i in range(n):
        slot = tl.load(table + i)
        if slot < 0:
            continue
        row = tl.load(state + slot * D + offs, mask=(slot >= 0) & (offs < D), other=0.0)
        tl.store(out + i * D + offs, row)
""",
    ]
    INVALID = [
        # the Example of ASC019.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def conv_kernel(x, y, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - (W - 1)
    b = tl.load(x + o_t, mask=o_t >= 0, other=0.0)  # ASC019
    tl.store(y + tl.arange(0, BT), b)


@triton.jit
def write_cache_kernel(key, cache, slot_mapping, stride, D: tl.constexpr):
    i = tl.program_id(0)
    slot = tl.load(slot_mapping + i).to(tl.int64)
    offs = tl.arange(0, D)
    row = tl.load(key + i * D + offs)
    live = (slot != -1) & (offs < D)
    tl.store(cache + slot * stride + offs, row, mask=live)  # ASC019


@triton.jit
def prev_diff_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    has_prev = (o > 0) & (o < n)
    prev = tl.load(x + (o - 1), mask=has_prev, other=0.0)  # ASC019
    tl.store(out + o, prev, mask=o < n)
""",
            rows=[9, 20, 27],
        ),
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
        ),
        # the mask built in a local
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def pad_copy_kernel(src, dst, n, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = offs - PAD
    valid = (idx >= 0) & (idx < n)
    vals = tl.load(src + idx, mask=valid, other=0.0)
    tl.store(dst + offs, vals, mask=offs < n + PAD)
""",
            rows=[10],
        ),
        # the mask combined through several locals and broadcast with `[:, None]`
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def window_rows_kernel(x, y, T, D: tl.constexpr, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT) - W
    o_d = tl.arange(0, D)
    row_ok = (o_t >= 0) & (o_t < T)
    col_ok = o_d < D
    m = row_ok[:, None] & col_ok[None, :]
    p = x + o_t[:, None] * D + o_d[None, :]
    b = tl.load(p, mask=m, other=0.0)
    tl.store(y + (o_t + W)[:, None] * D + o_d[None, :], b)
""",
            rows=[13],
        ),
        # shifted guard: `o > 0` keeps out the lane whose `o - 1` is -1
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def prev_diff_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_range = o < n
    cur = tl.load(x + o, mask=in_range, other=0.0)
    has_prev = o > 0
    prev = tl.load(x + (o - 1), mask=in_range & has_prev, other=0.0)
    tl.store(out + o, cur - prev, mask=in_range)
""",
            rows=[11],
        ),
        # shifted guard by a runtime argument, the shifted offset in a local
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def lag_kernel(x, y, n, shift, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = o - shift
    b = tl.load(x + src, mask=(o >= shift) & (o < n), other=0.0)
    tl.store(y + o, b, mask=o < n)
""",
            rows=[9],
        ),
        # shifted guard on a store: `o_t >= 1` around the row `o_t - 1`
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def shift_back_kernel(x, y, T, D: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    o_d = tl.arange(0, D)
    b = tl.load(x + o_t[:, None] * D + o_d[None, :], mask=(o_t < T)[:, None], other=0.0)
    m_prev = (o_t >= 1) & (o_t < T)
    tl.store(y + (o_t - 1)[:, None] * D + o_d[None, :], b, mask=m_prev[:, None])
""",
            rows=[11],
        ),
        # shifted guards by a constexpr (`o >= K`, `o > K - 1`) and by a literal
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def taps_kernel(x, y, n, K: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(x + (o - K), mask=o >= K, other=0.0)
    acc += tl.load(x + (o - K) * 2, mask=(o > K - 1) & (o < n), other=0.0)
    acc += tl.load(x + (o - 2), mask=o >= 2, other=0.0)
    tl.store(y + o, acc, mask=o < n)
""",
            rows=[8, 9, 10],
        ),
        # a scalar slot from a table with -1 entries
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def write_cache_kernel(key, cache, slot_mapping, stride, D: tl.constexpr):
    i = tl.program_id(0)
    slot = tl.load(slot_mapping + i).to(tl.int64)
    offs = tl.arange(0, D)
    row = tl.load(key + i * D + offs)
    tl.store(cache + slot * stride + offs, row, mask=(slot != -1) & (offs < D))
""",
            rows=[11],
        ),
        # a scalar state index, the mask in a local, two accesses
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def state_update_kernel(state, state_indices, delta, D: tl.constexpr):
    b = tl.program_id(0)
    s = tl.load(state_indices + b)
    offs = tl.arange(0, D)
    live = (s >= 0) & (offs < D)
    base = state + s * D
    cur = tl.load(base + offs, mask=live, other=0.0)
    tl.store(base + offs, cur + tl.load(delta + b * D + offs), mask=live)
""",
            rows=[12, 13],
        ),
        # a sentinel the launcher passes as an argument: every launch binds it to -1
        Invalid(
            """
import triton
import triton.language as tl

PAD_SLOT = -1


@triton.jit
def read_state_kernel(state, state_indices, out, pad_slot_id, D: tl.constexpr):
    b = tl.program_id(0)
    line = tl.load(state_indices + b).to(tl.int64)
    offs = tl.arange(0, D)
    live = (line != pad_slot_id) & (offs < D)
    row = tl.load(state + line * D + offs, mask=live, other=0.0)
    tl.store(out + b * D + offs, row)


def read_states(state, state_indices, out, pad_slot_id: int = PAD_SLOT):
    read_state_kernel[(out.shape[0],)](state, state_indices, out, pad_slot_id, D=64)
""",
            rows=[14],
        ),
        # a block of page ids from a block table, `> -1` broadcast over the page
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def gather_pages_kernel(pages, block_table, out, PAGE: tl.constexpr, NB: tl.constexpr):
    seq = tl.program_id(0)
    o_b = tl.arange(0, NB)
    blk = tl.load(block_table + seq * NB + o_b)
    used = blk > -1
    o_p = tl.arange(0, PAGE)
    vals = tl.load(pages + blk[:, None] * PAGE + o_p[None, :], mask=used[:, None], other=0.0)
    tl.store(out + (seq * NB + o_b)[:, None] * PAGE + o_p[None, :], vals)
""",
            rows=[12],
        ),
        # the look-back `x + o - 1`, parsed `(x + o) - 1`: the shifted offset is in no sub-expression
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def prev_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    prev = tl.load(x + o - 1, mask=(o > 0) & (o < n), other=0.0)
    tl.store(y + o, prev, mask=o < n)
""",
            rows=[8],
        ),
        # the shifted offset in a local, scaled by a stride
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def prev_kernel(x, y, n, D: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    off = o - 1
    prev = tl.load(x + off * D, mask=(o > 0) & (o < n), other=0.0)
    tl.store(y + o, prev, mask=o < n)
""",
            rows=[9],
        ),
        # the look-back from a pointer local: `p - 1` with `p = x + o` (no clamp to write)
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def prev_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    p = x + o
    prev = tl.load(p - 1, mask=(o >= 1) & (o < n), other=0.0)
    tl.store(y + o, prev, mask=o < n)
""",
            rows=[9],
        ),
        # a -1 sentinel times a stride on one path (`row` set in both sides of the `if`)
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def scatter_rows_kernel(src, dst, dst_rows, stride, HAS_MAP: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    o_d = tl.arange(0, D)
    keep = o >= 0
    if HAS_MAP:
        row = tl.load(dst_rows + o)
        keep = row != -1
    else:
        row = o
    vals = tl.load(src + o[:, None] * D + o_d[None, :])
    tl.store(dst + row[:, None] * stride + o_d[None, :], vals, mask=keep[:, None])
""",
            rows=[16],
        ),
        # one launch binds `BW = W`, the other a wider block: `W - BW` is negative there
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def last_taps_kernel(x, y, W: tl.constexpr, BW: tl.constexpr):
    o_w = tl.arange(0, BW) + W - BW
    w = tl.load(x + o_w, mask=(o_w >= 0) & (o_w < W), other=0.0)
    tl.store(y + tl.arange(0, BW), w)


def last_taps(x, y, width):
    last_taps_kernel[(1,)](x, y, W=width, BW=width)


def last_taps_padded(x, y, width):
    last_taps_kernel[(1,)](x, y, W=width, BW=triton.next_power_of_2(width))
""",
            rows=[8],
        ),
        # the `else` of `if ti == 0:` has `ti >= 1`, but `ti * BT - W` is still negative for W > BT
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def look_back_kernel(x, y, T, W: tl.constexpr, BT: tl.constexpr):
    ti = tl.program_id(0)
    o = ti * BT - W + tl.arange(0, BT)
    if ti == 0:
        prev = tl.zeros((BT,), dtype=tl.float32)
    else:
        prev = tl.load(x + o, mask=(o >= 0) & (o < T), other=0.0)
    tl.store(y + ti * BT + tl.arange(0, BT), prev)
""",
            rows=[12],
        ),
        # the subdiagonal of a row-major matrix under `ar >= 1`: every place the address
        # spells `ar - 1` is clamped, on both loads of the statement; the row `ar * N`
        # stays (the kept-out lane `ar = 0` reads row 0), so a second lint finds nothing
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def subdiagonal_kernel(a, out, N, M: tl.constexpr):
    ar = tl.arange(0, M)
    live = (ar >= 1) & (ar < N)
    sub = tl.load(a + ar * N + (ar - 1), mask=live, other=0.0)
    prev = tl.load(a + (ar - 1) * N + (ar - 1), mask=live, other=0.0) + tl.load(
        out + (ar - 1), mask=live, other=0.0
    )
    tl.store(out + ar, sub + prev, mask=ar < N)
""",
            rows=[9, 10, 10],
        ),
    ]
