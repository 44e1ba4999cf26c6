"""reference_kernels.core_grid: RMSNorm forward on the vector-core grid."""

from pathlib import Path

import pytest
import torch
from _jit_signature import jit_signature

from reference_kernels import core_grid
from reference_kernels import torch_reference as oracle
from reference_kernels.core_grid import VECTOR_CORES_ENV, rms_norm_fwd

TOL = {torch.float32: 1e-5, torch.float16: 2e-3}

# (leading shape, N, dtype): ragged row counts, one and two passes
CASES = [
    pytest.param((2, 37), 64, torch.float32, id="B2-T37-N64"),
    pytest.param((2, 50), 96, torch.float32, id="B2-T50-N96-masked-columns"),
    pytest.param((3,), 1000, torch.float32, id="rows3-N1000"),
    pytest.param((2, 9), 5000, torch.float32, id="B2-T9-N5000-two-pass"),
    pytest.param((1, 1), 16, torch.float32, id="single-row"),
    pytest.param((2, 37), 64, torch.float16, id="B2-T37-N64-fp16"),
    pytest.param((2, 9), 5000, torch.float16, id="B2-T9-N5000-two-pass-fp16"),
]


def make(lead, N, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.randn(*lead, N, generator=gen) * 3.0).to(dtype)
    weight = (1.0 + 0.5 * torch.randn(N, generator=gen)).to(dtype)
    return x, weight


def rel_err(got, ref):
    return ((got.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()


@pytest.mark.parametrize(("lead", "N", "dtype"), CASES)
def test_rms_norm_fwd(lead, N, dtype):
    x, weight = make(lead, N, dtype)
    y = rms_norm_fwd(x, weight, 1e-5)
    assert y.shape == x.shape and y.dtype == dtype
    assert rel_err(y, oracle.rms_norm_fwd_ref(x, weight, 1e-5)) < TOL[dtype]


@pytest.mark.parametrize("cores", [1, 3])
@pytest.mark.parametrize("N", [64, 5000])
def test_task_loop_covers_every_row_block_with_few_programs(monkeypatch, cores, N):
    monkeypatch.setenv(VECTOR_CORES_ENV, str(cores))
    # more row blocks than programs: 300 rows of 128 (N=64) or 150 rows of 2 (N=5000)
    x, weight = make((300,), N, torch.float32, seed=1)
    y = rms_norm_fwd(x, weight)
    assert rel_err(y, oracle.rms_norm_fwd_ref(x, weight)) < TOL[torch.float32]


def test_grid_is_the_vector_core_count_capped_by_the_row_blocks(monkeypatch):
    grids = []
    kernel = core_grid.rms_norm_fwd_kernel

    class Recorder:
        def __getitem__(self, grid):
            grids.append(grid)
            return kernel[grid]

    monkeypatch.setattr(core_grid, "rms_norm_fwd_kernel", Recorder())
    monkeypatch.setenv(VECTOR_CORES_ENV, "4")
    x, weight = make((1000,), 64, torch.float32)
    rms_norm_fwd(x, weight)  # 1000 rows / 128 per block = 8 blocks > 4 cores
    rms_norm_fwd(x[:200], weight)  # 2 blocks < 4 cores
    assert grids == [(4,), (2,)]


def test_empty_and_mismatched_inputs():
    weight = torch.ones(8)
    assert rms_norm_fwd(torch.zeros(0, 8), weight).shape == (0, 8)
    with pytest.raises(ValueError, match="do not match"):
        rms_norm_fwd(torch.zeros(3, 7), weight)


def test_row_count_is_a_runtime_argument():
    """A new token count must not compile the kernel again (ASC013)."""
    constexprs, not_specialised = jit_signature(Path(core_grid.__file__), "rms_norm_fwd_kernel")
    assert "n_rows" not in constexprs and "n_rows" in not_specialised
    assert constexprs == {"N", "BM", "BN", "ONE_PASS"}
