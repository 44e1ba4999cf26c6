"""One 5 MB kernel file, linted and fixed, against Ruff on the same file in the same run;
the lint's time per MB and peak memory from 50 KB to that size; and `--fix` over the
whole FLA tree. Writes the `bigfile` section of RESULTS.md.

    python benchmarks/bench_bigfile.py [--runs 3] [--mb 5] [--curve 0.05,0.224,1]
        [--fla-mirror DIR] [--out benchmarks/RESULTS.md]

The file is the shipped GPU-habit examples (`examples/gpu_habits/*.py`) concatenated
again and again with every top-level name suffixed per copy (`benchmarks/bigfile.py`),
so it holds thousands of distinct kernels, launches and findings. Each figure is a
median of `--runs` wall-clock runs of the real command line (`--no-cache`, interpreter
start included), lint and `--fix` taking turns; `--fix` works on a fresh copy each run.
Peak memory is the largest resident set of the command's process, from a separate run.
The FLA tree is `git archive HEAD` of the mirror, fixed once with `--fix --no-cache`.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_lint import (  # noqa: E402
    RESULTS_TITLE,
    installed_layout,
    materialise,
    peak_tree_rss_mib,
    version,
)
from bigfile import build_big_source  # noqa: E402
from results_file import write_section  # noqa: E402

LINT = [sys.executable, "-m", "ascend_lint", "check", "--no-cache", "-q"]


def run_timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if b"Traceback" in proc.stderr:
        raise SystemExit(f"traceback from {' '.join(cmd)}:\n{proc.stderr.decode(errors='replace')}")
    return elapsed, proc.returncode


def peak_mib(cmd: list[str], cwd: Path) -> float:
    """Peak RSS of `cmd`, summed over it and its forks (a module linted in parts shares
    them among `-j` processes; pages the forks share with it count twice: an upper
    bound)."""
    return peak_tree_rss_mib(cmd, cwd)


def size_curve(
    work: Path, sizes_mb: list[float], runs: int, ruff: str | None
) -> list[tuple[float, float, float, float | None]]:
    """(MB, lint s, peak MiB, ruff s) for a module of each size built like the big one."""
    rows = []
    for mb in sizes_mb:
        module = work / f"curve_{mb:g}.py"
        module.write_text(build_big_source(int(mb * 1_000_000)), encoding="utf-8")
        lint = [*LINT, module.name]
        peer = [ruff, "check", "--isolated", "--no-cache", "--select", "ALL", "-q", module.name]
        lint_s, ruff_s = [], []
        for _ in range(runs):
            lint_s.append(run_timed(lint, work)[0])
            if ruff:
                ruff_s.append(run_timed(peer, work)[0])
        rows.append(
            (
                module.stat().st_size / 1e6,
                statistics.median(lint_s),
                peak_mib(lint, work),
                statistics.median(ruff_s) if ruff_s else None,
            )
        )
    return rows


def start_up_s(work: Path, runs: int) -> float:
    """The lint of a one-kernel module: interpreter start, imports of every rule."""
    module = work / "one_kernel.py"
    module.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x):\n    tl.store(x, 1.0)\n",
        encoding="utf-8",
    )
    return statistics.median(run_timed([*LINT, module.name], work)[0] for _ in range(runs))


def curve_table(rows: list[tuple[float, float, float, float | None]], start_s: float) -> list[str]:
    def per_mb(mb: float, lint_s: float) -> float:
        return (lint_s - start_s) / mb

    smallest = per_mb(rows[0][0], rows[0][1])
    out = [
        "| module MB | ascend-lint s | s per MB | s per MB after start-up | / smallest's "
        "| peak MiB | ruff ALL s | / ruff |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mb, lint_s, peak, ruff_s in rows:
        peer = f"{ruff_s:.2f} | {lint_s / ruff_s:.1f}x" if ruff_s else "- | -"
        out.append(
            f"| {mb:.3f} | {lint_s:.2f} | {lint_s / mb:.2f} | {per_mb(mb, lint_s):.2f} "
            f"| {per_mb(mb, lint_s) / smallest:.2f}x | {peak:.0f} | {peer} |"
        )
    return out


def _digests(tree: Path) -> dict[str, str]:
    import hashlib

    return {
        str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in tree.rglob("*.py")
        if p.is_file()
    }


def git_head(mirror: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(mirror), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument(
        "--curve",
        default="0.05,0.224,1",
        help="smaller module sizes in MB, comma-separated, for the time-per-MB table",
    )
    parser.add_argument(
        "--fla-mirror",
        type=Path,
        default=Path("/work/.mirror/fla-org+flash-linear-attention/repo"),
    )
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    args = parser.parse_args()
    ruff = shutil.which("ruff")
    with tempfile.TemporaryDirectory(prefix="ascend-lint-bigfile-") as tmp:
        work = Path(tmp)
        # The linter as `pip install` lays it out, its bytecode compiled: otherwise every
        # timed run would first compile the linter's own modules (the commands below
        # inherit this environment; PYTHONSAFEPATH keeps the working folder off sys.path).
        staged = installed_layout(ROOT, work / "staged")
        os.environ.update(PYTHONPATH=str(staged), PYTHONSAFEPATH="1")
        (work / "pyproject.toml").write_text("[project]\nname = 'bigfile'\n")
        source = build_big_source(int(args.mb * 1_000_000))
        big = work / "big_kernels.py"
        big.write_text(source, encoding="utf-8")
        size_mb = big.stat().st_size / 1e6
        lines = source.count("\n")
        lint_cmd = [*LINT, big.name]
        fix_target = work / "fixed_kernels.py"
        fix_cmd = [*LINT, "--fix", fix_target.name]
        ruff_cmd = (
            [ruff, "check", "--isolated", "--no-cache", "--select", "ALL", "-q", big.name]
            if ruff
            else None
        )
        lint_times, fix_times, ruff_times = [], [], []
        lint_code = fix_code = None
        for _ in range(args.runs):
            t, lint_code = run_timed(lint_cmd, work)
            lint_times.append(t)
            shutil.copyfile(big, fix_target)
            t, fix_code = run_timed(fix_cmd, work)
            fix_times.append(t)
            if ruff_cmd:
                ruff_times.append(run_timed(ruff_cmd, work)[0])
        remaining = subprocess.run(
            [*LINT, "--statistics", fix_target.name], cwd=work, capture_output=True, text=True
        ).stdout
        lint_peak = peak_mib(lint_cmd, work)
        shutil.copyfile(big, fix_target)
        fix_peak = peak_mib(fix_cmd, work)
        findings = subprocess.run(
            [*LINT, "--statistics", big.name], cwd=work, capture_output=True, text=True
        ).stdout
        n_findings = sum(int(row.split()[0]) for row in findings.splitlines() if row.strip())
        n_remaining = sum(int(row.split()[0]) for row in remaining.splitlines() if row.strip())
        curve = size_curve(work, [float(x) for x in args.curve.split(",") if x], args.runs, ruff)
        start_s = start_up_s(work, args.runs)

        fla = None
        if args.fla_mirror.is_dir():
            tree = materialise(args.fla_mirror, work / "fla")
            head = git_head(args.fla_mirror)
            fla_lint, _ = run_timed([*LINT, "."], tree)
            pristine = _digests(tree)
            fla_fix, fla_code = run_timed([*LINT, "--fix", "."], tree)
            after = _digests(tree)
            changed = sum(1 for name, digest in after.items() if pristine.get(name) != digest)
            lost = len(set(pristine) - set(after))
            fla = (head, fla_lint, fla_fix, fla_code, f"{changed} changed, {lost} lost")

    lint_s, fix_s = statistics.median(lint_times), statistics.median(fix_times)
    ruff_s = statistics.median(ruff_times) if ruff_times else None
    from ascend_lint import __version__

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "## One big kernel file",
        "",
        f"* command: `python benchmarks/bench_bigfile.py --runs {args.runs} --mb {args.mb:g} "
        f"--curve {args.curve}`",
        f"* date: {now}; machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
        f"* ascend-lint {__version__}; {version([ruff, '--version']) if ruff else 'ruff not installed'}",
        f"* file: {size_mb:.1f} MB, {lines} lines, the `examples/gpu_habits/` kernels repeated with "
        f"unique names (`benchmarks/bigfile.py`); {n_findings} findings, {n_remaining} left after `--fix`",
        f"* medians of {args.runs} wall-clock runs (`--no-cache`, interpreter start included), lint and "
        "`--fix` taking turns; peak = largest resident set summed over the process and its "
        "forks (an upper bound: shared pages count once per process), separate run; a module "
        "of 1 MiB or more is linted in parts shared among the default `-j` (a process per core)",
        "",
        "| command | s | / lint | peak MiB | exit |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| `ascend-lint check --no-cache` | {lint_s:.2f} | 1.00x | {lint_peak:.0f} | {lint_code} |",
        f"| `ascend-lint check --no-cache --fix` | {fix_s:.2f} | {fix_s / lint_s:.2f}x | {fix_peak:.0f} | {fix_code} |",
    ]
    if ruff_s is not None:
        out.append(
            f"| `ruff check --select ALL --no-cache` (peer) | {ruff_s:.2f} | {ruff_s / lint_s:.2f}x | | |"
        )
    curve.append((size_mb, lint_s, lint_peak, ruff_s))
    out += [
        "",
        "Time per MB and peak memory by module size (the same kind of module; medians of "
        f"{args.runs} runs, interpreter start included; the last row is the {size_mb:.1f} MB "
        f"file above). Start-up, the lint of a one-kernel module, takes {start_s:.2f} s and "
        "weighs most on the smallest module: the per-MB ratio is taken after it.",
        "",
        *curve_table(curve, start_s),
    ]
    if fla is not None:
        head, fla_lint, fla_fix, fla_code, changed = fla
        out += [
            "",
            f"Whole FLA tree (`git archive` of `fla-org/flash-linear-attention` at `{head[:12]}`), one run each:",
            "",
            "| command | s | exit | .py files |",
            "| --- | ---: | ---: | --- |",
            f"| `ascend-lint check --no-cache .` | {fla_lint:.2f} | | |",
            f"| `ascend-lint check --no-cache --fix .` | {fla_fix:.2f} | {fla_code} | {changed} |",
        ]
    write_section(Path(args.out), "bigfile", "\n".join(out), title=RESULTS_TITLE)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
