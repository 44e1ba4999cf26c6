"""A/B benchmark of the chunk output kernels: reference (G_T_CONTIG) vs gpu_habits.

For each shape and op it checks bf16 results against the fp32 torch oracle and
times both implementations on the accelerator:

* ``kernel`` column: device time of the op's own Triton kernels per call.  On CUDA
  it comes from ``torch.profiler`` (sum of the op's kernels, host work, the gate
  transpose and other torch glue excluded); elsewhere, or if the profiler fails,
  from events around the whole call (marked ``events``: transpose included).
* ``op`` column: events around the whole wrapper call as a user makes it
  (warmup, then the median of ``--iters`` calls); for the reference this includes
  its host gate transpose, and for both it includes Python launch overhead.
* ``g transpose`` column: the reference's one-off ``g.transpose(1, 2).contiguous()``
  alone, to be added to the reference side.

It runs on ``npu`` when ``torch_npu`` imports, else on ``cuda``.  On a GPU the
strided gate gather costs little, so expect similar numbers there; the point of
the GPU run is that the corrected kernels are correct and not slower.  The Ascend
gap is the one documented in ASC001.

    python benchmarks/bench_kernels.py --out benchmarks/KERNELS_RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
from pathlib import Path

import torch

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

if "--smoke" in sys.argv:
    import os

    os.environ["TRITON_INTERPRET"] = "1"

import triton  # noqa: E402

import reference_kernels.chunk_o as ref_mod  # noqa: E402
from examples.gpu_habits import chunk_o as gpu_mod  # noqa: E402
from reference_kernels import torch_reference as oracle  # noqa: E402

KERNEL_NAMES = {
    "chunk_fwd_kernel_o",
    "chunk_bwd_kernel_dv_local",
    "chunk_bwd_kernel_dqkwg",
    "chunk_bwd_kernel_dg",
}
# (B, T, H, HV, K=V)
SHAPES = [(2, 2048, 4, 8, 64), (2, 8192, 4, 16, 64)]
BT = 64


class _CpuEvent:
    """Stand-in for device events in --smoke runs (interpreter on CPU)."""

    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        import time

        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1000.0


class _CpuBackend:
    Event = _CpuEvent

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_name(_):
        return platform.processor() or "cpu"


def pick_device(smoke=False):
    if smoke:
        return "cpu", _CpuBackend
    try:
        import torch_npu  # noqa: F401

        return "npu", torch.npu
    except Exception:
        pass
    if not torch.cuda.is_available():
        sys.exit("no npu (torch_npu) and no cuda device")
    return "cuda", torch.cuda


def make_inputs(B, T, H, HV, D, device, dtype, seed=0):
    gen = torch.Generator(device="cpu").manual_seed(seed)
    NT = triton.cdiv(T, BT)

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen) * scale).to(device=device, dtype=dtype)

    step = -(0.05 + 0.3 * torch.rand(B, T, HV, generator=gen))
    pad = NT * BT - T
    g = (
        torch.nn.functional.pad(step, (0, 0, 0, pad))
        .view(B, NT, BT, HV)
        .cumsum(2)
        .view(B, NT * BT, HV)[:, :T]
    )
    return dict(
        q=randn(B, T, H, D, scale=D**-0.5),
        k=randn(B, T, H, D, scale=D**-0.5),
        v=randn(B, T, HV, D),
        do=randn(B, T, HV, D),
        w=randn(B, T, HV, D),
        dv=randn(B, T, HV, D),
        h=randn(B, NT, HV, D, D, scale=0.1),
        dh=randn(B, NT, HV, D, D, scale=0.1),
        g=g.contiguous().to(device),
    )


def ops(mod, x):
    return {
        "chunk_fwd_o": lambda: mod.chunk_fwd_o(
            x["q"], x["k"], x["v"], x["h"], g=x["g"], chunk_size=BT
        ),
        "chunk_bwd_dv_local": lambda: mod.chunk_bwd_dv_local(
            x["q"], x["k"], x["do"], g=x["g"], chunk_size=BT
        ),
        "chunk_bwd_dqkwg": lambda: mod.chunk_bwd_dqkwg(
            x["q"],
            x["k"],
            x["v"],
            x["do"],
            x["h"],
            x["dh"],
            g=x["g"],
            w=x["w"],
            dv=x["dv"],
            chunk_size=BT,
        ),
    }


def oracles(x):
    return {
        "chunk_fwd_o": lambda: oracle.chunk_fwd_o_ref(
            x["q"], x["k"], x["v"], x["h"], x["g"], chunk_size=BT
        ),
        "chunk_bwd_dv_local": lambda: oracle.chunk_bwd_dv_local_ref(
            x["q"], x["k"], x["do"], x["g"], chunk_size=BT
        ),
        "chunk_bwd_dqkwg": lambda: oracle.chunk_bwd_dqkwg_ref(
            x["q"], x["k"], x["v"], x["do"], x["h"], x["dh"], x["g"], x["w"], x["dv"], chunk_size=BT
        ),
    }


def rel_errs(got, ref):
    """Relative max error of every output the op returns (None outputs skipped)."""
    got, ref = (got,) if torch.is_tensor(got) else got, (ref,) if torch.is_tensor(ref) else ref
    errs = []
    for a, b in zip(got, ref):
        if a is None and b is None:
            continue
        err = (a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-6)
        errs.append(err.item())
    return errs


def time_events(fn, backend, warmup, iters):
    for _ in range(warmup):
        fn()
    backend.synchronize()
    times = []
    for _ in range(iters):
        start, end = backend.Event(enable_timing=True), backend.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def time_kernels_profiler(fn, iters):
    """Device time of our Triton kernels per call (CUDA only)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    total_us = 0.0
    seen = False
    for evt in prof.key_averages():
        if evt.key in KERNEL_NAMES:
            total_us += getattr(evt, "device_time_total", None) or evt.cuda_time_total
            seen = True
    if not seen:
        raise RuntimeError("profiler saw none of the Triton kernels")
    return total_us / iters / 1000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="Markdown file to write")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny fp32 shapes on CPU under TRITON_INTERPRET=1 (checks the script, times nothing useful)",
    )
    args = ap.parse_args()

    global SHAPES
    device, backend = pick_device(args.smoke)
    dtype = torch.bfloat16
    if args.smoke:
        SHAPES, dtype = [(2, 130, 2, 4, 32)], torch.float32
    dev_name = backend.get_device_name(0)
    rows, notes = [], []
    for B, T, H, HV, D in SHAPES:
        x = make_inputs(B, T, H, HV, D, device, dtype)
        refs = {name: fn() for name, fn in oracles(x).items()}
        t_transpose = time_events(
            lambda g=x["g"]: g.transpose(1, 2).contiguous(), backend, args.warmup, args.iters
        )
        for label, mod in (
            ("reference (G_T_CONTIG)", ref_mod),
            ("gpu_habits (legacy [B,T,HV])", gpu_mod),
        ):
            for op_name, fn in ops(mod, x).items():
                errs = rel_errs(fn(), refs[op_name])
                err = max(errs)
                backend.synchronize()
                t_op = time_events(fn, backend, args.warmup, args.iters)
                how = "profiler"
                try:
                    if device != "cuda":
                        raise RuntimeError("profiler path is CUDA-only")
                    t_kernel = time_kernels_profiler(fn, args.iters)
                except Exception as exc:  # fall back to events, and say so
                    how = "events"
                    notes.append(
                        f"{op_name}/{label}: kernel time from events ({type(exc).__name__}: {exc})"
                    )
                    t_kernel = time_events(fn, backend, args.warmup, args.iters)
                rows.append(
                    dict(
                        shape=f"B={B} T={T} H={H} HV={HV} K=V={D}",
                        impl=label,
                        op=op_name,
                        err=err,
                        errs=errs,
                        ok=err < 2e-2,
                        kernel=t_kernel,
                        how=how,
                        op_ms=t_op,
                        transpose=t_transpose if mod is ref_mod else None,
                    )
                )
                print(rows[-1], flush=True)

    cmd = "python " + " ".join([sys.argv[0], *sys.argv[1:]])
    lines = [
        "# Reference kernels: A/B benchmark (G_T_CONTIG vs legacy gate layout)",
        "",
        f"* device: {dev_name} ({device})",
        f"* torch {torch.__version__}, triton {triton.__version__}, Python {platform.python_version()}",
        f"* date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"* command: `{cmd}`",
        f"* dtype {str(dtype).replace('torch.', '')} inputs, fp32 gate, chunk size {BT}; warmup {args.warmup}, median of {args.iters} calls",
        "* error: max |kernel - oracle| / max |oracle| against the fp32 torch oracle, per output",
        "  (o; dv; dq, dk, dw, dg); ok when the worst is < 2e-2",
        "* kernel ms: device time of the op's Triton kernels per call (torch.profiler on CUDA; `events` = events around",
        "  the whole call); op ms: events around the whole wrapper call",
        "  (reference: gate transpose included);",
        "  g transpose ms: the reference's host-side `g.transpose(1, 2).contiguous()`, paid once per call",
        "",
        "| shape | implementation | op | error | ok | kernel ms | op ms | g transpose ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        tr = f"{r['transpose']:.4f}" if r["transpose"] is not None else "-"
        kern = f"{r['kernel']:.4f}" + ("" if r["how"] == "profiler" else " (events)")
        lines.append(
            f"| {r['shape']} | {r['impl']} | {r['op']} | {', '.join(f'{e:.1e}' for e in r['errs'])} "
            f"| {'yes' if r['ok'] else 'NO'} "
            f"| {kern} | {r['op_ms']:.4f} | {tr} |"
        )
    if notes:
        lines += ["", "Notes:", *[f"* {n}" for n in notes]]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if not all(r["ok"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
