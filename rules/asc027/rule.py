"""ASC027 data-dependent-gather: a load whose address is built, lane by lane, from values
the kernel loaded.

Which loads those are, which address term holds the loaded lanes and whether they
vary along the innermost axis (one address per element) is the index's
(`index.accesses.gathers`, on `index.lanes`); the rule keeps the element-wise ones and
words the message.
"""

from __future__ import annotations

from collections.abc import Iterator

from ascend_lint.index.syntax import show
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class DataDependentGather(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            for gather in index.accesses.gathers(fn):
                if not gather.per_element:
                    continue  # one contiguous copy per loaded row index: a DMA per row
                yield Finding(
                    gather.access.call,
                    f"the address of this load takes `{show(gather.term)}` from values the "
                    "kernel loaded, one per lane: triton-ascend lowers it to a scalar loop "
                    "with one load per element; where the source row fits the Unified "
                    "Buffer, load the row once and pick with `tl.gather`",
                )

    VALID = [
        # a scalar index from a table, then a contiguous row: one DMA
        """
import triton
import triton.language as tl

@triton.jit
def embed(table, ids, out, D: tl.constexpr):
    pid = tl.program_id(0)
    row = tl.load(ids + pid)
    cols = tl.arange(0, D)
    tl.store(out + pid * D + cols, tl.load(table + row * D + cols))
""",
        # the fixed form: load the source row once, pick from it in the Unified Buffer
        """
import triton
import triton.language as tl

@triton.jit
def pick(x, idx, y, M: tl.constexpr, N: tl.constexpr):
    rn = tl.arange(0, N)
    i = tl.load(idx + rn)
    row = tl.load(x + tl.arange(0, M))
    tl.store(y + rn, tl.gather(row, i, 0))
""",
        # loaded row indices, each row a contiguous copy of D elements
        """
import triton
import triton.language as tl

@triton.jit
def rows(x, idx, y, N: tl.constexpr, D: tl.constexpr):
    o = tl.arange(0, N)
    d = tl.arange(0, D)
    r = tl.load(idx + o)
    v = tl.load(x + r[:, None] * D + d[None, :])
    tl.store(y + o[:, None] * D + d[None, :], v)
""",
        # a loaded scalar offsets a block: structured
        """
import triton
import triton.language as tl

@triton.jit
def k(x, starts, y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.load(starts + pid).to(tl.int64)
    o = tl.arange(0, BLOCK)
    tl.store(y + pid * BLOCK + o, tl.load(x + start + o))
""",
        # a loaded mask selects lanes; the address stays structured
        """
import triton
import triton.language as tl

@triton.jit
def k(x, keep, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = tl.load(keep + o) != 0
    tl.store(y + o, tl.load(x + o, mask=m, other=0.0))
""",
        # the sum of a loaded block is a scalar
        """
import triton
import triton.language as tl

@triton.jit
def k(x, lens, y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    start = tl.sum(tl.load(lens + o))
    tl.store(y + o, tl.load(x + start + o))
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def pick(x, idx, y, stride, N: tl.constexpr):
    rn = tl.arange(0, N)
    i = tl.load(idx + rn)
    val = tl.load(x + i * stride)
    tl.store(y + rn, val)
""",
            rows=[9],
        ),
        # inline, through a cast and a clamp, in a pointer kept in a local
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(logits, token_ids, out, V, N: tl.constexpr):
    row = tl.program_id(0)
    o = tl.arange(0, N)
    tok = tl.minimum(tl.load(token_ids + row * N + o).to(tl.int64), V - 1)
    p = logits + row * V + tok
    tl.store(out + row * N + o, tl.load(p, mask=o < N, other=0.0))
""",
            rows=[11],
        ),
        # the loaded indices select columns of each row: one element per lane
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, cols, y, M: tl.constexpr, K: tl.constexpr, stride):
    r = tl.arange(0, M)
    c = tl.load(cols + tl.arange(0, K))
    v = tl.load(x + r[:, None] * stride + c[None, :])
    tl.store(y + r[:, None] * K + tl.arange(0, K)[None, :], v)
""",
            rows=[9],
        ),
        # an index vector a kernel passes to its helper
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def _fetch(x, i):
    return tl.load(x + i)

@triton.jit
def k(x, idx, y, N: tl.constexpr):
    o = tl.arange(0, N)
    i = tl.load(idx + o)
    tl.store(y + o, _fetch(x, i))
""",
            rows=[7],
        ),
    ]
