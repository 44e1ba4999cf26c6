"""ASC021 demo: the varlen gate base of a transposed gate, used on the fixed-length path.

A port in the style several Ascend ports of FLA's chunk kernels share: the launcher
stores the gate transposed, ``[B, HV, T]``, so that the kernel reads it along time
with stride 1 (the G_T_CONTIG layout), and the kernel finds the row of its
(sequence, head) with the varlen formula ``g + bos + i_h * T_seq``.  That formula
is right for varlen input (``B == 1``, ``bos`` the packed offset of the sequence),
but on the fixed-length path ``bos = i_b * T`` steps over one head row per batch
instead of ``HV`` of them: every batch but the first reads another batch's or
head's gate.  The numbers are silently wrong for ``B > 1`` and exact for
``B == 1``; ``tests/kernels/test_transposed_batch_base_example.py`` shows both.

``transposed_batch_base.py.diff`` next to this file is what
``ascend-lint check --select ASC021 --fix --unsafe-fixes`` makes of it (``git apply``
it for the fixed kernel): the base split on ``IS_VARLEN``, with ``g + i_b * HV * T_seq + i_h * T_seq`` on the fixed-length path
(as ``gate_base`` in ``reference_kernels/chunk_o.py`` does).  Not used by any
benchmark; the GPU launch habits (a problem-sized grid) are kept as ports have them.
"""

import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["T"])
def gated_output_kernel(
    v,
    g,
    o,
    cu_seqlens,
    chunk_indices,
    T,
    HV: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BV: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """o[b, t, h, :] = v[b, t, h, :] * exp2(g[b, t, h]); ``g`` arrives as [B, HV, T]."""
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    T_seq = T
    if IS_VARLEN:
        i_n = tl.load(chunk_indices + i_t * 2)
        i_t = tl.load(chunk_indices + i_t * 2 + 1)
        bos = tl.load(cu_seqlens + i_n)
        eos = tl.load(cu_seqlens + i_n + 1)
        T = (eos - bos).to(tl.int32)
    else:
        bos = i_b * T

    # start of this (sequence, head) row of the transposed gate
    g_ptr = g + bos + i_h * T_seq
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T
    b_g = tl.load(g_ptr + o_t, mask=m_t, other=0.0).to(tl.float32)

    p_v = tl.make_block_ptr(
        v + (bos * HV + i_h) * V, (T, V), (HV * V, 1), (i_t * BT, 0), (BT, BV), (1, 0)
    )
    p_o = tl.make_block_ptr(
        o + (bos * HV + i_h) * V, (T, V), (HV * V, 1), (i_t * BT, 0), (BT, BV), (1, 0)
    )
    b_v = tl.load(p_v, boundary_check=(0, 1)).to(tl.float32)
    b_o = b_v * tl.exp2(b_g)[:, None]
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


def prepare_chunk_indices(cu_seqlens, chunk_size):
    """int32 [n_chunks, 2] table of (sequence, chunk) pairs."""
    lens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
    rows = [(n, c) for n, length in enumerate(lens) for c in range(triton.cdiv(length, chunk_size))]
    return torch.tensor(rows, dtype=torch.int32, device=cu_seqlens.device).view(-1, 2)


def gated_output(v, g, cu_seqlens=None, chunk_size=64):
    """``v [B, T, HV, V]`` scaled by ``exp2(g)`` of the log2 gate ``g [B, T, HV]``."""
    B, T, HV, V = v.shape
    o = torch.empty_like(v)
    if cu_seqlens is None:
        chunk_indices = None
        NT = triton.cdiv(T, chunk_size)
    else:
        chunk_indices = prepare_chunk_indices(cu_seqlens, chunk_size)
        NT = chunk_indices.shape[0]
    # stride-1 rows along time for the kernel's gate loads
    g = g.transpose(1, 2).contiguous()
    grid = (NT, B * HV)
    gated_output_kernel[grid](
        v,
        g,
        o,
        cu_seqlens,
        chunk_indices,
        T,
        HV=HV,
        V=V,
        BT=chunk_size,
        BV=triton.next_power_of_2(V),
        IS_VARLEN=cu_seqlens is not None,
    )
    return o
