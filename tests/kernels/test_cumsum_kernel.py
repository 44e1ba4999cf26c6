"""reference_kernels.cumsum (full chunks and tail chunk on separate constexpr paths)."""

import pytest
import torch

from reference_kernels import torch_reference as oracle
from reference_kernels.cumsum import chunk_local_cumsum

CASES = [
    pytest.param(2, 50, 4, 16, None, torch.float32, id="B2-T50-H4-BT16-tail"),
    pytest.param(2, 64, 3, 32, None, torch.float32, id="B2-T64-H3-BT32-no-tail"),
    pytest.param(1, 10, 2, 16, None, torch.float32, id="B1-T10-H2-BT16-tail-only"),
    pytest.param(1, 129, 3, 16, (0, 37, 100, 129), torch.float32, id="varlen0-37-100-129-H3-BT16"),
    pytest.param(1, 80, 2, 16, (0, 5, 37, 80), torch.float16, id="varlen0-5-37-80-H2-BT16-fp16-in"),
    pytest.param(1, 96, 20, 32, (0, 32, 96), torch.float32, id="varlen0-32-96-H20-BT32-no-tail"),
]


@pytest.mark.parametrize(("B", "T", "H", "BT", "cu", "dtype"), CASES)
def test_chunk_local_cumsum(B, T, H, BT, cu, dtype):
    gen = torch.Generator().manual_seed(0)
    g = torch.randn(B, T, H, generator=gen).to(dtype)
    cu_seqlens = None if cu is None else torch.tensor(cu, dtype=torch.int64)
    out = chunk_local_cumsum(g, BT, cu_seqlens=cu_seqlens)
    ref = oracle.chunk_local_cumsum_ref(g, BT, cu_seqlens=cu_seqlens)
    assert out.dtype == torch.float32 and out.shape == g.shape
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("B", "T", "H", "BT", "cu"),
    [
        pytest.param(2, 50, 4, 16, None, id="B2-T50-H4-BT16"),
        pytest.param(1, 129, 3, 16, (0, 37, 100, 129), id="varlen0-37-100-129-H3"),
    ],
)
def test_chunk_local_cumsum_with_initial(B, T, H, BT, cu):
    """The optional carry-in reaches exactly the first chunk of every sequence."""
    gen = torch.Generator().manual_seed(1)
    g = torch.randn(B, T, H, generator=gen)
    cu_seqlens = None if cu is None else torch.tensor(cu, dtype=torch.int64)
    n_seq = B if cu is None else len(cu) - 1
    initial = torch.randn(n_seq, H, generator=gen)
    out = chunk_local_cumsum(g, BT, cu_seqlens=cu_seqlens, initial=initial)
    ref = oracle.chunk_local_cumsum_ref(g, BT, cu_seqlens=cu_seqlens, initial=initial)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    plain = oracle.chunk_local_cumsum_ref(g, BT, cu_seqlens=cu_seqlens)
    assert not torch.allclose(ref, plain)  # the carry-in really changed something


@pytest.mark.parametrize("cores", ["1", "3"])
@pytest.mark.parametrize(
    ("B", "T", "cu"),
    [
        pytest.param(3, 70, None, id="B3-T70"),
        pytest.param(1, 129, (0, 37, 100, 129), id="varlen0-37-100-129"),
    ],
)
def test_task_loop_covers_every_chunk_with_few_cores(monkeypatch, cores, B, T, cu):
    """A grid of 1 or 3 programs walks all (batch, chunk) tasks of both launches."""
    monkeypatch.setenv("ASCEND_LINT_VECTOR_CORES", cores)
    gen = torch.Generator().manual_seed(2)
    g = torch.randn(B, T, 3, generator=gen)
    cu_seqlens = None if cu is None else torch.tensor(cu, dtype=torch.int64)
    n_seq = B if cu is None else len(cu) - 1
    initial = torch.randn(n_seq, 3, generator=gen)
    out = chunk_local_cumsum(g, 16, cu_seqlens=cu_seqlens, initial=initial)
    ref = oracle.chunk_local_cumsum_ref(g, 16, cu_seqlens=cu_seqlens, initial=initial)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
