"""The reference launchers Catalogue IV's launcher rules point to, under the interpreter.

* ASC025: every reference launcher returns before launching on an empty input (no grid
  of 0 programs), with the right empty result;
* ASC030: `softmax_fwd_kernel` reads a row block before it writes it, so launched with
  one tensor as input and output it still computes softmax (a kernel that wrote and read
  back through two aliased parameters would read its own output here);
* ASC031: `byte_copy.copy_rows` copies tensors of any dtype through a table of their
  addresses, each scalar address cast to a pointer once.
"""

import pytest
import torch

from reference_kernels import byte_copy, chunk_o, core_grid, cumsum, ub_rows
from reference_kernels.core_grid import VECTOR_CORES_ENV


class _Launches:
    """Records each grid a module's kernel is launched with, then launches it."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.grids = []

    def __getitem__(self, grid):
        self.grids.append(grid)
        return self.kernel[grid]


def _record(monkeypatch, module, name):
    launches = _Launches(getattr(module, name))
    monkeypatch.setattr(module, name, launches)
    return launches


@pytest.mark.parametrize("shape", [(0, 64), (0, 0, 8), (2, 0, 16)])
def test_rms_norm_and_softmax_launch_nothing_on_empty_inputs(monkeypatch, shape):
    norm = _record(monkeypatch, core_grid, "rms_norm_fwd_kernel")
    soft = _record(monkeypatch, ub_rows, "softmax_fwd_kernel")
    x = torch.zeros(shape)
    assert core_grid.rms_norm_fwd(x, torch.ones(shape[-1])).shape == shape
    assert ub_rows.softmax_fwd(x).shape == shape
    assert norm.grids == [] and soft.grids == []
    # and they do launch once there are rows
    core_grid.rms_norm_fwd(torch.ones(2, 8), torch.ones(8))
    assert norm.grids == [(1,)]


def test_chunk_kernels_launch_nothing_without_tokens(monkeypatch):
    names = ("chunk_fwd_kernel_o", "chunk_bwd_kernel_dv_local", "chunk_bwd_kernel_dqkwg")
    launches = [_record(monkeypatch, chunk_o, n) for n in names]
    B, T, H, K, V = 2, 0, 2, 16, 16
    q, k = torch.randn(B, T, H, K), torch.randn(B, T, H, K)
    v, do = torch.randn(B, T, H, V), torch.randn(B, T, H, V)
    h = torch.randn(B, 0, H, K, V)
    g = torch.randn(B, T, H)
    assert chunk_o.chunk_fwd_o(q, k, v, h, g).shape == (B, T, H, V)
    assert chunk_o.chunk_bwd_dv_local(q, k, do, g).shape == (B, T, H, V)
    dq, dk, dw, dg = chunk_o.chunk_bwd_dqkwg(q, k, v, do, h, h, g=g, w=k, dv=do)
    assert dq.shape == dk.shape == dw.shape == (B, T, H, K) and dg.shape == (B, T, H)
    assert [r.grids for r in launches] == [[], [], []]


def test_cumsum_launches_nothing_for_an_empty_batch(monkeypatch):
    launches = _record(monkeypatch, cumsum, "chunk_local_cumsum_kernel")
    assert cumsum.chunk_local_cumsum(torch.randn(0, 128, 4)).shape == (0, 128, 4)
    assert launches.grids == []
    cumsum.chunk_local_cumsum(torch.randn(1, 128, 4))
    assert launches.grids


@pytest.mark.parametrize("N", [100, 5000])
def test_softmax_kernel_with_one_tensor_as_input_and_output(monkeypatch, N):
    monkeypatch.setenv(VECTOR_CORES_ENV, "2")
    x = torch.randn(5, N) * 3.0
    expected = torch.softmax(x, dim=-1)
    BM, BN, one_pass = ub_rows.softmax_blocks(N, "ascend910b")
    grid = (min(2, triton_cdiv(5, BM)),)
    ub_rows.softmax_fwd_kernel[grid](x, x, 5, N=N, BM=BM, BN=BN, ONE_PASS=one_pass)
    torch.testing.assert_close(x, expected, rtol=1e-4, atol=1e-6)


def triton_cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("cores", ["1", "3"])
def test_copy_rows_copies_tensors_of_any_dtype_by_address(monkeypatch, cores):
    monkeypatch.setenv(VECTOR_CORES_ENV, cores)
    gen = torch.Generator().manual_seed(0)
    srcs = [
        torch.randn(3000, generator=gen),  # 12,000 bytes: several blocks and a tail
        torch.randint(-100, 100, (37,), generator=gen, dtype=torch.int16),
        torch.randn(4, 5, generator=gen).to(torch.float16),
        torch.empty(0),  # nothing to copy: left out of the launch
        torch.randint(0, 255, (1,), generator=gen, dtype=torch.uint8),
    ]
    dsts = [torch.zeros_like(s) for s in srcs]
    byte_copy.copy_rows(srcs, dsts)
    for s, d in zip(srcs, dsts):
        assert torch.equal(s, d)


def test_copy_rows_between_dtypes_of_one_size_and_nothing_to_copy(monkeypatch):
    launches = _record(monkeypatch, byte_copy, "copy_rows_kernel")
    src = torch.arange(8, dtype=torch.int32)
    dst = torch.zeros(8, dtype=torch.float32)
    byte_copy.copy_rows([src], [dst])
    assert torch.equal(dst.view(torch.int32), src)
    byte_copy.copy_rows([torch.empty(0)], [torch.empty(0)])
    byte_copy.copy_rows([], [])
    assert launches.grids == [(1,)]
    with pytest.raises(ValueError, match="sizes differ"):
        byte_copy.copy_rows([src], [torch.zeros(3)])
