"""ASC024 where-arm-load: a load in an arm of `tl.where` whose address is valid only
where the select's condition keeps the arm.

`tl.where(c, a, b)` is a select, not control flow: both arms are computed for every
lane. A `tl.load` in an arm (or bound to a local that only arms read) is issued for the
lanes whose value the select throws away. The finding: the load's offset can be
negative (the index says so without the condition), the select's condition shows it is
not on the lanes the arm gives (the author relied on the select), and the load's own
mask does not keep the negative lanes out. Where the mask keeps them out, the load is
ASC019's (masked-negative-offset): one finding per load.

Every fact comes from the index (`index.bounds`): the loads whose value only arms use
and the arms around each use (`arm_loads`), the lower bounds an arm's condition puts on
its lanes (`select_bounds`) and a mask on the lanes it keeps (`mask_bounds`), the
address as a linear form, whether it can be negative where the load runs with and
without those bounds (`can_be_negative`), and where the address spells the guarded
quantity (`occurrences`, `share`). The rule matches them, words the message and builds
the fix (the clamp ASC019 writes too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.diagnostics import Applicability
from ascend_lint.index import BoundFacts, JitFunction
from ascend_lint.index.bounds import ArmLoad, MaskBound, SelectArm
from ascend_lint.index.linear import Occurrence
from ascend_lint.index.syntax import show
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules._clamp import clamp_fix, language_prefix, mask_of, occurrence_text

_LOAD_MASK = 1  # position of `mask` in `tl.load`


class WhereArmLoad(Rule):
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        bounds = ctx.index.bounds
        for fn in ctx.index.kernels:
            for load in bounds.arm_loads(fn):
                guard = self._guard(bounds, ctx.index.values.of(fn).block_pointers, fn, load)
                if guard is not None:
                    yield self._finding(ctx, load, *guard)

    def _guard(
        self, bounds: BoundFacts, block_pointers: set[str], fn: JitFunction, load: ArmLoad
    ) -> tuple[MaskBound, SelectArm, list[Occurrence]] | None:
        """The bound of a select's condition that keeps the address non-negative on the
        lanes the arm gives, with where the address spells the guarded quantity; None
        when the offset cannot be negative, when the load's mask keeps the negative
        lanes out (ASC019's), or when some use's arms do not guard them."""
        call, stmt = load.call, load.stmt
        if not call.args:
            return None
        address = call.args[0]
        if isinstance(address, ast.Name) and address.id in block_pointers:
            return None  # a block pointer: no lane offsets (`boundary_check` pads the rest)
        uses = [
            [(b, arm) for arm in arms for b in bounds.select_bounds(fn, arm)] for arms in load.uses
        ]
        at = fn.order_of(stmt)
        offset = bounds.offset(fn, bounds.linear_form(fn, address, at))
        atoms = offset.atoms()
        if not all(any(b.form.atoms() & atoms for b, _arm in use) for use in uses):
            return None  # a use whose condition bounds nothing the address reads
        # a loaded index a condition tests (`idx >= 0`) may be a -1 sentinel
        loads = frozenset(a for use in uses for b, _arm in use for a in b.loads)
        if not bounds.can_be_negative(fn, offset, stmt, unbounded=loads):
            return None
        mask = mask_of(call, _LOAD_MASK)
        if mask is not None:
            kept = tuple(b.form for b in bounds.mask_bounds(fn, mask, at))
            if kept and not bounds.can_be_negative(
                fn, offset, stmt, unbounded=loads, assuming=kept
            ):
                return None  # the mask keeps the lanes out: ASC019
        for use in uses:
            facts = tuple(b.form for b, _arm in use)
            if not facts or bounds.can_be_negative(
                fn, offset, stmt, unbounded=loads, assuming=facts
            ):
                return None  # the select does not guard it (or nothing shows it)
        chosen = None
        for bound, arm in uses[0]:
            if not bounds.can_be_negative(fn, bound.form, stmt, unbounded=bound.loads):
                continue  # excludes no lane
            spelled = bounds.occurrences(fn, address, at, bound.form, bound.name)
            if not spelled:
                share = bounds.share(fn, offset, bound.form)
                if share is not None and share.value is not None:
                    spelled = bounds.occurrences(fn, address, at, share.value, bound.name)
            if spelled:
                return bound, arm, spelled
            chosen = chosen or (bound, arm, [])
        return chosen or (*uses[0][0], [])

    def _finding(
        self,
        ctx: RuleContext,
        load: ArmLoad,
        bound: MaskBound,
        arm: SelectArm,
        spelled: list[Occurrence],
    ) -> Finding:
        texts = [occurrence_text(ctx, o) for o in spelled]
        use = texts[0] if texts else bound.text
        clamp = f"{language_prefix(ctx) or 'tl'}.maximum({use}, 0)"
        dropped = f"`{show(arm.test)}` is {'false' if arm.holds else 'true'}"
        what = f"`{load.via}`, loaded here," if load.via else "this load"
        message = (
            f"{what} is used only in a `tl.where` arm, but a select computes both arms for "
            f"every lane: the address reads `{use}`, which is negative where {dropped} "
            "(the lanes the select drops), and the load is still issued there, out of "
            f"range; clamp it with `{clamp}` and keep the select"
        )
        fix = clamp_fix(ctx, spelled, use) if spelled else None
        return Finding(load.call, message, fix=fix)

    VALID = [
        # the index already clamped, the select kept (the fixed vLLM-Ascend kernel)
        """
import triton
import triton.language as tl

@triton.jit
def k(cu, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    start = tl.where(o == 0, 0, tl.load(cu + tl.maximum(o - 1, 0), m))
    tl.store(out + o, tl.load(cu + o, m) - start, m)
""",
        # the load's own mask keeps the lane out: ASC019's finding, not this rule's
        """
import triton
import triton.language as tl

@triton.jit
def k(cu, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    start = tl.where(o == 0, 0, tl.load(cu + o - 1, mask=(o > 0) & (o < n), other=0))
    tl.store(out + o, start, o < n)
""",
        # a where-arm load whose offset is never negative (an ordinary tail)
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.where(o < n, tl.load(x + o), 0.0)
    tl.store(y + o, v, o < n)
""",
        # the lane the condition drops reads x[0]: in range
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.where(o > 0, tl.load(x + o, mask=o < n), 0.0)
    tl.store(y + o, v, o < n)
""",
        # the look-back stays inside a buffer with a halo of BLOCK rows before the start
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.where(o == 0, 0.0, tl.load(x + BLOCK + o - 1, mask=o < n))
    tl.store(y + o, v, o < n)
""",
        # the loaded value is also used outside the select: not a select's load
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, z, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    prev = tl.load(x + o - 1, mask=o < n)
    tl.store(z + o, prev, o < n)
    tl.store(y + o, tl.where(o == 0, 0.0, prev), o < n)
""",
        # a branch around the select keeps the program id positive
        """
import triton
import triton.language as tl

@triton.jit
def k(cu, out):
    i = tl.program_id(0)
    if i > 0:
        start = tl.where(i == 0, 0, tl.load(cu + i - 1))
        tl.store(out + i, start)
""",
    ]

    INVALID = [
        # the Example of ASC024.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def expand_kernel(cu_num_tokens, out, n, BLOCK: tl.constexpr):
    offset = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    len_mask = offset < n
    start_idx = tl.where(offset == 0, 0, tl.load(cu_num_tokens + offset - 1, len_mask))  # ASC024
    end_idx = tl.load(cu_num_tokens + offset, len_mask)
    tl.store(out + offset, end_idx - start_idx, len_mask)


@triton.jit
def sample_kernel(cu_num_draft_tokens, out):
    req_idx = tl.program_id(0)
    start_idx = tl.where(req_idx == 0, 0, tl.load(cu_num_draft_tokens + req_idx - 1))  # ASC024
    tl.store(out + req_idx, tl.load(cu_num_draft_tokens + req_idx) - start_idx)


@triton.jit
def diff_kernel(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    has_prev = o >= 1
    prev = tl.load(x + o - 1, mask=o < n)  # ASC024
    tl.store(y + o, tl.load(x + o, mask=o < n) - tl.where(has_prev, prev, 0.0), o < n)
""",
            rows=[10, 18, 26],
        ),
        # vLLM-Ascend's rejection sampler before the fix: lane 0 reads cu[-1]
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(cu, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    start = tl.where(o == 0, 0, tl.load(cu + o - 1, m))
    tl.store(out + o, tl.load(cu + o, m) - start, m)
""",
            rows=[9],
        ),
        # a scalar select on the program id: program 0 reads cu[-1]
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(cu, out):
    i = tl.program_id(0)
    start = tl.where(i == 0, 0, tl.load(cu + i - 1))
    tl.store(out + i, tl.load(cu + i) - start)
""",
            rows=[8],
        ),
        # the load bound to a local that only the select reads; the condition in a local
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, D: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    has_prev = o >= 1
    prev = tl.load(x + (o - 1) * D, mask=o < n).to(tl.float32)
    tl.store(y + o, tl.where(has_prev, prev, 0.0), o < n)
""",
            rows=[9],
        ),
        # a -1 sentinel the select tests, the mask only a tail
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(rows, table, out, n, D: tl.constexpr):
    i = tl.program_id(0)
    r = tl.load(table + i)
    o_d = tl.arange(0, D)
    v = tl.where(r >= 0, tl.load(rows + r * D + o_d, mask=o_d < n), 0.0)
    tl.store(out + i * D + o_d, v)
""",
            rows=[10],
        ),
        # a window look-back in the false arm of a negated condition
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, W: tl.constexpr, BT: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    early = o_t < W
    v = tl.where(~early, tl.load(x + o_t - W, mask=o_t < T), 0.0)
    tl.store(y + o_t, v, o_t < T)
""",
            rows=[9],
        ),
    ]
