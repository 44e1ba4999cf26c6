"""Cost of `pytest --ascend-compile`: per new kernel specialisation, and on this
project's kernel test run with and without the gate, measured in the same run.

    python benchmarks/bench_compile_gate.py [--runs 1] [--out benchmarks/RESULTS.md]

* The kernel test run (`python -m pytest tests/kernels`) is timed wall-clock, the
  interpreter start included, taking turns between `--ascend-compile=off` (the peer)
  and `--ascend-compile=strict`; medians of `--runs` runs each.
* Per new specialisation: from the gate's JSON report of the last strict run, the
  time a test waited for each first launch of a specialisation (recording, the
  worker's replay through triton's launch path, ttir and ttadapter, the answer) and
  the worker's own share; the worker's start-up wait (importing triton and torch,
  mostly hidden behind collection) is listed apart.

Writes section `compilegate` of the results file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import write_section  # noqa: E402

SECTION = "compilegate"
RESULTS_TITLE = "# Benchmark results"


def run_tests(mode: str, report: Path | None) -> float:
    cmd = [sys.executable, "-m", "pytest", "tests/kernels", "-q", "-p", "no:cacheprovider"]
    cmd.append(f"--ascend-compile={mode}")
    if report is not None:
        cmd.append(f"--ascend-compile-report={report}")
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}")
    return elapsed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--out", default=str(REPO_ROOT / "benchmarks" / "RESULTS.md"))
    args = parser.parse_args()

    import triton

    off, strict = [], []
    with tempfile.TemporaryDirectory() as tmp:
        report_path = Path(tmp) / "report.json"
        for _ in range(args.runs):
            off.append(run_tests("off", None))
            strict.append(run_tests("strict", report_path))
        report = json.loads(report_path.read_text())

    new = [s for s in report["specialisations"] if s.get("ms") is not None]
    waits = [s["ms"] for s in new]
    worker = [s["worker_ms"] for s in new if s.get("worker_ms") is not None]
    summary = report["summary"]
    t_off, t_strict = statistics.median(off), statistics.median(strict)
    cpu = os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "## pytest --ascend-compile (compile gate)",
        "",
        f"Command: `python benchmarks/bench_compile_gate.py --runs {args.runs}`; "
        f"{datetime.date.today().isoformat()}, Python {platform.python_version()}, "
        f"triton-ascend {triton.__version__} (CPU, no CANN), {cpu} cores "
        f"(load average {load:.1f} at the end: the machine is shared).",
        "",
        "| kernel test run (`python -m pytest tests/kernels`) | wall s (median) | ratio |",
        "| --- | ---: | ---: |",
        f"| `--ascend-compile=off` (peer) | {t_off:.1f} | 1.00 |",
        f"| `--ascend-compile=strict` | {t_strict:.1f} | {t_strict / t_off:.2f} |",
        "",
        f"Strict run: {summary['specialisations']} specialisations of {summary['kernels']} "
        f"kernels lowered, {summary['rejected']} rejected, "
        f"{summary['worker_restarts']} worker restarts; worker start-up wait "
        f"{summary['worker_startup_wait_ms']} ms (once per process).",
        "",
        "| per new specialisation | mean ms | median ms | p90 ms | max ms |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| test waits (record, replay, ttir + ttadapter, answer) | {statistics.mean(waits):.1f} "
        f"| {statistics.median(waits):.1f} | {percentile(waits, 0.9):.1f} | {max(waits):.1f} |",
        f"| of which in the worker | {statistics.mean(worker):.1f} "
        f"| {statistics.median(worker):.1f} | {percentile(worker, 0.9):.1f} | {max(worker):.1f} |",
    ]
    for stage, label in (
        ("ast", "AST to TTIR (make_ir)"),
        ("ttir", "ttir passes"),
        ("ttadapter", "ttadapter (triton-adapter-opt subprocess)"),
    ):
        values = [s["stage_ms"][stage] for s in new if stage in s.get("stage_ms", {})]
        if values:
            lines.append(
                f"| of which {label} | {statistics.mean(values):.1f} | "
                f"{statistics.median(values):.1f} | {percentile(values, 0.9):.1f} | "
                f"{max(values):.1f} |"
            )
    ub = [s["ub_ms"] for s in new if s.get("ub_ms") is not None]
    if ub:
        lines.append(
            f"| UB bounds from the lowered IR (test process, after the answer) "
            f"| {statistics.mean(ub):.1f} | {statistics.median(ub):.1f} "
            f"| {percentile(ub, 0.9):.1f} | {max(ub):.1f} |"
        )
    lines += [
        "",
        "Off and strict runs take turns in one session on a shared machine (load average "
        "above), so the ratio holds better than the absolute times. A repeated launch of a "
        "compiled specialisation is only keyed and counted in the test process (included "
        "in the run times, not timed apart); the worker's start-up overlaps collection and the first tests.",
    ]
    write_section(Path(args.out), SECTION, "\n".join(lines), title=RESULTS_TITLE)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
