"""ASC012 grid-over-core-count: a launch grid sized by the problem, not by the cores."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index.quantities import Role
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class GridOverCoreCount(Rule):
    code = "ASC012"
    name = "grid-over-core-count"
    summary = (
        "a launch grid sized by a token/row/chunk count for a kernel with no task loop: "
        "Ascend has a few dozen cores"
    )
    reference = "reference_kernels/core_grid.py::rms_norm_fwd"

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        reported: set[int] = set()
        for binding in index.launches:
            if id(binding.call) in reported or index.has_task_loop(binding.callee):
                continue
            for axes in index.grid_axes(binding.call, binding.host):
                growing = self._growing_axis(ctx, axes, binding)
                if growing is None:
                    continue
                axis, why = growing
                reported.add(id(binding.call))
                yield Finding(
                    binding.call.func,
                    f"grid axis `{axis}` grows with the problem ({why}) and "
                    f"`{binding.callee.name}` has no task loop: programs beyond the core "
                    "count run in extra rounds, and over 65,535 the launch fails; launch "
                    "a 1-D grid of the core count and loop over tasks in the kernel",
                )
                break

    @staticmethod
    def _growing_axis(ctx: RuleContext, axes: list[ast.AST], binding) -> tuple[str, str] | None:
        for axis in axes:
            for quantity in ctx.index.quantities(axis, binding.host):
                if quantity.role == Role.LENGTH:
                    return ast.unparse(axis), quantity.why
        return None

    VALID = [
        # a 1-D grid of the vector-core count and a task loop in the kernel
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid, n_rows, tl.num_programs(0)):
        tl.store(x + row * BLOCK + tl.arange(0, BLOCK), 0.0)

def launch(x):
    n_rows = x.numel() // 128
    cores = triton.runtime.driver.active.utils.get_device_properties(0)["num_vectorcore"]
    k[(cores,)](x, n_rows, BLOCK=128)
""",
        # grids sized by batch and heads are small and fixed by the model
        """
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr):
    tl.program_id(0)

def launch(x):
    B, T, H, K = x.shape
    k[(B * H,)](x, BT=64)
""",
        # capped to the core count
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.program_id(0)

def launch(x, get_num_cores):
    n = x.numel()
    k[(min(triton.cdiv(n, 1024), get_num_cores()),)](x, n, BLOCK=1024)
""",
        # a literal problem size in a demo script
        """
import triton
import triton.language as tl

@triton.jit
def k(x, BLOCK: tl.constexpr):
    tl.program_id(0)

def run(x):
    B = 128
    grid = (triton.cdiv(B, 4),)
    k[grid](x, BLOCK=4)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def add_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

def add(x, y):
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    add_kernel[grid](x, y, n, BLOCK=1024)
""",
            rows=[13],
        ),
        # the number of chunks of a sequence
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def chunk_kernel(q, T, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)

def chunk(q):
    B, T, H, K = q.shape
    NT = triton.cdiv(T, 64)
    chunk_kernel[(NT, B * H)](q, T, BT=64)
""",
            rows=[12],
        ),
        # recomputed from a token count on one branch, core count on the other
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, token_num, BLOCK: tl.constexpr):
    tl.program_id(0)

def launch(x, token_num, cores):
    num_programs = cores
    if token_num > 4096:
        num_programs = (token_num + 15) // 16
    grid = (num_programs,)
    k[grid](x, token_num, BLOCK=16)
""",
            rows=[14],
        ),
    ]
