"""reference_kernels.row_ops: codebook lookups through the Unified Buffer, float32
selects, rows at a 32-byte pitch, and a blend that never chooses a pointer between
tensors; each against torch under the interpreter (and through the strict compile gate,
like every kernel test here)."""

import pytest
import torch

from reference_kernels import row_ops
from reference_kernels import torch_reference as oracle
from reference_kernels.core_grid import VECTOR_CORES_ENV


def make_nf4(n_rows, nb, seed=0):
    gen = torch.Generator().manual_seed(seed)
    packed = torch.randint(0, 256, (n_rows, nb), generator=gen, dtype=torch.int32)
    codebook = torch.linspace(-1.0, 1.0, row_ops.LEVELS) ** 3
    scale = torch.rand(n_rows, generator=gen) + 0.5
    return packed.to(torch.uint8), codebook, scale


@pytest.mark.parametrize(
    ("n_rows", "nb"), [(5, 16), (9, 24), (1, 3), (17, 64)], ids=["5x16", "9x24", "1x3", "17x64"]
)
def test_nf4_dequant_matches_torch(n_rows, nb):
    packed, codebook, scale = make_nf4(n_rows, nb)
    got = row_ops.nf4_dequant(packed, codebook, scale, block_m=4)
    torch.testing.assert_close(got, oracle.nf4_dequant_ref(packed, codebook, scale))


def test_nf4_dequant_uses_every_code_and_both_nibbles():
    # bytes 0..255 once each: every (lo, hi) pair, so a swapped nibble cannot pass
    packed = torch.arange(256, dtype=torch.int32).to(torch.uint8).reshape(16, 16)
    codebook = torch.arange(row_ops.LEVELS, dtype=torch.float32) * 10.0
    got = row_ops.nf4_dequant(packed, codebook, torch.ones(16), block_m=4)
    assert got[0, 1].item() == 10.0 and got[0, 16 + 1].item() == 0.0  # byte 1: lo 1, hi 0
    assert got[1, 0].item() == 0.0 and got[1, 16].item() == 10.0  # byte 16: lo 0, hi 1
    torch.testing.assert_close(got, oracle.nf4_dequant_ref(packed, codebook, torch.ones(16)))


@pytest.mark.parametrize(
    ("lead", "D", "dtype"),
    [
        ((3,), 123, torch.float32),  # 492-byte rows: padded to 512 on the host
        ((2, 3), 64, torch.float32),  # already a multiple of 32 bytes
        ((4,), 200, torch.float16),  # 400 bytes: padded to 416
        ((1,), 7, torch.float32),  # narrower than one column block
    ],
    ids=["D123-fp32", "B2-T3-D64", "D200-fp16", "D7"],
)
def test_row_variance_matches_torch(lead, D, dtype):
    gen = torch.Generator().manual_seed(1)
    x = (torch.randn(*lead, D, generator=gen) * 3.0 + 2.0).to(dtype)
    got = row_ops.row_variance(x, block_m=2, block_d=32)
    assert got.shape == lead
    torch.testing.assert_close(got, oracle.row_variance_ref(x), rtol=1e-4, atol=1e-4)


def test_padded_pitch_is_a_multiple_of_32_bytes():
    assert row_ops.padded_pitch(123, 4) == 128
    assert row_ops.padded_pitch(200, 2) == 208
    assert row_ops.padded_pitch(64, 4) == 64
    assert row_ops.padded_pitch(5, 1) == 32


@pytest.mark.parametrize("split", [0, 37, 100, 130])
def test_blend_takes_a_then_b(split):
    gen = torch.Generator().manual_seed(2)
    a = torch.randn(130, generator=gen)
    b = torch.randn(130, generator=gen)
    a[5], b[120] = -0.0, float("nan")  # copied as they are, bit for bit
    got = row_ops.blend(a, b, split, block=32)
    want = torch.cat([a[:split], b[split:]])
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))


@pytest.mark.parametrize("cores", [1, 3])
def test_task_loops_cover_every_block_with_few_programs(monkeypatch, cores):
    monkeypatch.setenv(VECTOR_CORES_ENV, str(cores))
    packed, codebook, scale = make_nf4(19, 8, seed=3)
    got = row_ops.nf4_dequant(packed, codebook, scale, block_m=2)
    torch.testing.assert_close(got, oracle.nf4_dequant_ref(packed, codebook, scale))
    x = torch.randn(11, 45)
    torch.testing.assert_close(
        row_ops.row_variance(x, block_m=2, block_d=16), x.var(-1, unbiased=False)
    )
    a, b = torch.randn(300), torch.randn(300)
    assert torch.equal(row_ops.blend(a, b, 150, block=16), torch.cat([a[:150], b[150:]]))
