"""ASC000 unparsable-file: a candidate file that cannot be read, decoded or parsed.

The engine reports it (no rule can run on such a file); this class carries the code,
the name and the examples, so the code is selected, documented and tested like any other.
"""

from __future__ import annotations

from collections.abc import Iterator

from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class UnparsableFile(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        return iter(())

    VALID = [
        """
import triton

@triton.jit
def k(x):
    pass
""",
    ]
    INVALID = [
        Invalid(
            """
import triton

@triton.jit
def k(x:
    pass
""",
            rows=[5],
        ),
    ]
