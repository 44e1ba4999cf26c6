"""Shapes the kernel tests run, and deterministic inputs for them.

Kept small (K = V <= 48, T <= 129) so the interpreter stays fast, but chosen to hit
every constexpr path: ragged T, B in {1, 2}, varlen, HV in {1, H, 2H, 4H}, g=None,
non-power-of-two head dims, chunk sizes 16..64, fp32 and fp16.
"""

from dataclasses import dataclass
from typing import Optional

import torch

from reference_kernels.torch_reference import iter_chunks

VARLEN = (0, 37, 100, 129)


@dataclass(frozen=True)
class Case:
    B: int
    T: int
    H: int
    HV: int
    D: int
    BT: int
    use_g: bool
    dtype: torch.dtype
    cu: Optional[tuple[int, ...]] = None

    @property
    def id(self) -> str:
        dt = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}[self.dtype]
        where = f"varlen{'-'.join(map(str, self.cu))}" if self.cu else f"B{self.B}-T{self.T}"
        gate = "g" if self.use_g else "nog"
        return f"{where}-H{self.H}-HV{self.HV}-D{self.D}-BT{self.BT}-{gate}-{dt}"

    @property
    def cu_seqlens(self):
        return None if self.cu is None else torch.tensor(self.cu, dtype=torch.int64)


F32, F16 = torch.float32, torch.float16
CASES = [
    Case(2, 50, 2, 4, 32, 16, True, F32),  # HV = 2H, ragged tail chunk
    Case(2, 50, 2, 2, 32, 16, True, F32),  # HV = H
    Case(2, 40, 1, 1, 32, 16, True, F32),  # HV = 1: legacy gate branch
    Case(1, 64, 2, 4, 32, 32, True, F32),  # B = 1, T multiple of BT
    Case(1, 129, 2, 4, 32, 16, True, F32, VARLEN),  # varlen, several sequences
    Case(1, 129, 1, 1, 16, 32, True, F32, VARLEN),  # varlen + legacy branch
    Case(2, 50, 2, 4, 32, 16, False, F32),  # no gate
    Case(1, 129, 2, 2, 32, 16, False, F32, VARLEN),  # varlen, no gate
    Case(2, 33, 1, 2, 48, 16, True, F32),  # head dim 48: masked K/V tails
    Case(2, 50, 2, 4, 32, 16, True, F16),
    Case(1, 129, 2, 4, 32, 32, True, F16, VARLEN),
    Case(2, 70, 2, 2, 32, 64, True, F16),  # chunk 64
    Case(2, 70, 1, 4, 32, 32, True, F32),  # HV = 4H: two head pairs per q/k head (dv_local)
    Case(1, 129, 1, 4, 32, 16, False, F16, VARLEN),  # HV = 4H, varlen, no gate
]

# relative max-abs error allowed against the fp32 oracle
TOL = {F32: 2e-5, F16: 3e-3}


def make_inputs(case: Case, seed: int = 0) -> dict:
    """All tensors any of the three ops needs, on CPU."""
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen) * scale).to(case.dtype)

    B, T, H, HV, D = case.B, case.T, case.H, case.HV, case.D
    cu = case.cu_seqlens
    chunks = list(iter_chunks(B, T, cu, case.BT))
    NT = len(chunks) // B
    g = None
    if case.use_g:
        # Realistic gate: log2 decays in (-0.35, -0.05], cumulated inside each chunk.
        step = -(0.05 + 0.3 * torch.rand(B, T, HV, generator=gen))
        g = torch.zeros(B, T, HV)
        for b, s, e, _ in chunks:
            g[b, s:e] = step[b, s:e].cumsum(0)
    return dict(
        q=randn(B, T, H, D),
        k=randn(B, T, H, D),
        v=randn(B, T, HV, D),
        do=randn(B, T, HV, D),
        h=randn(B, NT, HV, D, D, scale=0.5),
        dh=randn(B, NT, HV, D, D, scale=0.5),
        w=randn(B, T, HV, D),
        dv=randn(B, T, HV, D),
        g=g,
        cu_seqlens=cu,
    )


def rel_err(got: torch.Tensor, ref: torch.Tensor) -> float:
    return (
        (got.float() - ref.float()).abs().max() / ref.float().abs().max().clamp_min(1e-6)
    ).item()
