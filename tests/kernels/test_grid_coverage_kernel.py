"""ASC023's wrong-result class under the interpreter: a core-count grid over a kernel
that maps one program to one row block leaves every block past the grid unwritten; the
same body in a task loop writes them all. The linter tells the two launches apart."""

from pathlib import Path

import pytest
import torch
from _grid_coverage_kernels import scale_rows_one_tile, scale_rows_task_loop, split_id_copy

from ascend_lint.engine import lint_source

KERNELS = Path(__file__).with_name("_grid_coverage_kernels.py")
BM = 4  # rows per block, as the launchers bind it


def make(n_rows, n_cols=16):
    return torch.randn(n_rows, n_cols, generator=torch.Generator().manual_seed(0))


# the compile gate reports these launches (strict mode fails a test without the marker)
@pytest.mark.ascend_grid_misses_work
@pytest.mark.parametrize(("n_rows", "num_cores"), [(37, 3), (64, 5)])
def test_core_grid_without_task_loop_leaves_rows_unwritten(n_rows, num_cores):
    x = make(n_rows)
    y = scale_rows_one_tile(x, num_cores)
    written = num_cores * BM  # the grid's programs, one row block each
    assert written < n_rows
    torch.testing.assert_close(y[:written], x[:written] * 2)
    # every row past the grid still holds what the output was filled with
    assert torch.isnan(y[written:]).all()


@pytest.mark.parametrize(("n_rows", "num_cores"), [(37, 3), (64, 5), (3, 8)])
def test_the_task_loop_writes_every_row(n_rows, num_cores):
    x = make(n_rows)
    torch.testing.assert_close(scale_rows_task_loop(x, num_cores), x * 2)


# the programs past the last row block still issue their fully masked tile, a whole tile
# past the end (the sanitizer's masked-out-of-bounds): the numbers are right, the addresses
# are not
@pytest.mark.ascend_sanitize_allow(kind="masked-out-of-bounds")
def test_small_inputs_hide_the_defect():
    """Fewer row blocks than programs: the one-tile kernel gives the right numbers, which
    is how such a launcher passes its tests."""
    x = make(7)
    torch.testing.assert_close(scale_rows_one_tile(x, 8), x * 2)


def test_asc023_reports_the_one_tile_launch_only():
    result = lint_source(str(KERNELS), KERNELS.read_bytes(), frozenset({"ASC023"}))
    found = [(d.code, d.start.row) for d in result.diagnostics]
    source = KERNELS.read_text().splitlines()
    launch_row = next(
        i for i, line in enumerate(source, 1) if "scale_rows_one_tile_kernel[" in line
    )
    assert found == [("ASC023", launch_row)]


@pytest.mark.parametrize("n", [300, 256, 40])
def test_an_id_split_into_block_and_sub_block_covers_every_row(n):
    """The gate's grid check must see that each program covers a sub-block of rows: the
    grid has every program it needs (no finding, which strict mode would fail on)."""
    x = torch.arange(float(n))
    torch.testing.assert_close(split_id_copy(x), x)
