"""ASC100 unused-noqa: a `# noqa: ASC...` code that suppresses nothing (Ruff's RUF100).

The engine reports it after suppression, when it knows which codes each comment
silenced; this class carries the code, the name and the examples, as ASC000 does.
Only this tool's codes are judged: other tools' codes in the same comment (`F401`) and
bare `# noqa` belong to other linters and are left alone.
"""

from __future__ import annotations

from collections.abc import Iterator

from ascend_lint.diagnostics import Applicability
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class UnusedNoqa(Rule):
    fix_applicability = Applicability.SAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        return iter(())

    VALID = [
        """
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr):
    pass

def launch(x):
    y = 1  # noqa: F401, E501
    z = 2  # noqa
""",
    ]
    INVALID = [
        # the Example of ASC100.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton


def launch(x):
    k[(1,)](x, BT=64)  # noqa: ASC004  # ASC100: no `num_warps` left to suppress
""",
            rows=[6],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr):
    pass

def launch(x):
    k[(1,)](x, BT=64)  # noqa: ASC004
""",
            rows=[10],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr):
    pass

def launch(x):
    k[(1,)](x, BT=64, num_warps=4)  # noqa: ASC004, ASC001, E501
""",
            rows=[10],
        ),
    ]
