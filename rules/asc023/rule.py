"""ASC023 grid-misses-work: a grid smaller than the work the kernel splits over program ids."""

from __future__ import annotations

from collections.abc import Iterator

from ascend_lint.codemods import node_text, remove_statement, replace_node
from ascend_lint.diagnostics import Applicability, Citations, Fix
from ascend_lint.index.syntax import int_literal, show
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_TASK_LOOP = "for task in range(pid, n_tasks, tl.num_programs(0))"


class GridMissesWork(Rule):
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        coverage = index.coverage
        launched: set[int] = set()
        for binding in index.launches:
            kernel = binding.callee
            launched.add(id(kernel))
            if len(index.by_name.get(kernel.name, ())) > 1:
                continue  # several kernels of that name: which one runs is not shown
            cites = Citations()
            problems = (
                self._missing_axes(ctx, binding, cites)
                + self._capped_axes(ctx, binding, cites)
                + self._rounded_down_axes(ctx, binding, cites)
            )
            fix = None
            for loop in coverage.unbounded_task_loops_at(binding):
                if not coverage.multiple_of_grid(binding, loop):
                    fix = fix or self._task_loop_fix(ctx, loop)
                    total = (
                        f"the count the launch divides into `{loop.trips_parameter}`"
                        if loop.trips_parameter is not None
                        else f"`{show(loop.total)}`"
                    )
                    problems.append(
                        f"`{kernel.name}`'s task loop ({cites(loop.loop)}) never checks "
                        f"`{loop.task}` against {total}: unless the count is a "
                        "multiple of the grid, the last round reads and writes past the end"
                    )
            if problems:
                yield Finding(
                    binding.call.func,
                    "; ".join(problems) + f"; loop over tasks instead (`{_TASK_LOOP}`)",
                    fix,
                    related=tuple(cites.nodes),
                )
        # A kernel launched from another module: its task loop is wrong wherever it runs.
        for kernel in index.kernels:
            if id(kernel) in launched:
                continue
            for loop in coverage.unbounded_task_loops(kernel):
                yield Finding(
                    loop.loop.iter,
                    f"the task index `{loop.task}` of `{kernel.name}` is never checked "
                    f"against `{show(loop.total)}`: unless the count is a multiple of the "
                    f"grid, the last round reads and writes past the end; loop over tasks "
                    f"instead (`{_TASK_LOOP}`)",
                    self._task_loop_fix(ctx, loop),
                )

    @staticmethod
    def _task_loop_fix(ctx: RuleContext, loop) -> Fix | None:
        """`for task in range(pid, total, nprog)` in place of the counter and the task
        assignment: the loop stops at the last task by itself. Shown, never applied (the
        body may index with the counter's old meaning elsewhere: then none is offered)."""
        if loop.counter_read_elsewhere or loop.trips_parameter is not None:
            return None  # (the trip count is the launcher's: the header cannot be rebuilt)
        source = ctx.source
        header = (
            f"range({node_text(source, loop.start)}, {node_text(source, loop.total)}, "
            f"{node_text(source, loop.step)})"
        )
        return Fix(
            Applicability.DISPLAY_ONLY,
            f"loop `for {loop.task} in {header}`",
            (
                replace_node(source, loop.loop.target, loop.task),
                replace_node(source, loop.loop.iter, header),
                remove_statement(source, loop.assignment),
            ),
        )

    @staticmethod
    def _missing_axes(ctx: RuleContext, binding, cites: Citations) -> list[str]:
        """(a) `tl.program_id(k)` for an axis every grid of the launch lacks."""
        coverage = ctx.index.coverage
        ranks = ctx.index.quantities.grid_ranks(binding.call, binding.host)
        if not ranks or any(rank is None for rank in ranks):
            return []
        shapes = [s for s in ctx.index.quantities.grid_shapes(binding.call, binding.host) if s]
        if shapes and all(int_literal(extent) == 1 for shape in shapes for extent in shape):
            return []  # one program on purpose: every id is 0 by design
        rank = max(ranks)
        widest = max(shapes, key=len) if shapes else []
        out = []
        for axis, read in sorted(coverage.live_axis_reads(binding).items()):
            if axis < rank or not coverage.blocks_bound(binding, axis):
                continue
            if coverage.covers_whole_axis(binding, axis):
                continue
            where = "" if read.fn is binding.callee else f" (in its helper `{read.fn.name}`)"
            grid = (
                "(" + ", ".join(show(e) for e in widest) + ("," if rank == 1 else "") + ")"
                if len(widest) == rank
                else show(binding.call.func.slice)
            )
            out.append(
                f"the grid `{grid}` has {rank} "
                f"ax{'is' if rank == 1 else 'es'} but `{binding.callee.name}` reads "
                f"`{show(read.call)}` on {cites(read.call)}{where}: that id is always 0, "
                f"so only the first tile along axis {axis} is computed"
            )
        return out

    @staticmethod
    def _rounded_down_axes(ctx: RuleContext, binding, cites: Citations) -> list[str]:
        """(d) an axis of `n // BLOCK` programs over a kernel with one tile of `BLOCK`
        per program: the last `n % BLOCK` are never computed."""
        coverage = ctx.index.coverage
        if coverage.loops_over_programs(binding.callee) or coverage.launched_in_chunks(binding):
            return []
        reads = coverage.live_axis_reads(binding)
        out = []
        seen: set[int] = set()
        for shape in ctx.index.quantities.grid_shapes(binding.call, binding.host):
            for axis, extent in enumerate(shape or ()):
                if axis in seen or axis not in reads:
                    continue
                if coverage.rounded_down(binding, axis, extent):
                    seen.add(axis)
                    out.append(
                        f"grid axis {axis} `{show(extent)}` rounds the tile count down, and "
                        f"`{binding.callee.name}` computes one tile per program from "
                        f"`{show(reads[axis].call)}` ({cites(reads[axis].call)}): the "
                        "last partial tile has no program and is never computed (use "
                        "`triton.cdiv` and mask the tail)"
                    )
        return out

    @staticmethod
    def _capped_axes(ctx: RuleContext, binding, cites: Citations) -> list[str]:
        """(b) a core-count or capped axis over a kernel that maps one program to one tile."""
        coverage = ctx.index.coverage
        kernel = binding.callee
        if coverage.loops_over_programs(kernel) or coverage.launched_in_chunks(binding):
            return []
        out = []
        seen: set[int] = set()
        reads = coverage.live_axis_reads(binding)
        for shape in ctx.index.quantities.grid_shapes(binding.call, binding.host):
            for axis, extent in enumerate(shape or ()):
                if axis in seen or axis not in reads:
                    continue
                capped = coverage.capped_extent(binding, extent)
                if capped is None or not coverage.fixed_tile(binding, axis):
                    continue
                if coverage.covers_whole_axis(binding, axis):
                    continue
                growing = coverage.growing_tiles(binding, axis)
                limited = coverage.capped_count(binding, extent) if growing is None else None
                if limited is not None:
                    # the launcher caps a count of tiles at the grid limit: it expects more
                    seen.add(axis)
                    out.append(
                        f"grid axis {axis} `{show(extent)}` is capped ({limited.why}) but "
                        f"`{kernel.name}` takes one tile per program from "
                        f"`{show(reads[axis].call)}` ({cites(reads[axis].call)}) with no "
                        f"task loop: tiles beyond the first {limited.cap:,} are never computed"
                    )
                    continue
                if growing is None and not coverage.tiles(kernel, axis).bounds:
                    # one row per program with no bound at all, on a core-count grid,
                    # while the launch hands over a row count the kernel never reads
                    unread = coverage.unread_count(binding)
                    if unread is None or not coverage.is_core_count(binding, extent):
                        continue
                    seen.add(axis)
                    out.append(
                        f"grid axis {axis} `{show(extent)}` is the core count ({capped}) but "
                        f"`{kernel.name}` takes one tile per program from "
                        f"`{show(reads[axis].call)}` ({cites(reads[axis].call)}) with no "
                        f"bound and no task loop, and never reads `{unread[0]}` "
                        f"({unread[1].why}): only as many tiles as cores are computed"
                    )
                    continue
                if growing is None:
                    continue
                bound, counted = growing
                seen.add(axis)
                line = cites(coverage.tiles(kernel, axis).bounds[bound])
                out.append(
                    f"grid axis {axis} `{show(extent)}` is capped ({capped}) but "
                    f"`{kernel.name}` maps one program to one tile of `{bound}` ({line}) "
                    f"with no task loop, and `{bound}` grows with the input ({counted.why}): "
                    "tiles beyond the grid are never computed"
                )
        return out

    VALID = [
        # the reference shape: a core-count grid and a task loop over the row blocks
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, BM: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)
    n_tasks = tl.cdiv(n_rows, BM)
    for task in range(pid, n_tasks, tl.num_programs(0)):
        rows = task * BM + tl.arange(0, BM)
        tl.store(x + rows[:, None] * N + tl.arange(0, N)[None, :], 0.0, mask=rows[:, None] < n_rows)

def launch(x, cores):
    n_rows, N = x.shape
    k[(min(cores, triton.cdiv(n_rows, 16)),)](x, n_rows, BM=16, N=N)
""",
        # a block that holds the whole axis: axis 1 is one tile, its id is 0 by design
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, n_cols, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    col = tl.program_id(1)
    offs = col * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = offs < n_cols
    tl.store(y + row * n_cols + offs, tl.load(x + row * n_cols + offs, mask=mask), mask=mask)

def launch(x, y):
    n_rows, n_cols = x.shape
    k[(n_rows,)](x, y, n_rows, n_cols, BLOCK_C=triton.next_power_of_2(n_cols))
""",
        # a grid-stride loop over a core-count grid, the step passed in
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, grid_size, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for t in range(pid, tl.cdiv(n, BLOCK), grid_size):
        offs = t * BLOCK + tl.arange(0, BLOCK)
        tl.store(x + offs, 0.0, mask=offs < n)

def launch(x, cores):
    n = x.numel()
    k[(cores,)](x, n, cores, BLOCK=1024)
""",
        # a 2-D grid built in a variable: both axes are there
        """
import triton
import triton.language as tl

@triton.jit
def k(x, T, H, BT: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    o = i_t * BT + tl.arange(0, BT)
    tl.store(x + o * H + i_h, 0.0, mask=o < T)

def launch(x):
    B, T, H = x.shape
    grid = (triton.cdiv(T, 64), H)
    k[grid](x, T, H, BT=64)
""",
        # a lambda over META with both axes
        """
import triton
import triton.language as tl

@triton.jit
def k(x, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    tl.store(x + om[:, None] * N + on[None, :], 0.0, mask=(om[:, None] < M) & (on[None, :] < N))

def launch(x):
    M, N = x.shape
    grid = lambda META: (triton.cdiv(M, META["BM"]), triton.cdiv(N, META["BN"]))
    k[grid](x, M, N, BM=32, BN=32)
""",
        # a grid helper returning two axes
        """
import triton
import triton.language as tl

@triton.jit
def k(x, M, N, BM: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    om = pm * BM + tl.arange(0, BM)
    tl.store(x + om * N + pn, 0.0, mask=om < M)

def grid(meta):
    return (triton.cdiv(meta["M"], meta["BM"]), meta["N"])

def launch(x):
    M, N = x.shape
    k[grid](x, M, N, BM=32)
""",
        # a grid passed in by the caller: its rank is not shown
        """
import triton
import triton.language as tl

@triton.jit
def k(x, BM: tl.constexpr):
    tl.store(x + tl.program_id(1) * BM + tl.arange(0, BM), 0.0)

def launch(x, grid):
    k[grid](x, BM=32)
""",
        # rows shared out in chunks: the kernel reads the program count
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, N: tl.constexpr):
    pid = tl.program_id(0)
    per = (n_rows + tl.num_programs(0) - 1) // tl.num_programs(0)
    start = pid * per
    end = tl.minimum(start + per, n_rows)
    for row in range(start, end):
        tl.store(x + row * N + tl.arange(0, N), 0.0)

def launch(x, cores):
    n_rows, N = x.shape
    k[(cores,)](x, n_rows, N=N)
""",
        # a task loop whose task index is masked
        """
import triton
import triton.language as tl

@triton.jit
def k(x, total, N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for i in range(tl.cdiv(total, nprog)):
        task = pid + i * nprog
        tl.store(x + task * N + tl.arange(0, N), 0.0, mask=task < total)

def launch(x, cores):
    total, N = x.shape
    k[(cores,)](x, total, N=N)
""",
        # an unguarded task loop whose count is the grid itself: one round, no overrun
        """
import triton
import triton.language as tl

@triton.jit
def k(x, total, N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for i in range(tl.cdiv(total, nprog)):
        task = pid + i * nprog
        tl.store(x + task * N + tl.arange(0, N), 0.0)

def launch(x):
    total, N = x.shape
    k[(total,)](x, total, N=N)
""",
        # a core-count grid over a kernel whose axis counts model constants (heads)
        """
import triton
import triton.language as tl

@triton.jit
def k(x, H: tl.constexpr, D: tl.constexpr):
    h = tl.program_id(0)
    tl.store(x + h * D + tl.arange(0, D), 0.0, mask=h < H)

def launch(x, num_cores):
    H, D = x.shape[-2:]
    k[(num_cores,)](x, H=H, D=D)
""",
        # a grid-stride loop over row blocks, masked by the row count (Liger's Ascend norms)
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    pid = tl.program_id(0)
    grid_stride = tl.num_programs(0) * BM
    num_iterations = tl.cdiv(n_rows, grid_stride)
    cols = tl.arange(0, N)
    for i in range(num_iterations):
        rows = i * grid_stride + pid * BM + tl.arange(0, BM)
        mask = rows[:, None] < n_rows
        v = tl.load(x + rows[:, None] * N + cols[None, :], mask=mask)
        tl.store(y + rows[:, None] * N + cols[None, :], v, mask=mask)

def launch(x, y, cores):
    n_rows, N = x.shape
    k[(cores,)](x, y, n_rows, N=N, BM=8)
""",
        # the strided form with its bound check
        """
import triton
import triton.language as tl

@triton.jit
def k(x, total, N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for start in range(0, total, nprog):
        task = start + pid
        if task < total:
            tl.store(x + task * N + tl.arange(0, N), 0.0)

def launch(x, cores):
    total, N = x.shape
    k[(cores,)](x, total, N=N)
""",
        # a host loop launching chunks of the work, each with its offset
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, OFFSET, BLOCK: tl.constexpr):
    offs = OFFSET * BLOCK + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, 0.0, mask=offs < n)

def launch(x):
    n = x.numel()
    tiles = triton.cdiv(n, 1024)
    for off in range(0, tiles, 65535):
        k[(min(65535, tiles - off),)](x, n, OFFSET=off, BLOCK=1024)
""",
        # a per-core partials kernel: one slot per core, no count handed over
        """
import triton
import triton.language as tl

@triton.jit
def k(partials, out, D: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(out + pid * D + tl.arange(0, D), tl.load(partials + pid * D + tl.arange(0, D)))

def launch(partials, out, num_cores):
    k[(num_cores,)](partials, out, D=partials.shape[-1])
""",
        # sub-blocks of one program's tile: a loop inside the tile, no task loop
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, XBLOCK: tl.constexpr, XBLOCK_SUB: tl.constexpr):
    offset = tl.program_id(0) * XBLOCK
    base = tl.arange(0, XBLOCK_SUB)
    loops: tl.constexpr = (XBLOCK + XBLOCK_SUB - 1) // XBLOCK_SUB
    for i in range(loops):
        idx = offset + i * XBLOCK_SUB + base
        tl.store(y + idx, tl.load(x + idx))

def launch(x, y, ncore):
    xblock = x.numel() // ncore
    k[ncore, 1, 1](x, y, xblock, 1024)
""",
        # axis 1 read at the top but used only under a constexpr branch the launch turns
        # off, through a host variable in a splatted dict
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n, HAS_Y: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    pid_y = tl.program_id(1)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, 0.0, mask=offs < n)
    if HAS_Y:
        offs_y = pid_y * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs_y, 0.0, mask=offs_y < n)

def launch(x):
    n = x.numel()
    has_y = False
    options = {"HAS_Y": has_y}
    k[(triton.cdiv(n, 128),)](x, None, n, **options, BLOCK=128)
""",
        # axis 1 read in a helper the kernel calls only when `y` is given; it is not
        """
import triton
import triton.language as tl

@triton.jit
def _second(y, n, BLOCK: tl.constexpr):
    offs_y = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs_y, 0.0, mask=offs_y < n)

@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, 0.0, mask=offs < n)
    if y is not None:
        _second(y, n, BLOCK)

def launch(x):
    n = x.numel()
    k[(triton.cdiv(n, 128),)](x, None, n, BLOCK=128)
""",
        # a block that holds the whole row, chosen by a host helper and compared in the
        # kernel through a local copy of the bound
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, n_cols, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    col = tl.program_id(1)
    start = col * BLOCK_C
    offs = start + tl.arange(0, BLOCK_C)
    width = n_cols
    mask = offs < width
    tl.store(y + row * n_cols + offs, tl.load(x + row * n_cols + offs, mask=mask), mask=mask)

def _row_block(n):
    return max(triton.next_power_of_2(n), 16)

def launch(x, y):
    n_rows, n_cols = x.shape
    block = _row_block(x.shape[1])
    k[(n_rows,)](x, y, n_rows, n_cols, BLOCK_C=block)
""",
        # a grid rounded down where the launcher checks that the block divides the count
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs))

def launch(x, y):
    n = x.numel()
    block = 1024
    assert n % block == 0, "the size must be a multiple of the block"
    k[(n // block,)](x, y, BLOCK=block)
""",
        # a trip count the launcher passes without showing how it divides the work
        """
import triton
import triton.language as tl

@triton.jit
def k(x, ITERS, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for i in range(ITERS):
        row = pid + i * nprog
        tl.store(x + row * BLOCK + tl.arange(0, BLOCK), 0.0)

def launch(x, cores, iters):
    k[(cores,)](x, iters, BLOCK=x.shape[1])
""",
    ]
    INVALID = [
        # the Example of ASC023.md, which must stay the first case (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def pre_fwd(x, out, N: tl.constexpr, C: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_c = tl.program_id(1)  # the grid below has no axis 1
    n_offs = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_offs = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (n_offs[:, None] < N) & (c_offs[None, :] < C)
    v = tl.load(x + n_offs[:, None] * C + c_offs[None, :], mask=mask)
    tl.store(out + n_offs[:, None] * C + c_offs[None, :], v, mask=mask)


def mhc_pre_fwd(x, out):
    N, HC, C = x.shape
    grid = (get_npu_core_count(),)
    pre_fwd[grid](x, out, N=N, C=C, BLOCK_N=16, BLOCK_C=128)  # ASC023
""",
            rows=[20],
        ),
        # Liger-Kernel's Ascend mhc shape: a 1-D core grid, row and column tiles, no loop
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def pre_fwd(x, out, N: tl.constexpr, C: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_c = tl.program_id(1)
    n_offs = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_offs = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (n_offs[:, None] < N) & (c_offs[None, :] < C)
    v = tl.load(x + n_offs[:, None] * C + c_offs[None, :], mask=mask)
    tl.store(out + n_offs[:, None] * C + c_offs[None, :], v, mask=mask)

def mhc_pre_fwd(x, out, get_npu_core_count, pick_blocks):
    N, HC, C = x.shape
    num_cores = get_npu_core_count()
    block_n, block_c = pick_blocks(N, C)
    grid = (num_cores,)
    pre_fwd[grid](x, out, N=N, C=C, BLOCK_N=block_n, BLOCK_C=block_c)
""",
            rows=[20],
        ),
        # (a) alone: a 1-D grid over a kernel reading axis 1 in a helper
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def _head(H: tl.constexpr):
    return tl.program_id(1) % H

@triton.jit
def k(x, T, H: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    i_h = _head(H)
    o = i_t * BT + tl.arange(0, BT)
    tl.store(x + o * H + i_h, 0.0, mask=o < T)

def launch(x):
    B, T, H = x.shape
    k[(triton.cdiv(T, 64),)](x, T, H=H, BT=64)
""",
            rows=[18],
        ),
        # (b): `min(tiles, cores)` over a kernel with one tile per program
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, 0.0, mask=offs < n)

def launch(x, num_vectorcore):
    n = x.numel()
    k[(min(triton.cdiv(n, 1024), num_vectorcore),)](x, n, BLOCK=1024)
""",
            rows=[12],
        ),
        # (b) through a lambda over META, capped at the grid limit
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, N: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    tl.store(x + row * N + tl.arange(0, N), 0.0)

def launch(x):
    n_rows, N = x.shape
    grid = lambda META: (min(n_rows, 65535),)
    k[grid](x, n_rows, N=N)
""",
            rows=[15],
        ),
        # (b) capped at the grid limit by a conditional expression, written `kernel[n,]`
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, 0.0, mask=offs < n)

def launch(x):
    n = x.numel()
    tiles = triton.cdiv(n, 1024)
    n_prog = tiles if tiles < 65535 else 65535
    k[n_prog,](x, n, BLOCK=1024)
""",
            rows=[14],
        ),
        # (b) one row per program, no bound on the rows, a grid capped at the grid limit
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(y + row * n_cols + cols, tl.load(x + row * n_cols + cols, mask=mask), mask=mask)

def launch(x, y):
    n_rows, n_cols = x.shape
    M = min(n_rows, 65535)
    k[M,](x, y, n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols))
""",
            rows=[15],
        ),
        # (b) a grid helper caps a count of unknown name at the grid limit
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
        # (d) a grid that rounds the tile count down: the tail rows are dropped
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, D: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = rows[:, None] * D + tl.arange(0, D)[None, :]
    tl.store(y + offs, tl.load(x + offs))

def launch(x, y):
    n_rows, D = x.shape
    block_m = 16
    grid = (n_rows // block_m,)
    k[grid](x, y, D=D, BLOCK_M=block_m)
""",
            rows=[15],
        ),
        # (c): a task index never checked against the task count
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, total, N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for i in range(tl.cdiv(total, nprog)):
        task = pid + i * nprog
        tl.store(x + task * N + tl.arange(0, N), 0.0)

def launch(x, cores):
    total, N = x.shape
    k[(cores,)](x, total, N=N)
""",
            rows=[15],
        ),
        # (c) with the trip count divided on the host: `cdiv(n, cores)` rounds, each
        # reading `pid + i * nprog` up to the last round unchecked
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, ITERS, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for i in range(ITERS):
        row = pid + i * nprog
        tl.store(x + row * BLOCK + tl.arange(0, BLOCK), 0.0)

def launch(x, cores):
    n = x.shape[0]
    k[(cores,)](x, n, triton.cdiv(n, cores), BLOCK=x.shape[1])
""",
            rows=[15],
        ),
        # (c) in a kernel launched elsewhere: reported at its loop
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, total, N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for i in range(0, (total + nprog - 1) // nprog):
        task = i * nprog + pid
        tl.store(x + task * N + tl.arange(0, N), 0.0)
""",
            rows=[9],
        ),
        # (c) with the trip count in a local and a step of whole row blocks: the rows of
        # the last round are not masked
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    pid = tl.program_id(0)
    grid_stride = tl.num_programs(0) * BM
    num_iterations = tl.cdiv(n_rows, grid_stride)
    cols = tl.arange(0, N)
    for i in range(num_iterations):
        rows = i * grid_stride + pid * BM + tl.arange(0, BM)
        v = tl.load(x + rows[:, None] * N + cols[None, :])
        tl.store(y + rows[:, None] * N + cols[None, :], v)

def launch(x, y, cores):
    n_rows, N = x.shape
    k[(cores,)](x, y, n_rows, N=N, BM=8)
""",
            rows=[18],
        ),
        # (b) capped by a literal: 48 programs, one row each
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    v = tl.load(x + row * N + cols, mask=(row < n_rows) & (cols < N))
    tl.store(y + row * N + cols, v, mask=(row < n_rows) & (cols < N))

def launch(x, y):
    n_rows, N = x.shape
    k[(min(n_rows, 48),)](x, y, n_rows, N=N)
""",
            rows=[14],
        ),
        # (c) in the strided form: `start + pid` runs past `total` in the last round
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, total, N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for start in range(0, total, nprog):
        task = start + pid
        tl.store(x + task * N + tl.arange(0, N), 0.0)

def launch(x, cores):
    total, N = x.shape
    k[(cores,)](x, total, N=N)
""",
            rows=[15],
        ),
        # (b) with a block pointer: its shape bounds the rows, the id sets the offset
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, D: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p_x = tl.make_block_ptr(x, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
    p_y = tl.make_block_ptr(y, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
    tl.store(p_y, tl.load(p_x, boundary_check=(0, 1)) * 2.0, boundary_check=(0, 1))

def launch(x, y):
    T, D = x.shape
    num_cores = triton.runtime.driver.active.utils.get_device_properties(0)["num_vectorcore"]
    k[(num_cores,)](x, y, T, D=D, BT=64)
""",
            rows=[15],
        ),
        # (c) stepping by a grid size the launcher passes as a constexpr
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n_tasks, NPROG: tl.constexpr, D: tl.constexpr):
    pid = tl.program_id(0)
    for i in tl.range(0, tl.cdiv(n_tasks, NPROG)):
        t = pid + i * NPROG
        tl.store(x + t * D + tl.arange(0, D), 1.0)

def launch(x, cores):
    n_tasks, D = x.shape
    k[(cores,)](x, n_tasks, NPROG=cores, D=D)
""",
            rows=[14],
        ),
        # (b) one row per program with no bound: the row count is passed and never read
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def rms_kernel(x, y, n_rows, eps, N: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BN)
    mask = cols < N
    v = tl.load(x + row * N + cols, mask=mask, other=0.0)
    tl.store(y + row * N + cols, v * tl.rsqrt(tl.sum(v * v) / N + eps), mask=mask)

def rms(x, y, get_num_cores):
    x2 = x.view(-1, x.shape[-1])
    n_rows, N = x2.shape
    grid = (get_num_cores(),)
    rms_kernel[grid](x2, y, n_rows, 1e-6, N=N, BN=triton.next_power_of_2(N))
""",
            rows=[17],
        ),
        # (a) through a grid helper called at the launch
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    tl.store(x + om[:, None] * N + on[None, :], 0.0, mask=(om[:, None] < M) & (on[None, :] < N))

def make_grid(M):
    return (triton.cdiv(M, 32),)

def launch(x):
    M, N = x.shape
    k[make_grid(M)](x, M, N, BM=32, BN=32)
""",
            rows=[18],
        ),
    ]
