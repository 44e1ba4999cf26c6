"""Shared helpers for the linter tests."""

from __future__ import annotations

import sys
import textwrap

from ascend_lint.engine import lint_source
from ascend_lint.settings import ALL_CODES

# The smallest kernel with one finding (ASC004 at 11:23, 1-based) and its clean twin,
# shared by the CLI, file-system and pre-commit tests.
KERNEL_WITH_NUM_WARPS = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def k(x, BT: tl.constexpr):
        pass


    def launch(x):
        k[(1,)](x, BT=64, num_warps=4)
    """
)
CLEAN_KERNEL = KERNEL_WITH_NUM_WARPS.replace(", num_warps=4", "")


def lint_code(code: str, select: str | None = None, path: str = "snippet.py"):
    codes = frozenset([select]) if select else ALL_CODES
    return lint_source(path, textwrap.dedent(code).encode("utf-8"), codes)


def server_command(*patches: str) -> list[str]:
    """`ascend-lint server` as users start it; `patches` (lines of Python) run first, in
    the server's own process."""
    if not patches:
        return [sys.executable, "-m", "ascend_lint", "server"]
    code = "\n".join(
        [*patches, "from ascend_lint.cli import main", "raise SystemExit(main(['server']))"]
    )
    return [sys.executable, "-c", code]
