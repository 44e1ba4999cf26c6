import torch
from kernels import rms_norm, seq_lengths


def test_seq_lengths(device):
    cu_ends = torch.tensor([3, 7, 7, 12, 20], dtype=torch.int32, device=device)
    assert seq_lengths(cu_ends).tolist() == [3, 4, 0, 5, 8]


def test_rms_norm(device):
    x = torch.randn(50, 64, device=device)
    w = torch.rand(64, device=device)
    want = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    torch.testing.assert_close(rms_norm(x, w), want)
