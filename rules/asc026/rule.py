"""ASC026 core-type-mismatch: a core-count grid of the wrong kind of core, or a literal
core count above the target's.

Which core count a grid is, whether a kernel uses the cube unit and how many cores each
target has are the index's (`index.core_kinds`); whether the kernel shares its work out
over the grid is `index.coverage`'s. The rule compares them and words the message.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.diagnostics import cite
from ascend_lint.index.core_kinds import AI, TARGET_CORES, VECTOR
from ascend_lint.index.syntax import int_literal, show
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class CoreTypeMismatch(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        cores = TARGET_CORES.get(ctx.target.name)
        for binding in index.launches:
            axis = self._core_axis(index, binding)
            if axis is None:
                continue
            kernel = binding.callee
            cube = index.core_kinds.cube_use(kernel)
            kinds = index.core_kinds.kinds(axis, binding.host)
            if set(kinds) == {AI} and cube is None:
                yield Finding(
                    axis,
                    f"`{kernel.name}` has no `tl.dot`: triton-ascend compiles it for the "
                    f"vector cores, one program per vector core, but the grid is the AI-core "
                    f"count ({kinds[AI]}), half the vector cores (24 of 48 on a 910B2), so "
                    "the other half stay idle; size it by `num_vectorcore`",
                )
                continue
            if set(kinds) == {VECTOR} and cube is not None:
                yield Finding(
                    axis,
                    f"`{kernel.name}` calls `tl.dot` ({cite(0)}): triton-ascend runs "
                    "it as a cube-vector kernel, one program per AI core with its two vector "
                    f"cores, but the grid is the vector-core count ({kinds[VECTOR]}), twice "
                    "the AI cores: the second half of the programs waits for a second "
                    "round; size it by `num_aicore`",
                    related=(cube,),
                )
                continue
            if kinds or cores is None or not index.coverage.loops_over_programs(kernel):
                continue
            literal = index.core_kinds.literal_count(axis, binding.host)
            if literal is None:
                continue
            count, where = literal
            limit, unit = (cores.ai, "AI") if cube is not None else (cores.vector, "vector")
            if count > limit:
                yield Finding(
                    axis,
                    f"a core count written as {count} (`{where}`) for `{kernel.name}`, which "
                    f"loops over its tasks on {unit} cores: {ctx.target.name} parts "
                    f"({cores.parts}) have {limit} {unit} cores, so {count - limit} "
                    "programs run in a second round (a cap of 48 on a 40-core part gave "
                    "wrong results in FlagGems); read the count from the driver "
                    f"(`num_{'aicore' if cube is not None else 'vectorcore'}`)",
                )

    @staticmethod
    def _core_axis(index, binding) -> ast.AST | None:
        """The one axis of a grid whose other axes are all 1 (a core-count grid is 1-D)."""
        found = None
        for axes in index.quantities.grid_shapes(binding.call, binding.host):
            if not axes:
                return None
            wide = [a for a in axes if int_literal(a) != 1]
            if len(wide) != 1 or (found is not None and show(found) != show(wide[0])):
                return None
            found = wide[0]
        return found

    VALID = [
        # vector kernel on the vector cores, cube kernel on the AI cores
        """
import triton
import triton.language as tl
from triton.runtime import driver

@triton.jit
def norm(x, n, BLOCK: tl.constexpr):
    for t in range(tl.program_id(0), n, tl.num_programs(0)):
        tl.store(x + t * BLOCK + tl.arange(0, BLOCK), 0.0)

@triton.jit
def mm(a, b, c, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    for t in range(tl.program_id(0), n, tl.num_programs(0)):
        tile = tl.load(a + o[:, None] * BLOCK + o[None, :])
        acc = tl.dot(tile, tile)
        tl.store(c + o[:, None] * BLOCK + o[None, :], acc)

def launch(x, a, b, c, n):
    props = driver.active.utils.get_device_properties(0)
    norm[(props["num_vectorcore"],)](x, n, BLOCK=64)
    mm[(min(props["num_aicore"], n),)](a, b, c, n, BLOCK=16)
""",
        # a literal within the smallest A2 part, a literal grid of a kernel with no task
        # loop (a problem size, not a core count), and a 2-D grid on the AI cores
        """
import triton
import triton.language as tl

@triton.jit
def loop(x, n, BLOCK: tl.constexpr):
    for t in range(tl.program_id(0), n, tl.num_programs(0)):
        pass

@triton.jit
def rows(x, BLOCK: tl.constexpr):
    tl.program_id(0)

@triton.jit
def heads(x, BLOCK: tl.constexpr):
    tl.program_id(0)
    tl.program_id(1)

NUM_CORES = 40

def launch(x, n, num_aicore, H):
    loop[(NUM_CORES,)](x, n, BLOCK=64)
    rows[(64,)](x, BLOCK=64)
    heads[(num_aicore, H)](x, BLOCK=64)
""",
        # a core count from a helper in another module whose name says vector cores
        """
import triton
import triton.language as tl
from .utils import get_vectorcore_num

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    for t in range(tl.program_id(0), n, tl.num_programs(0)):
        pass

def launch(x, n):
    k[(get_vectorcore_num(),)](x, n, BLOCK=32)
""",
    ]
    INVALID = [
        # a vector kernel on the AI cores
        Invalid(
            """
import triton
import triton.language as tl
from triton.runtime import driver

@triton.jit
def conv(x, n, BLOCK: tl.constexpr):
    for t in range(tl.program_id(0), n, tl.num_programs(0)):
        tl.store(x + t * BLOCK + tl.arange(0, BLOCK), 0.0)

def launch(x, n):
    num_core = driver.active.utils.get_device_properties(0)["num_aicore"]
    grid = (min(num_core, n),)
    conv[grid](x, n, BLOCK=64)
""",
            rows=[13],
        ),
        # a tl.dot kernel (in a helper) on the vector cores, from an unpacked helper tuple
        Invalid(
            """
import triton
import triton.language as tl
from .utils import get_device_properties

@triton.jit
def _mm(a, b):
    return tl.dot(a, b)

@triton.jit
def k(a, c, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    for t in range(tl.program_id(0), n, tl.num_programs(0)):
        tile = tl.load(a + o[:, None] * BLOCK + o[None, :])
        tl.store(c + o[:, None] * BLOCK + o[None, :], _mm(tile, tile))

def launch(a, c, n):
    num_aicore, num_vectorcore = get_device_properties()
    k[(num_vectorcore,)](a, c, n, BLOCK=16)
""",
            rows=[19],
        ),
        # a literal core count above the 40 vector cores of a 910B4
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def gating(x, n, BLOCK: tl.constexpr):
    for t in range(tl.program_id(0), n, tl.num_programs(0)):
        pass

def launch(x, n):
    num_cores = 48  # num_vectorcore of NPU
    gating[(min(num_cores, n),)](x, n, BLOCK=64)
""",
            rows=[12],
        ),
    ]
