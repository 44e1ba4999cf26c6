"""Plain torch oracles for the reference kernels (fp32 math, any device).

They walk the chunks (or sequences, or window taps) one by one in Python with dense
torch ops, so they are slow but obviously right.  Semantics (shapes, gate
convention, varlen) are those documented in the kernel modules
(``reference_kernels/chunk_o.py``, ``cumsum.py``, ``core_grid.py``,
``shift_window.py``, ``segments.py``, ``row_ops.py``); the backward oracle uses autograd
rather than hand-derived
formulas so that it checks the kernels' algebra independently.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import torch

__all__ = [
    "causal_conv1d_fwd_ref",
    "chunk_bwd_dqkwg_ref",
    "chunk_bwd_dv_local_ref",
    "chunk_fwd_o_ref",
    "chunk_local_cumsum_ref",
    "iter_chunks",
    "nf4_dequant_ref",
    "rms_norm_fwd_ref",
    "row_variance_ref",
]

RCP_LN2 = 1.0 / math.log(2.0)


def iter_chunks(
    B: int, T: int, cu_seqlens: torch.Tensor | None, chunk_size: int
) -> Iterator[tuple[int, int, int, int]]:
    """Yield ``(b, start, end, state_idx)`` for every chunk.

    Rows ``start:end`` of batch ``b`` form the chunk; ``state_idx`` indexes dim 1 of
    ``h`` / ``dh``.  Chunks never cross a sequence boundary.
    """
    if cu_seqlens is None:
        for b in range(B):
            for c, s in enumerate(range(0, T, chunk_size)):
                yield b, s, min(s + chunk_size, T), c
        return
    offsets = [int(x) for x in cu_seqlens.tolist()]
    idx = 0
    for bos, eos in zip(offsets[:-1], offsets[1:]):
        for s in range(bos, eos, chunk_size):
            yield 0, s, min(s + chunk_size, eos), idx
            idx += 1


def _heads(x: torch.Tensor, HV: int) -> torch.Tensor:
    """[L, H, D] -> [HV, L, D] in fp32, repeating each q/k head for its value heads."""
    H = x.shape[1]
    return x.float().repeat_interleave(HV // H, dim=1).transpose(0, 1)


def _gate(g: torch.Tensor | None, b: int, s: int, e: int, HV: int, device) -> torch.Tensor:
    """Gate of one chunk as [HV, L] fp32 (zeros when there is no gate)."""
    if g is None:
        return torch.zeros(HV, e - s, device=device)
    return g[b, s:e].float().transpose(0, 1)


def _local_output(qc, kc, vc, hc, gc, scale):
    """o for one chunk, all heads: qc/kc [HV, L, K], vc [HV, L, V], hc [HV, K, V], gc [HV, L]."""
    L = qc.shape[1]
    causal = torch.ones(L, L, dtype=torch.bool, device=qc.device).tril()
    o_inter = (qc @ hc) * torch.exp2(gc)[..., None]
    decay = torch.exp2((gc[:, :, None] - gc[:, None, :]).masked_fill(~causal, 0.0))
    scores = (qc @ kc.transpose(1, 2)) * decay * causal
    return (o_inter + scores @ vc) * scale


def chunk_fwd_o_ref(q, k, v, h, g=None, scale=None, cu_seqlens=None, chunk_size=64):
    B, T, _, K = q.shape
    HV = v.shape[2]
    scale = K**-0.5 if scale is None else scale
    o = torch.zeros(v.shape, dtype=torch.float32, device=v.device)
    for b, s, e, c in iter_chunks(B, T, cu_seqlens, chunk_size):
        o_c = _local_output(
            _heads(q[b, s:e], HV),
            _heads(k[b, s:e], HV),
            v[b, s:e].float().transpose(0, 1),
            h[b, c].float(),
            _gate(g, b, s, e, HV, q.device),
            scale,
        )
        o[b, s:e] = o_c.transpose(0, 1)
    return o


def chunk_bwd_dv_local_ref(q, k, do, g=None, scale=None, cu_seqlens=None, chunk_size=64):
    B, T, _, K = q.shape
    HV = do.shape[2]
    scale = K**-0.5 if scale is None else scale
    dv = torch.zeros(do.shape, dtype=torch.float32, device=do.device)
    for b, s, e, _ in iter_chunks(B, T, cu_seqlens, chunk_size):
        qc, kc = _heads(q[b, s:e], HV), _heads(k[b, s:e], HV)
        gc = _gate(g, b, s, e, HV, q.device)
        L = e - s
        anti_causal = torch.ones(L, L, dtype=torch.bool, device=q.device).triu()
        # rows: the token whose dv we want (s); columns: later tokens t >= s
        decay = torch.exp2((gc[:, None, :] - gc[:, :, None]).masked_fill(~anti_causal, 0.0))
        scores = (kc @ qc.transpose(1, 2)) * decay * anti_causal * scale
        dv[b, s:e] = (scores @ do[b, s:e].float().transpose(0, 1)).transpose(0, 1)
    return dv


def chunk_bwd_dqkwg_ref(
    q, k, v, do, h, dh, g=None, w=None, dv=None, scale=None, cu_seqlens=None, chunk_size=64
):
    """Autograd of ``<do, o> + sum_c <dh[c], h_end[c]>`` w.r.t. q, k and g.

    Returns fp32 ``(dq, dk, dw, dg)``; ``dg`` is autodiff's dL/dg divided by ln 2.
    """
    B, T, _, K = q.shape
    HV = v.shape[2]
    scale = K**-0.5 if scale is None else scale
    q_r = q.detach().float().requires_grad_()
    k_r = k.detach().float().requires_grad_()
    g_r = g.detach().float().requires_grad_() if g is not None else None
    loss = q_r.new_zeros(())
    for b, s, e, c in iter_chunks(B, T, cu_seqlens, chunk_size):
        qc, kc = _heads(q_r[b, s:e], HV), _heads(k_r[b, s:e], HV)
        vc = v[b, s:e].float().transpose(0, 1)
        hc = h[b, c].float()
        gc = _gate(g_r, b, s, e, HV, q.device)
        o_c = _local_output(qc, kc, vc, hc, gc, scale)
        g_last = gc[:, -1]
        h_end = torch.exp2(g_last)[:, None, None] * hc + kc.transpose(1, 2) @ (
            vc * torch.exp2(g_last[:, None] - gc)[..., None]
        )
        loss = (
            loss
            + (do[b, s:e].float().transpose(0, 1) * o_c).sum()
            + (dh[b, c].float() * h_end).sum()
        )
    inputs = [q_r, k_r] + ([g_r] if g_r is not None else [])
    grads = torch.autograd.grad(loss, inputs)
    dq, dk = grads[0], grads[1]
    dg = grads[2] * RCP_LN2 if g_r is not None else None

    dw = None
    if w is not None:
        dw = torch.zeros(B, T, HV, K, dtype=torch.float32, device=q.device)
        for b, s, e, c in iter_chunks(B, T, cu_seqlens, chunk_size):
            # [L, HV, V] x [HV, K, V] -> [L, HV, K]
            dw[b, s:e] = -torch.einsum("lhv,hkv->lhk", dv[b, s:e].float(), h[b, c].float())
    return dq, dk, dw, dg


def chunk_local_cumsum_ref(g, chunk_size=64, cu_seqlens=None, initial=None):
    """fp32 cumsum of ``g [B, T, H]`` inside each chunk (chunks restart per sequence);
    ``initial [N, H]`` (N sequences) is carried into the first chunk of each sequence."""
    B, T, _ = g.shape
    out = torch.zeros(g.shape, dtype=torch.float32, device=g.device)
    starts = [0] if cu_seqlens is None else [int(x) for x in cu_seqlens[:-1].tolist()]
    for b, s, e, _ in iter_chunks(B, T, cu_seqlens, chunk_size):
        out[b, s:e] = g[b, s:e].float().cumsum(0)
        if initial is not None and s in starts:
            n = b if cu_seqlens is None else starts.index(s)
            out[b, s:e] += initial[n].float()
    return out


def rms_norm_fwd_ref(x, weight, eps=1e-6):
    """fp32 ``x / sqrt(mean(x**2, -1) + eps) * weight`` over the last dimension."""
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return xf * rstd * weight.float()


def causal_conv1d_fwd_ref(x, weight, bias=None, cu_seqlens=None):
    """fp32 depthwise causal conv of ``x [B, T, D]`` with ``weight [D, W]``.

    ``y[b, t] = bias + sum_w weight[:, w] * x[b, t - (W - 1) + w]``, tokens before the
    start of ``t``'s sequence counting as zero (every ``cu_seqlens`` sequence restarts).
    """
    B, T, _ = x.shape
    W = weight.shape[1]
    bounds = (
        [(b, 0, T) for b in range(B)]
        if cu_seqlens is None
        else [
            (0, int(s), int(e)) for s, e in zip(cu_seqlens[:-1].tolist(), cu_seqlens[1:].tolist())
        ]
    )
    y = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    for b, start, end in bounds:
        seq = x[b, start:end].float()
        out = torch.zeros_like(seq) if bias is None else bias.float().expand_as(seq).clone()
        for w in range(W):
            shift = W - 1 - w
            if shift < seq.shape[0]:
                out[shift:] += seq[: seq.shape[0] - shift] * weight[:, w].float()
        y[b, start:end] = out
    return y


def segment_lengths_ref(cu_counts):
    """Starts and lengths of the segments an inclusive cumulative count describes:
    segment ``i`` is ``[cu_counts[i - 1], cu_counts[i])``, the first one starting at 0."""
    starts = torch.zeros_like(cu_counts)
    starts[1:] = cu_counts[:-1]
    return starts, cu_counts - starts


def nf4_dequant_ref(packed, codebook, scale):
    """``[n_rows, 2 * NB]`` float32: the codebook entries of the low nibbles of
    ``packed [n_rows, NB]`` (uint8), then of the high nibbles, times the row's scale."""
    codes = packed.long()
    lo, hi = codes & 0xF, codes >> 4
    book = codebook.float()
    return torch.cat([book[lo], book[hi]], dim=-1) * scale.float()[:, None]


def row_variance_ref(x):
    """fp32 population variance of each row of ``x [..., D]``."""
    return x.float().var(dim=-1, unbiased=False)
