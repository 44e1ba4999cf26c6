"""Where a statement sits inside a kernel: the loops around it and the compile-time
branches it is under.  Built by the kernel scanner (`kernels`), read by every analysis
of a kernel's body (`constexpr` first)."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass
class Branch:
    """One side of an `if` whose test is a compile-time value."""

    test: ast.expr
    node: ast.If
    taken: bool  # True: the body, False: the else side


@dataclass
class Loop:
    node: ast.For | ast.While
    static: bool  # tl.static_range: unrolled at compile time


@dataclass
class Context:
    """Where a statement sits inside a kernel."""

    loops: tuple[Loop, ...]
    branches: tuple[Branch, ...]  # enclosing constexpr-test branches, outermost first


# The context of a statement that is not in the kernel body: shared, not built per query.
OUTSIDE_ANY_BLOCK = Context((), ())
