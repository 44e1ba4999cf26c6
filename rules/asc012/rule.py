"""ASC012 grid-over-core-count: a launch grid sized by the problem, not by the cores."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index.quantities import Quantity, Role
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class GridOverCoreCount(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        reported: set[int] = set()
        for binding in index.launches:
            if id(binding.call) in reported or index.coverage.loops_over_programs(binding.callee):
                continue
            for axes in index.quantities.grid_axes(binding.call, binding.host):
                growing = self._growing_axis(ctx, axes, binding)
                if growing is None:
                    continue
                axis, quantity = growing
                reported.add(id(binding.call))
                limit = (
                    f"a cap of {quantity.cap:,} keeps it under the grid limit, not the cores"
                    if quantity.cap is not None
                    else "over 65,535 the launch fails"
                )
                yield Finding(
                    binding.call.func,
                    f"grid axis `{axis}` grows with the problem ({quantity.why}) and "
                    f"`{binding.callee.name}` has no task loop: programs beyond the core "
                    f"count run in extra rounds, and {limit}; launch a 1-D grid of the "
                    "core count and loop over tasks in the kernel",
                )
                break

    @staticmethod
    def _growing_axis(
        ctx: RuleContext, axes: list[ast.AST], binding
    ) -> tuple[str, Quantity] | None:
        for axis in axes:
            for quantity in ctx.index.quantities.of(axis, binding.host):
                if quantity.role == Role.LENGTH:
                    return ast.unparse(axis), quantity
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
        # a core count cached at module level from `props.get("num_vectorcore", ...)` caps the grid
        """
import triton
import triton.language as tl
from triton.runtime import driver

_PROPS = driver.active.utils.get_device_properties(0)
NUM_CORES = _PROPS.get("num_vectorcore", 40)

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

def launch(x):
    n = x.numel()
    k[(min(triton.cdiv(n, 1024), NUM_CORES),)](x, n, BLOCK=1024)
""",
        # a task loop stepping by an extension module's `num_programs`
        """
import triton
import triton.language as tl
import triton.language.extra.cann.extension as ext

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for t in range(pid, tl.cdiv(n, BLOCK), ext.num_programs(0)):
        tl.store(x + t * BLOCK + tl.arange(0, BLOCK), 0.0)

def launch(x):
    n = x.numel()
    k[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
""",
        # a host loop launching chunks of at most 48 programs
        """
import triton
import triton.language as tl

@triton.jit
def k(x, start, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

def launch(x):
    n = x.numel()
    for start in range(0, n, 1024 * 48):
        progs = min(48, triton.cdiv(n - start, 1024))
        k[(progs,)](x, start, n, BLOCK=1024)
""",
        # a grid-stride loop from the program id, stepping by the grid size passed in
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, grid_size, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid, n_rows, grid_size):
        tl.store(x + row * BLOCK + tl.arange(0, BLOCK), 0.0)

def launch(x, cores):
    n_rows = x.shape[0]
    k[(cores,)](x, n_rows, cores, BLOCK=128)
""",
        # batch times heads of a `[B, T, H, K]` tensor is no flattened row count
        """
import triton
import triton.language as tl

@triton.jit
def k(q, T, BT: tl.constexpr):
    i_bh = tl.program_id(0)

def launch(q):
    B, T, H, K = q.shape
    k[(B * H,)](q, T, BT=64)
""",
        # a core count unpacked from a helper's tuple caps the grid
        """
import triton
import triton.language as tl
from .device import get_device_properties

@triton.jit
def k(x, n, D: tl.constexpr):
    tl.program_id(0)

def launch(x):
    _, num_vectorcore = get_device_properties()
    n = x.numel()
    k[(min(n, num_vectorcore),)](x, n, D=64)
""",
        # capped to the core count by a conditional expression
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

def launch(x, num_vectorcore):
    n = x.numel()
    tiles = triton.cdiv(n, 1024)
    k[(tiles if tiles < num_vectorcore else num_vectorcore,)](x, n, BLOCK=1024)
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
        # the rows of a flattened view through `math.prod`
        Invalid(
            """
import math
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, D: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(x + pid * D + tl.arange(0, D), 0.0)

def launch(x):
    n_rows = math.prod(x.shape[:-1])
    k[(n_rows,)](x, n_rows, D=x.shape[-1])
""",
            rows=[13],
        ),
        # a starred unpack of the shape
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, T, BT: tl.constexpr):
    i_t = tl.program_id(0)

def launch(x):
    B, T, *_ = x.shape
    k[(triton.cdiv(T, 64), B)](x, T, BT=64)
""",
            rows=[11],
        ),
        # a row count kept on `ctx` in `forward` and read in `backward`
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def fwd(x, M, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

@triton.jit
def bwd(x, M, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        M = x.numel() // x.shape[-1]
        ctx.M = M
        fwd[(48,)](x, M, BLOCK=64)
        return x

    @staticmethod
    def backward(ctx, dy):
        bwd[(ctx.M,)](dy, ctx.M, BLOCK=64)
        return dy
""",
            rows=[24],
        ),
        # a row count kept on `self`
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

class Op:
    def __init__(self, hidden):
        self.hidden = hidden

    def __call__(self, x):
        self.n_rows = x.numel() // self.hidden
        k[(self.n_rows,)](x, self.n_rows, BLOCK=self.hidden)
""",
            rows=[15],
        ),
        # the rows of a `[seq, batch, vocab]` tensor are its first two sizes multiplied
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(x + row * stride + offs, 0.0, mask=offs < n_cols)

def launch(logits):
    s, b, v = logits.shape
    n_rows = s * b
    k[(n_rows,)](logits, logits.stride(1), v, BLOCK=1024)
""",
            rows=[14],
        ),
        # `min(..., 65535)` caps at the grid limit, not at the cores
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

def launch(x):
    n = x.numel()
    k[(min(triton.cdiv(n, 1024), 65535),)](x, n, BLOCK=1024)
""",
            rows=[11],
        ),
        # capped at the grid limit by a conditional expression: still far over the cores
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, N: tl.constexpr):
    row = tl.program_id(0)
    tl.store(x + row * N + tl.arange(0, N), 0.0)

def launch(x):
    n_rows = x.numel() // x.shape[-1]
    M = 65535 if n_rows > 65535 else n_rows
    k[M,](x, n_rows, N=x.shape[-1])
""",
            rows=[13],
        ),
        # a cap at the grid limit shows a count that outgrows it, whatever it is called
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, M, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    tl.store(x + row * BLOCK + tl.arange(0, BLOCK), 0.0)

def _grid(m):
    return (min(m, 65535),)

def launch(x, M):
    k[_grid(M)](x, M, BLOCK=64)
""",
            rows=[14],
        ),
        # the leading size of a tensor of unknown rank, capped at the grid limit
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, D: tl.constexpr):
    row = tl.program_id(0)
    tl.store(x + row * D + tl.arange(0, D), 0.0)

def launch(x):
    M = min(x.shape[0], 65535)
    k[M,](x, x.shape[0], D=x.shape[-1])
""",
            rows=[12],
        ),
        # a launch helper's parameter, followed to its caller
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, N: tl.constexpr):
    pid = tl.program_id(0)

def _launch(x, rows):
    k[(rows,)](x, rows)

def op(x):
    _launch(x, x.numel() // x.shape[-1])
""",
            rows=[10],
        ),
        # a starred shape in the unpacked value: `T` is dimension 1 of `k_in`
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, o, T, BT: tl.constexpr):
    i_t = tl.program_id(0)

def launch(k_in, v):
    B, T, H, K, V = *k_in.shape, v.shape[-1]
    k[(triton.cdiv(T, 64), B * H)](k_in, v, T, BT=64)
""",
            rows=[11],
        ),
        # the leading dimension of a `[tokens, hidden]` matrix counts its rows
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def rows(x, n, D: tl.constexpr):
    tl.program_id(0)

def launch(x):
    num_entries, hidden = x.shape
    rows[(num_entries,)](x, num_entries, D=hidden)
""",
            rows=[11],
        ),
    ]
