"""reference_kernels.shift_window (depthwise causal conv on the vector-core grid)."""

from pathlib import Path

import pytest
import torch
from _jit_signature import jit_signature

from reference_kernels import shift_window
from reference_kernels import torch_reference as oracle
from reference_kernels.core_grid import VECTOR_CORES_ENV
from reference_kernels.shift_window import causal_conv1d_fwd

TOL = {torch.float32: 1e-5, torch.float16: 2e-3}

# (B, T, D, W, chunk, bias, cu_seqlens, dtype)
CASES = [
    pytest.param(2, 50, 40, 4, 16, True, None, torch.float32, id="B2-T50-D40-W4-bias"),
    pytest.param(2, 33, 64, 3, 16, False, None, torch.float32, id="B2-T33-D64-W3"),
    pytest.param(3, 7, 24, 4, 16, True, None, torch.float32, id="B3-T7-shorter-than-window-chunk"),
    pytest.param(2, 3, 16, 4, 16, True, None, torch.float32, id="B2-T3-shorter-than-window"),
    pytest.param(2, 40, 200, 2, 32, True, None, torch.float32, id="B2-T40-D200-two-channel-blocks"),
    pytest.param(1, 64, 32, 1, 32, True, None, torch.float32, id="B1-T64-W1"),
    pytest.param(
        1, 129, 40, 4, 16, True, (0, 37, 100, 129), torch.float32, id="varlen0-37-100-129"
    ),
    pytest.param(1, 80, 48, 3, 16, False, (0, 2, 5, 80), torch.float32, id="varlen-short-seqs"),
    pytest.param(1, 60, 32, 4, 16, True, (0, 20, 20, 60), torch.float32, id="varlen-empty-seq"),
    pytest.param(2, 50, 40, 4, 16, True, None, torch.float16, id="B2-T50-D40-W4-fp16"),
    pytest.param(
        1, 129, 40, 4, 32, True, (0, 37, 100, 129), torch.float16, id="varlen0-37-100-129-fp16"
    ),
]


def make(B, T, D, W, use_bias, dtype, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, D, generator=gen).to(dtype)
    weight = (torch.randn(D, W, generator=gen) * 0.5).to(dtype)
    bias = torch.randn(D, generator=gen).to(dtype) if use_bias else None
    return x, weight, bias


def rel_err(got, ref):
    return ((got.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()


@pytest.mark.parametrize(("B", "T", "D", "W", "BT", "use_bias", "cu", "dtype"), CASES)
def test_causal_conv1d_fwd(B, T, D, W, BT, use_bias, cu, dtype):
    x, weight, bias = make(B, T, D, W, use_bias, dtype)
    cu_seqlens = None if cu is None else torch.tensor(cu, dtype=torch.int64)
    y = causal_conv1d_fwd(x, weight, bias, cu_seqlens=cu_seqlens, chunk_size=BT)
    ref = oracle.causal_conv1d_fwd_ref(x, weight, bias, cu_seqlens=cu_seqlens)
    assert y.shape == x.shape and y.dtype == dtype
    assert rel_err(y, ref) < TOL[dtype]


@pytest.mark.parametrize("cores", [1, 3])
def test_task_loop_covers_every_tile_with_few_programs(monkeypatch, cores):
    """With fewer programs than tiles each program walks several tiles of the loop."""
    monkeypatch.setenv(VECTOR_CORES_ENV, str(cores))
    x, weight, bias = make(2, 70, 200, 4, True, torch.float32, seed=1)
    cu_seqlens = torch.tensor((0, 45, 140), dtype=torch.int64)
    for xs, cu in ((x, None), (x.reshape(1, 140, 200), cu_seqlens)):
        y = causal_conv1d_fwd(xs, weight, bias, cu_seqlens=cu, chunk_size=16)
        ref = oracle.causal_conv1d_fwd_ref(xs, weight, bias, cu_seqlens=cu)
        assert rel_err(y, ref) < TOL[torch.float32]


def test_sequence_boundaries_really_restart_the_window():
    """Packing two sequences must differ from convolving them as one stream."""
    x, weight, bias = make(1, 40, 16, 4, True, torch.float32, seed=2)
    cu_seqlens = torch.tensor((0, 17, 40), dtype=torch.int64)
    packed = causal_conv1d_fwd(x, weight, bias, cu_seqlens=cu_seqlens)
    stream = causal_conv1d_fwd(x, weight, bias)
    torch.testing.assert_close(packed[:, :17], stream[:, :17], rtol=1e-6, atol=1e-6)
    # the first W - 1 tokens of the second sequence lose their look-back
    assert (packed[:, 17:20] - stream[:, 17:20]).abs().max() > 1e-2
    torch.testing.assert_close(packed[:, 20:], stream[:, 20:], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("shape", "weight_shape", "message"),
    [
        ((2, 8), (8, 4), "x must be"),
        ((1, 8, 16), (8, 4), "x must be"),
        ((1, 8, 16), (16,), "weight must be"),
        ((1, 8, 16), (16, 5), "outside 1..4"),
    ],
)
def test_bad_shapes_are_rejected(shape, weight_shape, message):
    with pytest.raises(ValueError, match=message):
        causal_conv1d_fwd(torch.zeros(shape), torch.zeros(weight_shape))


def test_sequence_length_and_task_counts_are_runtime_arguments():
    """A new batch or sequence length must not compile the kernel again (ASC013)."""
    constexprs, not_specialised = jit_signature(
        Path(shift_window.__file__), "causal_conv1d_fwd_kernel"
    )
    runtime = {"T", "n_tiles", "n_t_tiles"}
    assert not runtime & constexprs
    assert runtime <= not_specialised
    assert constexprs == {"D", "W", "BT", "BD", "HAS_BIAS", "IS_VARLEN"}
