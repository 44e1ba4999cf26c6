"""Every reference kernel specialisation the tests use lowers through the Ascend frontend.

The interpreter tests prove the numbers; this proves the same kernels compile for
the NPU as far as possible without the CANN toolkit: AST -> TTIR -> linalg/HIVM via
``triton-adapter-opt`` (the ``ttadapter`` stage of triton-ascend's backend).  A
kernel that uses something the Ascend frontend rejects (int64 block-pointer
offsets, unsupported ops, ...) fails here even though it runs in the interpreter.
The lowering runs in a subprocess because this process has TRITON_INTERPRET=1.
"""

import json
import os
import subprocess
import sys

import pytest
import torch
import triton
from _kernel_cases import CASES
from _kernel_env import HERE, REPO_ROOT

from reference_kernels.chunk_o import DQKWG_MAX_BV, _block
from reference_kernels.core_grid import MAX_BLOCK_N, TILE_ELEMENTS

TYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
MODULE = "reference_kernels.chunk_o"


def _add(combos, ctx, kernel, sig, consts):
    consts = {**ctx["base"], **ctx["none_args"], **consts}
    sig = {k: v for k, v in {**ctx["sig_common"], **sig}.items() if k not in consts}
    flags = "|".join(f"{k}={v}" for k, v in sorted(consts.items()) if isinstance(v, bool))
    key = f"{kernel}[{ctx['name']},{flags}]"
    combos[key] = dict(key=key, module=MODULE, kernel=kernel, signature=sig, constexprs=consts)


def _specs():
    """(kernel, signature, constexprs) for every combination the wrappers launch."""
    combos = {}
    shapes = [(c.H, c.HV, c.D, c.BT, c.use_g, c.cu is not None, c.dtype) for c in CASES]
    # bf16 is what the GPU / NPU benchmark runs; lower it too.
    shapes += [
        (4, 8, 64, 64, True, False, torch.bfloat16),
        (4, 8, 64, 64, True, True, torch.bfloat16),
        (4, 4, 64, 64, False, False, torch.bfloat16),
        (1, 1, 64, 64, True, True, torch.bfloat16),
    ]
    for H, HV, D, BT, use_g, varlen, dtype in shapes:
        t = "*" + TYPES[dtype]
        ctx = dict(
            name=f"{TYPES[dtype]},H{H},HV{HV},D{D},BT{BT}",
            base=dict(
                H=H,
                HV=HV,
                K=D,
                V=D,
                BT=BT,
                BK=_block(D),
                BV=_block(D),
                G_T_CONTIG=HV != 1,
                IS_VARLEN=varlen,
            ),
            # arguments the wrappers pass as None become constexpr None, as at launch
            none_args={},
            sig_common={},
        )
        if varlen:
            ctx["sig_common"].update(cu_seqlens="*i64", chunk_indices="*i32")
        else:
            ctx["none_args"].update(cu_seqlens=None, chunk_indices=None)
        if use_g:
            ctx["sig_common"]["g"] = "*fp32"
        else:
            ctx["none_args"]["g"] = None

        _add(
            combos,
            ctx,
            "chunk_fwd_kernel_o",
            dict(q=t, k=t, v=t, h=t, o=t, scale="fp32", T="i32", n_chunks="i32"),
            dict(USE_G=use_g),
        )
        _add(
            combos,
            ctx,
            "chunk_bwd_kernel_dv_local",
            dict(q=t, k=t, do=t, dv=t, scale="fp32", T="i32", n_chunks="i32"),
            dict(USE_G=use_g),
        )
        for use_dw in (True, False):
            sig = dict(
                q=t, k=t, v=t, h=t, do=t, dh=t, dq=t, dk=t, scale="fp32", T="i32", n_chunks="i32"
            )
            # the V tile chunk_bwd_dqkwg launches with (narrower than the others')
            extra = dict(USE_G=use_g, USE_DW=use_dw, BV=_block(D, DQKWG_MAX_BV))
            if use_dw:
                sig.update(dv=t, dw=t)
            else:
                extra.update(dv=None, dw=None)
            if use_g:
                sig.update(dg="*fp32")
            else:
                extra.update(dg=None)
            _add(combos, ctx, "chunk_bwd_kernel_dqkwg", sig, extra)
    # reference_kernels.cumsum: both constexpr paths, fixed-length and varlen, fp32 / fp16
    # in, with and without the optional carry-in (the tests use it in fp32)
    for dtype in (torch.float32, torch.float16):
        for H, BT in ((4, 16), (3, 32)):
            for varlen in (False, True):
                for tail in (False, True):
                    for has_initial in (False, True) if dtype == torch.float32 else (False,):
                        consts = dict(
                            H=H,
                            BT=BT,
                            BH=16,
                            TAIL_MODE=tail,
                            IS_VARLEN=varlen,
                            HAS_INITIAL=has_initial,
                        )
                        sig = dict(
                            g="*" + TYPES[dtype],
                            out="*fp32",
                            T="i32",
                            n_chunks="i32",
                            n_tasks="i32",
                        )
                        if has_initial:
                            sig.update(initial="*fp32")
                        else:
                            consts.update(initial=None)
                        if varlen:
                            sig.update(cu_seqlens="*i64", chunk_table="*i32")
                        else:
                            consts.update(cu_seqlens=None, chunk_table=None)
                        flags = "|".join(
                            f"{k}={v}" for k, v in sorted(consts.items()) if isinstance(v, bool)
                        )
                        key = f"chunk_local_cumsum_kernel[{TYPES[dtype]},H{H},BT{BT},{flags}]"
                        combos[key] = dict(
                            key=key,
                            module="reference_kernels.cumsum",
                            kernel="chunk_local_cumsum_kernel",
                            signature=sig,
                            constexprs=consts,
                        )
    # reference_kernels.core_grid: RMSNorm, one-pass and two-pass column paths, fp32 / fp16
    for dtype in (torch.float32, torch.float16):
        for N in (64, 96, 5000):
            BN = min(triton.next_power_of_2(N), MAX_BLOCK_N)
            consts = dict(N=N, BM=TILE_ELEMENTS // BN, BN=BN, ONE_PASS=N <= BN)
            t = "*" + TYPES[dtype]
            sig = dict(x=t, weight=t, y=t, n_rows="i32", eps="fp32")
            flags = "|".join(f"{k}={v}" for k, v in sorted(consts.items()) if isinstance(v, bool))
            key = f"rms_norm_fwd_kernel[{TYPES[dtype]},N{N},{flags}]"
            combos[key] = dict(
                key=key,
                module="reference_kernels.core_grid",
                kernel="rms_norm_fwd_kernel",
                signature=sig,
                constexprs=consts,
            )
    # reference_kernels.shift_window: causal conv, fixed-length and varlen, with and
    # without bias, one and several channel blocks, fp32 / fp16
    for dtype in (torch.float32, torch.float16):
        for D, W, BT in ((40, 4, 16), (200, 3, 32)):
            for varlen in (False, True):
                for has_bias in (False, True):
                    BD = min(triton.next_power_of_2(D), 128)
                    consts = dict(D=D, W=W, BT=BT, BD=BD, HAS_BIAS=has_bias, IS_VARLEN=varlen)
                    t = "*" + TYPES[dtype]
                    sig = dict(x=t, weight=t, y=t, T="i32", n_tiles="i32", n_t_tiles="i32")
                    if has_bias:
                        sig.update(bias=t)
                    else:
                        consts.update(bias=None)
                    if varlen:
                        sig.update(cu_seqlens="*i64", chunk_indices="*i32")
                    else:
                        consts.update(cu_seqlens=None, chunk_indices=None)
                    flags = "|".join(
                        f"{k}={v}" for k, v in sorted(consts.items()) if isinstance(v, bool)
                    )
                    key = f"causal_conv1d_fwd_kernel[{TYPES[dtype]},D{D},W{W},BT{BT},{flags}]"
                    combos[key] = dict(
                        key=key,
                        module="reference_kernels.shift_window",
                        kernel="causal_conv1d_fwd_kernel",
                        signature=sig,
                        constexprs=consts,
                    )
    return list(combos.values())


SPECS = _specs()


@pytest.fixture(scope="module")
def lowered():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(HERE / "_lower_ascend.py")],
        input=json.dumps(SPECS),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=900,
    )
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            results[r["key"]] = r
    if proc.returncode != 0 or not results:
        pytest.fail(f"lowering driver failed (rc={proc.returncode}):\n{proc.stderr[-4000:]}")
    return results


def test_specialisations_cover_every_flag():
    flags = {
        (
            s["kernel"],
            tuple(sorted((k, v) for k, v in s["constexprs"].items() if isinstance(v, bool))),
        )
        for s in SPECS
    }
    kernels = {k for k, _ in flags}
    assert kernels == {
        "chunk_fwd_kernel_o",
        "chunk_bwd_kernel_dv_local",
        "chunk_bwd_kernel_dqkwg",
        "chunk_local_cumsum_kernel",
        "rms_norm_fwd_kernel",
        "causal_conv1d_fwd_kernel",
    }
    fwd = [dict(f) for k, f in flags if k == "chunk_fwd_kernel_o"]
    for name in ("USE_G", "G_T_CONTIG", "IS_VARLEN"):
        assert {f[name] for f in fwd} == {True, False}, name
    norm = [dict(f) for k, f in flags if k == "rms_norm_fwd_kernel"]
    assert {f["ONE_PASS"] for f in norm} == {True, False}
    conv = [dict(f) for k, f in flags if k == "causal_conv1d_fwd_kernel"]
    for name in ("HAS_BIAS", "IS_VARLEN"):
        assert {f[name] for f in conv} == {True, False}, name


@pytest.mark.parametrize("spec", [pytest.param(s, id=s["key"]) for s in SPECS])
def test_kernel_lowers_to_linalg(lowered, spec):
    r = lowered.get(spec["key"])
    assert r is not None, "driver produced no result for this specialisation"
    assert r["ok"], r["error"]
    assert r["stages"] == ["ttir", "ttadapter"]
