"""Benchmark of the chunk output kernels against the kernels a user would otherwise run.

Implementations timed on the same inputs (bf16 q/k/v/do/h/dh, fp32 log2 gate):

* ``reference``: ``reference_kernels.chunk_o`` (G_T_CONTIG gate layout, 1-D core grid
  with task loops, dg fused into the dq/dk/dw kernel);
* ``gpu_habits``: ``examples/gpu_habits/chunk_o.py`` (legacy ``[B, T, HV]`` gate reads,
  problem-sized grids): the A/B baseline of the same maths;
* ``fla_cuda``: flash-linear-attention's own kernels, ``fla.ops.common.chunk_o``
  (``chunk_fwd_o``, ``chunk_bwd_dv_local``, ``chunk_bwd_dqkwg``), when ``fla`` imports;
* ``fla_ascend``: flash-linear-attention's Triton-Ascend versions of them,
  ``fla.ops.common.backends.triton_ascend.chunk_o`` (``*_npu``), when the installed
  FLA has them.  On a GPU their ``get_npu_properties()`` core-count lookup is answered
  with the same program count the reference gets (below).

Columns:

* ``kernel ms``: device time per call of the op's Triton kernels, from ``torch.profiler``
  on CUDA (every kernel whose name is a plain identifier, i.e. a Triton kernel; torch
  glue such as the gate transpose, the head-group sum and ``dg.sum(0)`` is excluded for
  every implementation).  Elsewhere, or if the profiler fails, events around the whole
  call (marked ``events``).
* ``op ms``: events around the whole wrapper call as a user makes it (median of
  ``--iters`` after ``--warmup``), glue and Python launch overhead included.
* ``vs fla_cuda`` / ``vs fla_ascend``: this row's kernel ms divided by that peer's for
  the same shape and op (below 1 is faster).

Core grids on a GPU: the reference wrappers are called as a user calls them, with no
``ASCEND_LINT_*_CORES`` override, so their 1-D grid is the device default of
``reference_kernels.core_grid`` (``PROGRAMS_PER_SM`` programs per streaming
multiprocessor on CUDA, the core count on an NPU); FLA's Ascend kernels' ``num_aicore`` /
``num_vectorcore`` lookup is answered with that same count.  ``--cores N`` overrides it
for both (through the environment variables).  ``--core-sweep`` times the reference and
FLA's Ascend kernels at other multiples of the SM count.

It runs on ``npu`` when ``torch_npu`` imports, else on ``cuda``; ``--smoke`` runs tiny
fp32 shapes on CPU under the interpreter to check the script (FLA is skipped there).

    python benchmarks/bench_kernels.py --out benchmarks/KERNELS_RESULTS.md
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import importlib.metadata
import os
import platform
import statistics
import sys
import traceback
from pathlib import Path

import torch

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

if "--smoke" in sys.argv:
    os.environ["TRITON_INTERPRET"] = "1"

import triton  # noqa: E402

import reference_kernels.chunk_o as ref_mod  # noqa: E402
from examples.gpu_habits import chunk_o as gpu_mod  # noqa: E402
from reference_kernels import core_grid  # noqa: E402
from reference_kernels import torch_reference as oracle  # noqa: E402

# (B, T, H, HV, K=V)
SHAPES = [(2, 2048, 4, 8, 64), (2, 8192, 4, 16, 64), (2, 8192, 8, 16, 128)]
BT = 64
OPS = ("chunk_fwd_o", "chunk_bwd_dv_local", "chunk_bwd_dqkwg")
FLA_ASCEND_MODULE = "fla.ops.common.backends.triton_ascend.chunk_o"


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


# --- the implementations -------------------------------------------------------------
def ours_ops(mod, x):
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


def fla_ops(fwd_o, dv_local, dqkwg, x):
    """FLA's entry points share one signature family (keyword arguments as FLA names them)."""
    scale = x["q"].shape[-1] ** -0.5
    return {
        "chunk_fwd_o": lambda: fwd_o(
            q=x["q"], k=x["k"], v=x["v"], h=x["h"], g=x["g"], scale=scale, chunk_size=BT
        ),
        "chunk_bwd_dv_local": lambda: dv_local(
            q=x["q"], k=x["k"], do=x["do"], g=x["g"], scale=scale, chunk_size=BT
        ),
        "chunk_bwd_dqkwg": lambda: dqkwg(
            q=x["q"],
            k=x["k"],
            v=x["v"],
            do=x["do"],
            h=x["h"],
            dh=x["dh"],
            w=x["w"],
            g=x["g"],
            dv=x["dv"],
            scale=scale,
            chunk_size=BT,
        ),
    }


def load_fla(device, cores, notes):
    """{label: ops factory} for the FLA implementations that import here, and versions."""
    found, versions = {}, {}
    if device != "cuda":
        notes.append(f"FLA not timed: its CUDA kernels need a CUDA device (device is {device})")
        return found, versions
    for dist in ("flash-linear-attention", "fla-core"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[dist] = importlib.metadata.version(dist)
    try:
        cuda_mod = importlib.import_module("fla.ops.common.chunk_o")
    except Exception as exc:
        notes.append(f"fla_cuda not timed: import failed ({type(exc).__name__}: {exc})")
        return found, versions
    # FLA refuses gated chunk_bwd_dqkwg on Hopper with triton >= 3.4, < 3.7.1 (its
    # issue #640: possibly wrong numbers).  Time it anyway; the error column shows
    # whether this run's numbers are right.
    if getattr(cuda_mod, "IS_NVIDIA_HOPPER", False) and not getattr(
        cuda_mod, "TRITON_ABOVE_3_7_1", True
    ):
        cuda_mod.TRITON_ABOVE_3_7_1 = True
        notes.append(
            "fla_cuda chunk_bwd_dqkwg: FLA's guard against gated dqkwg on Hopper with "
            f"triton {triton.__version__} (< 3.7.1, FLA issue #640) was bypassed to time it; "
            "see its error column"
        )
    found["fla_cuda"] = lambda x: fla_ops(
        cuda_mod.chunk_fwd_o, cuda_mod.chunk_bwd_dv_local, cuda_mod.chunk_bwd_dqkwg, x
    )
    try:
        npu_mod = importlib.import_module(FLA_ASCEND_MODULE)
        for name in ("chunk_fwd_o_npu", "chunk_bwd_dv_local_npu", "chunk_bwd_dqkwg_npu"):
            getattr(npu_mod, name)
    except Exception as exc:
        notes.append(f"fla_ascend not timed: {FLA_ASCEND_MODULE} ({type(exc).__name__}: {exc})")
        return found, versions
    # Their launchers ask the NPU driver for the core counts; answer with ours.
    npu_mod.get_npu_properties = lambda: {
        "num_aicore": cores["n"],
        "num_vectorcore": cores["n"],
        "max_shared_mem": 1,
    }
    found["fla_ascend"] = lambda x: fla_ops(
        npu_mod.chunk_fwd_o_npu, npu_mod.chunk_bwd_dv_local_npu, npu_mod.chunk_bwd_dqkwg_npu, x
    )
    return found, versions


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


# --- measuring -----------------------------------------------------------------------
def rel_errs(got, ref):
    """Relative max error of every output the op returns (None outputs skipped)."""
    got, ref = (got,) if torch.is_tensor(got) else got, (ref,) if torch.is_tensor(ref) else ref
    errs = []
    for a, b in zip(got, ref):
        if a is None and b is None:
            continue
        if a is None or b is None or a.shape != b.shape:
            errs.append(float("inf"))
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
    """Device ms per call of the Triton kernels the call launches (CUDA only)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    per_kernel = {}
    for evt in prof.key_averages():
        device_us = getattr(evt, "device_time_total", None)
        if device_us is None:  # torch before 2.4
            device_us = getattr(evt, "cuda_time_total", 0.0)
        # Triton kernels carry their Python function name; torch's own CUDA kernels have
        # C++ names (namespaces, templates, spaces); runtime API calls have no device time.
        if evt.key.isidentifier() and device_us > 0:
            per_kernel[evt.key] = per_kernel.get(evt.key, 0.0) + device_us / iters / 1000.0
    if not per_kernel:
        raise RuntimeError("profiler saw no Triton kernel")
    names = [f"{name} {ms:.4f}" for name, ms in sorted(per_kernel.items())]
    return sum(per_kernel.values()), names


def measure(fn, ref, device, backend, args, notes, tag):
    errs = rel_errs(fn(), ref)
    backend.synchronize()
    t_op = time_events(fn, backend, args.warmup, args.iters)
    how, names = "profiler", []
    try:
        if device != "cuda":
            raise RuntimeError("profiler path is CUDA-only")
        t_kernel, names = time_kernels_profiler(fn, args.iters)
    except Exception as exc:  # fall back to events, and say so
        how = "events"
        notes.append(f"{tag}: kernel time from events ({type(exc).__name__}: {exc})")
        t_kernel = t_op
    return dict(errs=errs, err=max(errs), kernel=t_kernel, how=how, op_ms=t_op, names=names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="Markdown file to write")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument(
        "--cores",
        type=int,
        default=None,
        help="programs of a core-grid launch (default: the device default of core_grid, "
        "as a user gets it)",
    )
    ap.add_argument(
        "--core-sweep",
        default="1,2,8",
        help="comma-separated multiples of the SM count to time the core-grid kernels at too"
        " ('' for none)",
    )
    ap.add_argument("--no-fla", action="store_true", help="time only this repository's kernels")
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
    sms = torch.cuda.get_device_properties(0).multi_processor_count if device == "cuda" else None
    for name in (core_grid.AI_CORES_ENV, core_grid.VECTOR_CORES_ENV):
        os.environ.pop(name, None)
    override = args.cores
    if override is None:
        # What the wrappers pick by themselves on this device (no override set).
        args.cores = core_grid.num_ai_cores(0 if device == "cuda" else None)
    cores = {"n": args.cores}

    def set_cores(n):
        """n programs for both peers; None: the wrappers' own device default."""
        cores["n"] = args.cores if n is None else n
        for name in (core_grid.AI_CORES_ENV, core_grid.VECTOR_CORES_ENV):
            if n is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = str(n)

    notes = []
    fla, versions = ({}, {}) if args.no_fla else load_fla(device, cores, notes)
    impls = {
        "reference": lambda x: ours_ops(ref_mod, x),
        "gpu_habits": lambda x: ours_ops(gpu_mod, x),
    }
    impls.update(fla)
    sweep = [int(m) for m in args.core_sweep.split(",") if m.strip()] if sms else []

    rows, sweep_rows = [], []
    for B, T, H, HV, D in SHAPES:
        shape = f"B={B} T={T} H={H} HV={HV} K=V={D}"
        x = make_inputs(B, T, H, HV, D, device, dtype)
        refs = {name: fn() for name, fn in oracles(x).items()}
        set_cores(override)
        for label, make_ops in impls.items():
            for op_name, fn in make_ops(x).items():
                tag = f"{shape} {label} {op_name}"
                try:
                    r = measure(fn, refs[op_name], device, backend, args, notes, tag)
                except Exception as exc:
                    notes.append(f"{tag}: failed ({type(exc).__name__}: {exc})")
                    traceback.print_exc()
                    continue
                rows.append(dict(shape=shape, impl=label, op=op_name, **r))
                print(rows[-1], flush=True)
        for mult in sweep:
            set_cores(mult * sms)
            for label in ("reference", "fla_ascend"):
                if label not in impls:
                    continue
                for op_name, fn in impls[label](x).items():
                    tag = f"{shape} {label} {op_name} cores={mult}xSM"
                    try:
                        r = measure(fn, refs[op_name], device, backend, args, notes, tag)
                    except Exception as exc:
                        notes.append(f"{tag}: failed ({type(exc).__name__}: {exc})")
                        continue
                    sweep_rows.append(dict(shape=shape, impl=label, op=op_name, mult=mult, **r))
                    print(sweep_rows[-1], flush=True)
        set_cores(override)

    write_report(args, override, device, dev_name, dtype, sms, versions, rows, sweep_rows, notes)
    ours_ok = all(r["err"] < 2e-2 for r in rows if r["impl"] in ("reference", "gpu_habits"))
    if not ours_ok:
        sys.exit(1)


def _peer(rows, r, peer):
    for p in rows:
        if (p["shape"], p["op"], p["impl"]) == (r["shape"], r["op"], peer):
            return p
    return None


def write_report(args, override, device, dev_name, dtype, sms, versions, rows, sweep_rows, notes):
    cmd = "python " + " ".join([sys.argv[0], *sys.argv[1:]])
    fla_v = ", ".join(f"{k} {v}" for k, v in versions.items()) or "not installed"
    cores_how = (
        f"{args.cores} programs ({args.cores // sms} per SM x {sms} SMs)"
        if sms and args.cores % sms == 0
        else f"{args.cores} programs"
    )
    cores_how += (
        f" (--cores {override}, set through {core_grid.AI_CORES_ENV})"
        if override is not None
        else f" (the wrappers' device default, no {core_grid.AI_CORES_ENV} set)"
    )
    lines = [
        "# Chunk output kernels: reference vs legacy layout vs flash-linear-attention",
        "",
        f"* device: {dev_name} ({device})",
        f"* torch {torch.__version__}, triton {triton.__version__}, Python {platform.python_version()}; FLA: {fla_v}",
        f"* date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"* command: `{cmd}`",
        f"* dtype {str(dtype).replace('torch.', '')} inputs, fp32 log2 gate, chunk size {BT}; warmup {args.warmup}, median of {args.iters} calls",
        f"* core grids (reference kernels and FLA's Ascend kernels): {cores_how}",
        "* error: max |out - oracle| / max |oracle| against the fp32 torch oracle, per output",
        "  (o; dv; dq, dk, dw, dg); ok when the worst is < 2e-2",
        "* kernel ms: device time per call of the op's Triton kernels (torch.profiler; torch glue",
        "  excluded for every implementation); op ms: events around the whole call, glue included",
        "* vs fla_cuda / vs fla_ascend: kernel ms of the row divided by the peer's (same shape and op);",
        "  op vs fla_cuda: the same for op ms, each implementation's host glue included (the",
        "  reference's gate transpose is its own glue; FLA's CUDA kernels read the gate as it is)",
        "",
        "| shape | implementation | op | error | ok | kernel ms | op ms | vs fla_cuda | vs fla_ascend | op vs fla_cuda | kernels (ms each) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        ratios = []
        for peer in ("fla_cuda", "fla_ascend"):
            p = _peer(rows, r, peer)
            ratios.append(f"{r['kernel'] / p['kernel']:.2f}x" if p and p["kernel"] else "-")
        p = _peer(rows, r, "fla_cuda")
        ratios.append(f"{r['op_ms'] / p['op_ms']:.2f}x" if p and p["op_ms"] else "-")
        kern = f"{r['kernel']:.4f}" + ("" if r["how"] == "profiler" else " (events)")
        lines.append(
            f"| {r['shape']} | {r['impl']} | {r['op']} | {', '.join(f'{e:.1e}' for e in r['errs'])} "
            f"| {'yes' if r['err'] < 2e-2 else 'NO'} | {kern} | {r['op_ms']:.4f} "
            f"| {ratios[0]} | {ratios[1]} | {ratios[2]} | {', '.join(r['names'])} |"
        )
    if sweep_rows:
        lines += [
            "",
            "## Core-grid size on this GPU",
            "",
            "Kernel ms of the core-grid implementations at other program counts (multiples of",
            f"the {sms} SMs); the table above uses {cores_how}.",
            "",
            "| shape | implementation | op | programs | kernel ms | vs fla_cuda |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for r in sweep_rows:
            p = _peer(rows, r, "fla_cuda")
            ratio = f"{r['kernel'] / p['kernel']:.2f}x" if p and p["kernel"] else "-"
            lines.append(
                f"| {r['shape']} | {r['impl']} | {r['op']} | {r['mult']} x {sms} "
                f"| {r['kernel']:.4f} | {ratio} |"
            )
    if notes:
        lines += ["", "Notes:", *[f"* {n}" for n in notes]]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
