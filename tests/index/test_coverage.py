"""Grid coverage (`ascend_lint/index/coverage.py`): whether a kernel shares its work out
over the grid itself is one answer, the same for ASC012 and ASC023."""

from __future__ import annotations

import ast
import textwrap

from ascend_lint.index import KernelIndex
from tests.lint_helpers import lint_code

TASK_LOOP_IN_A_HELPER = """
import torch
import triton
import triton.language as tl

@triton.jit
def _rows(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    for task in range(tl.program_id(0), tl.cdiv(n_rows, BM), tl.num_programs(0)):
        rows = task * BM + tl.arange(0, BM)
        offs = rows[:, None] * N + tl.arange(0, N)[None, :]
        m = rows[:, None] < n_rows
        tl.store(y + offs, tl.load(x + offs, mask=m), mask=m)

@triton.jit
def scale_kernel(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    _rows(x, y, n_rows, N, BM)

def scale(x):
    n_rows, N = x.shape
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(n_rows, 4),)](x, y, n_rows, N=N, BM=4)
    return y
"""


def test_a_task_loop_in_a_helper_is_the_kernels():
    index = KernelIndex.build(ast.parse(TASK_LOOP_IN_A_HELPER))
    kernel = next(fn for fn in index.kernels if fn.name == "scale_kernel")
    assert index.coverage.loops_over_programs(kernel)
    codes = {d.code for d in lint_code(TASK_LOOP_IN_A_HELPER).diagnostics}
    assert not codes & {"ASC012", "ASC023"}


def test_a_grid_stride_loop_from_an_inline_program_id():
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, n, step):
            for i in range(tl.program_id(0), n, step):
                tl.store(x + i, 0)
        """
    )
    index = KernelIndex.build(ast.parse(source))
    assert index.coverage.loops_over_programs(index.kernels[0])


def test_a_local_copy_of_a_parameter_bounds_the_axis():
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, n_cols, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            width = n_cols.to(tl.int32)
            tl.store(x + offs, 0.0, mask=offs < width)
        """
    )
    index = KernelIndex.build(ast.parse(source))
    assert set(index.coverage.tiles(index.kernels[0], 0).bounds) == {"n_cols"}


def test_how_a_kernel_uses_its_parameters():
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, T, N: tl.constexpr, D: tl.constexpr, NT, M, BT: tl.constexpr):
            i_t = tl.program_id(0)
            i_b = tl.program_id(1) % M
            o_t = i_t * BT + tl.arange(0, BT)
            o_d = tl.arange(0, D)
            for c in range(NT):
                for h in tl.static_range(N):
                    p = x + ((i_b * N + h) * T + o_t[:, None]) * D + o_d[None, :]
                    tl.store(p, 0.0, mask=(o_t[:, None] < T) & (o_d[None, :] < D))
        """
    )
    index = KernelIndex.build(ast.parse(source))
    uses = index.coverage.parameter_uses(index.kernels[0])
    assert {p: uses.get(p) for p in ("T", "N", "D", "NT", "M")} == {
        "T": "grid",
        "N": "unrolled",
        "D": "lanes",
        "NT": "lanes",
        "M": "index",
    }


def test_an_id_split_into_block_and_sub_block_has_no_one_tile_extent():
    """vLLM-Ascend's lightning attention: `off_nc // NUM_CBLOCK * BLOCK + off_nc %
    NUM_CBLOCK * CBLOCK`; each program covers CBLOCK rows of a BLOCK, so the grid check
    must not take one row (no block factor) for the tile."""
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def k(x, n, NUM_CBLOCK: tl.constexpr, BLOCK: tl.constexpr, CBLOCK: tl.constexpr):
            off_nc = tl.program_id(1)
            off_n = off_nc // NUM_CBLOCK
            off_c = off_nc % NUM_CBLOCK
            block_offset = off_n * BLOCK + off_c * CBLOCK
            rows = block_offset + tl.arange(0, CBLOCK)
            tl.store(x + rows, 0.0, mask=rows < n)
        """
    )
    index = KernelIndex.build(ast.parse(source))
    tiles = index.coverage.tiles(index.kernels[0], 1)
    assert tiles.opaque
