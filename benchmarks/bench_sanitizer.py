"""Cost of `pytest --ascend-sanitize`: a kernel test run with and without the sanitizer,
measured in the same run, taking turns.

    python benchmarks/bench_sanitizer.py [--runs 3] [--out benchmarks/RESULTS.md]
        [--suite DIR --suite-args "..."]   # also an outside test suite, same way

* The peer is the same tests under the interpreter alone (`--ascend-sanitize=off`);
  the compile gate is off in both, so the ratio is the sanitizer's own.
* Two numbers per mode, medians of `--runs`: the wall time of the whole pytest process
  (start-up and collection included) and the sum of the tests' own call phases (from a
  JUnit report), which is where kernels run.

Writes section `sanitizer` of the results file.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import write_section  # noqa: E402

SECTION = "sanitizer"
RESULTS_TITLE = "# Benchmark results"


def run_suite(cwd: Path, args: list[str], mode: str) -> tuple[float, float, int]:
    """(wall seconds, seconds in the tests' call phases, tests) of one pytest run."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            *args,
            "-q",
            "-p",
            "no:cacheprovider",
            "--ascend-compile=off",
            f"--ascend-sanitize={mode}",
            f"--junitxml={junit}",
            "-o",
            "junit_duration_report=call",
        ]
        started = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if proc.returncode not in (0, 1):
            sys.exit(f"{shlex.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}")
        cases = ET.parse(junit).getroot().iter("testcase")
        times = [float(case.get("time", 0)) for case in cases]
    return wall, sum(times), len(times)


def measure(cwd: Path, args: list[str], runs: int) -> dict:
    off, on = [], []
    for _ in range(runs):
        off.append(run_suite(cwd, args, "off"))
        on.append(run_suite(cwd, args, "report"))
    wall_off = statistics.median(r[0] for r in off)
    wall_on = statistics.median(r[0] for r in on)
    call_off = statistics.median(r[1] for r in off)
    call_on = statistics.median(r[1] for r in on)
    return {
        "tests": off[0][2],
        "wall_off": wall_off,
        "wall_on": wall_on,
        "call_off": call_off,
        "call_on": call_on,
    }


def row(name: str, m: dict) -> str:
    return (
        f"| {name} | {m['tests']} | {m['wall_off']:.1f} | {m['wall_on']:.1f} | "
        f"{m['wall_on'] / m['wall_off']:.2f}x | {m['call_off']:.1f} | {m['call_on']:.1f} | "
        f"{m['call_on'] / m['call_off']:.2f}x |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(REPO_ROOT / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--suite", help="another test suite's folder, measured the same way")
    parser.add_argument("--suite-args", default="", help="its pytest arguments (paths, -k ...)")
    args = parser.parse_args()

    import torch
    import triton

    os.environ["TRITON_INTERPRET"] = "1"
    rows = [
        row(
            "this project's kernel tests (`tests/kernels`)",
            measure(REPO_ROOT, ["tests/kernels"], args.runs),
        )
    ]
    if args.suite:
        suite = Path(args.suite).resolve()
        rows.append(
            row(
                f"`{suite.name}` {args.suite_args}".strip(),
                measure(suite, shlex.split(args.suite_args), args.runs),
            )
        )

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    command = "python benchmarks/bench_sanitizer.py" + (
        f" --runs {args.runs}" if args.runs != 3 else ""
    )
    if args.suite:
        command += f" --suite {args.suite} --suite-args {shlex.quote(args.suite_args)}"
    body = "\n".join(
        [
            "## pytest --ascend-sanitize (memory sanitizer)",
            "",
            f"`{command}`, {datetime.date.today().isoformat()}: {platform.python_version()}, "
            f"torch {torch.__version__}, triton-ascend {triton.__version__}, "
            f"{os.cpu_count()} cores, load average {load:.1f} after the runs. Each row: the "
            "same tests with `--ascend-sanitize=off` (the interpreter alone: the peer) and "
            f"`=report`, taking turns, median of {args.runs}; the compile gate off in both.",
            "",
            "| tests | count | wall, off (s) | wall, sanitized (s) | ratio | kernel calls, off (s) | kernel calls, sanitized (s) | ratio |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            *rows,
            "",
            "Target: at most 2x the interpreter alone.",
        ]
    )
    write_section(Path(args.out), SECTION, body, RESULTS_TITLE)
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
