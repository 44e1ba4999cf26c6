"""reference_kernels.ub_rows: a row softmax whose tile is sized by the UB model.

Run under the interpreter against torch, up to rows of 70,000 columns (the column
loop), with few rows to stay fast; every launch here also goes through the strict
compile gate (tests/kernels), which fails a specialisation that overflows.  The last
tests lower the block sizes the helper picks for each target through `ascend-lint
compile` and require the UB upper bound to fit.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from _jit_signature import jit_signature

from ascend_lint import ub_model
from reference_kernels import ub_rows
from reference_kernels.core_grid import VECTOR_CORES_ENV
from reference_kernels.ub_rows import softmax_blocks, softmax_fwd, ub_block_size

REPO_ROOT = Path(__file__).resolve().parents[2]
TOL = {torch.float32: 1e-4, torch.bfloat16: 1e-2, torch.float16: 2e-3}

CASES = [
    pytest.param((3,), 100, torch.float32, id="rows3-N100-one-pass"),
    pytest.param((2, 5), 37, torch.float32, id="B2-T5-N37-masked-columns"),
    pytest.param((2,), 4096, torch.float32, id="rows2-N4096-one-tile"),
    pytest.param((2,), 4097, torch.float32, id="rows2-N4097-column-loop"),
    pytest.param((2,), 65536, torch.float32, id="rows2-N65536"),
    pytest.param((1,), 70_001, torch.float32, id="rows1-N70001-ragged-tail"),
    pytest.param((2,), 70_001, torch.bfloat16, id="rows2-N70001-bf16"),
    pytest.param((3,), 300, torch.float16, id="rows3-N300-fp16"),
]


def make(lead, N, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*lead, N, generator=gen) * 4.0).to(dtype)


@pytest.mark.parametrize(("lead", "N", "dtype"), CASES)
def test_softmax_fwd_matches_torch(lead, N, dtype):
    x = make(lead, N, dtype)
    y = softmax_fwd(x)
    assert y.shape == x.shape and y.dtype == dtype
    ref = torch.softmax(x.float(), dim=-1)
    assert (y.float() - ref).abs().max().item() < TOL[dtype] * ref.max().item()
    torch.testing.assert_close(y.float().sum(-1), torch.ones(lead), atol=1e-2, rtol=0)


def test_a_large_shift_in_a_later_block_rescales_the_running_sum():
    # the row max sits in the last column block: the online sum must be rescaled
    x = torch.zeros(1, 3 * ub_block_size() + 5)
    x[0, -1] = 60.0
    y = softmax_fwd(x)
    torch.testing.assert_close(y, torch.softmax(x, dim=-1))


@pytest.mark.parametrize("cores", [1, 3])
def test_task_loop_covers_every_row_block_with_few_programs(monkeypatch, cores):
    monkeypatch.setenv(VECTOR_CORES_ENV, str(cores))
    x = make((700,), 24, torch.float32, seed=1)  # 700 rows of 24: 6 blocks of 128 rows
    torch.testing.assert_close(softmax_fwd(x), torch.softmax(x, dim=-1))


def test_block_size_inverts_the_ub_model_for_the_target():
    assert ub_block_size("ascend910b") == 4096
    assert ub_block_size("a3") == 4096
    assert ub_block_size("ascend910_95") == 8192  # A5's larger UB doubles the tile
    for target in ub_model.TARGETS:
        tile = ub_block_size(target)
        capacity = ub_model.get_target(target).capacity_bits
        assert ub_rows.LIVE_TILES * 32 * tile <= capacity < ub_rows.LIVE_TILES * 32 * 2 * tile
    with pytest.raises(ValueError, match="no room"):
        ub_block_size("ascend910b", live_tiles=10_000)


def test_blocks_depend_on_the_row_width_only():
    assert softmax_blocks(100) == (32, 128, True)
    assert softmax_blocks(3) == (512, 8, True)
    assert softmax_blocks(65536) == (1, 4096, False)
    assert softmax_blocks(65536, "a5") == (1, 8192, False)
    constexprs, not_specialised = jit_signature(Path(ub_rows.__file__), "softmax_fwd_kernel")
    assert constexprs == {"N", "BM", "BN", "ONE_PASS"} and "n_rows" in not_specialised


def test_empty_input():
    assert softmax_fwd(torch.zeros(0, 8)).shape == (0, 8)
    with pytest.raises(ValueError, match="0-d"):
        softmax_fwd(torch.tensor(1.0))


def _lower(target: str, dtype: str, N: int) -> dict:
    BM, BN, one_pass = softmax_blocks(N, target)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "ascend_lint",
            "compile",
            "reference_kernels/ub_rows.py::softmax_fwd_kernel",
            *("--constexpr", f"N={N}", "--constexpr", f"BM={BM}", "--constexpr", f"BN={BN}"),
            *("--constexpr", f"ONE_PASS={one_pass}", "--arg", f"x=*{dtype}"),
            *("--arg", f"y=*{dtype}", "--target", target, "--output-format", "json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("target", ["ascend910b", "ascend910_93"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("N", [100, 65536])
def test_the_chosen_blocks_fit_the_ub_by_the_compile_gates_upper_bound(target, dtype, N):
    result = _lower(target, dtype, N)
    assert result["verdict"] == "fits", result
    assert result["ub_bits_upper"] <= result["capacity_bits"]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("N", [100, 65536])
def test_the_chosen_blocks_never_overflow_a5(dtype, N):
    # no reuse of dead buffers is known on A5 (triton-ascend #2246), so the gate's upper
    # bound there is every buffer of the kernel at once, which the tile need not fit;
    # what must be live at once has to
    result = _lower("ascend910_95", dtype, N)
    assert result["verdict"] != "overflows", result
    assert result["ub_bits_lower"] <= result["capacity_bits"]
