"""ASC032's float32 compare fix is offered only where it leaves its statement without an
ASC032 finding: `--fix --unsafe-fixes` never rewrites a statement and then reports it
again."""

from __future__ import annotations

import textwrap

from lint_helpers import lint_code

from ascend_lint.diagnostics import Applicability
from ascend_lint.fixes import fix_source

BOTH = frozenset({Applicability.SAFE, Applicability.UNSAFE})
ASC032 = frozenset({"ASC032"})

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def k(packed, qw, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    bit_masks = 1 << tl.arange(0, 32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    hits = tl.zeros([BLOCK, 32], dtype=tl.float32)
    for s in range(0, n, BLOCK):
        cols = s + o
        {body}
    tl.store(y + o, acc + tl.sum(hits, axis=1))
"""


def kernel(body: str) -> str:
    """`KERNEL` with `body` as its loop body."""
    lines = textwrap.dedent(body).strip().splitlines()
    return KERNEL.format(body="\n        ".join(lines))


def findings(body: str):
    result = lint_code(kernel(body), select="ASC032")
    assert result.error is None
    return result.diagnostics


def test_a_compare_of_integers_alone_gets_the_fix_and_leaves_nothing():
    body = "acc += tl.where(cols < n, 1.0, 0.0)"
    (found,) = findings(body)
    assert found.fix is not None
    outcome = fix_source("ops.py", kernel(body).encode(), ASC032, BOTH)
    assert "tl.where(cols.to(tl.float32) < n, 1.0, 0.0)" in outcome.fixed.decode()
    assert outcome.remaining == []


def test_bits_tested_by_the_compare_leave_it_without_a_fix():
    """`(words & bit) != 0`: cast to float32, the compare would be a float one, but the
    `&` would stay on the Scalar unit and be reported on the rewritten statement."""
    body = """
    words = tl.load(packed + cols, mask=cols < n, other=0)
    hits += tl.where((words[:, None] & bit_masks[None, :]) != 0, 1.0, 0.0)
    """
    (found,) = findings(body)
    assert found.fix is None
    assert "and `&` on an integer vector feeds it" in found.message
    outcome = fix_source("ops.py", kernel(body).encode(), ASC032, BOTH)
    assert not outcome.changed
    assert [d.start for d in outcome.remaining] == [found.start]


def test_a_statement_that_keeps_another_finding_gets_no_fix():
    """The compare could be fixed alone; the nibble unpacked on the same statement
    cannot, so neither is rewritten."""
    body = """
    w = tl.load(qw + cols // 8, mask=cols < n, other=0)
    acc += tl.where(cols < n, ((w >> (cols % 8) * 4) & 0xF).to(tl.float32), 0.0)
    """
    found = findings(body)
    assert len(found) == 2 and len({d.start.row for d in found}) == 1
    assert all(d.fix is None for d in found)
    assert not fix_source("ops.py", kernel(body).encode(), ASC032, BOTH).changed


def test_fixable_compares_on_one_statement_are_all_fixed():
    body = "acc += tl.where((cols < n) & (o >= s - cols), 1.0, 0.0)"
    found = findings(body)
    assert len(found) == 2 and all(d.fix is not None for d in found)
    outcome = fix_source("ops.py", kernel(body).encode(), ASC032, BOTH)
    assert outcome.changed and outcome.remaining == []
