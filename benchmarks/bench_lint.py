"""Speed and memory of ascend-lint on whole real repositories, against Ruff and Fixit
measured in the same run, written as a Markdown table.

    python benchmarks/bench_lint.py [--runs 5] [--fixit] [--baseline DIR] [--out benchmarks/RESULTS.md]

Trees are materialised from bare git snapshots of flash-linear-attention and
vllm-ascend (`--fla-mirror`, `--vllm-mirror`). Every ascend-lint figure is a median of
`--runs` wall-clock runs of the real command line, interpreter start included:

* cold: `--no-cache`, every rule, default process pool (one worker per core), taking
  turns run by run with Ruff (and with `--baseline`, an earlier checkout);
* warm: the same tree again with the content-hash cache filled (nothing changed);
* pre-commit: one ~40 KB kernel file, the way the hook passes it;
* `--version`: start-up cost alone.

Ruff (`check --select ALL --no-cache`) is the peer for the ratios; Fixit (`fixit lint`,
libcst-based) is slow, so it runs once and only with `--fixit`. Peak memory is the
largest resident set summed over the linter's process tree, sampled from /proc in a
separate, untimed run. Per-rule times come from one in-process pass over FLA with the
index built once, so each rule's own cost is visible.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from results_file import write_section  # noqa: E402

RESULTS_TITLE = "# Linter speed and memory"
MIRRORS = Path("/work/.mirror")


def materialise(mirror: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(mirror), "archive", "HEAD"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def tree_stats(tree: Path) -> dict:
    files = [p for p in tree.rglob("*.py") if p.is_file()]
    data = [p.read_bytes() for p in files]
    total = sum(len(d) for d in data)
    triton = [d for d in data if b"triton" in d]
    jit = [d for d in data if b"@triton.jit" in d]
    return {
        "files": len(files),
        "mb": total / 1e6,
        "triton_files": len(triton),
        "triton_share": sum(len(d) for d in triton) / total if total else 0.0,
        "jit_files": len(jit),
    }


def installed_layout(checkout: Path, into: Path) -> Path:
    """The package of a checkout laid out as `pip install` lays it out (pyproject's
    package-dir: the rule folders and the reference kernels go inside the package), with
    its bytecode compiled: without it every timed run would first compile the linter's
    own modules, which is not what a user's run costs. Returns the folder for
    PYTHONPATH, so that each version runs its own code and nothing else."""
    import tomllib

    shutil.copytree(checkout / "ascend_lint", into / "ascend_lint")
    config = tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = config.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    for package, folder in mapped.items():
        inside = into.joinpath(*package.split("."))
        if package.startswith("ascend_lint.") and (checkout / folder).is_dir():
            shutil.rmtree(inside, ignore_errors=True)
            shutil.copytree(checkout / folder, inside)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(into / "ascend_lint")], check=True
    )
    return into


def timed(
    cmd: list[str], runs: int, cwd: Path | None = None, env: dict | None = None
) -> tuple[float, int]:
    times = []
    code = 0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        times.append(time.perf_counter() - start)
        code = proc.returncode
        if b"Traceback" in proc.stderr:
            raise SystemExit(
                f"traceback from {' '.join(cmd)}:\n{proc.stderr.decode(errors='replace')}"
            )
    return statistics.median(times), code


def timed_round_robin(commands: list[list[str]], runs: int, cwd: Path | None = None) -> list[float]:
    """Median wall-clock seconds of each command, the commands taking turns run by run,
    so that a machine that slows down or speeds up meanwhile affects them alike."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, cmd in enumerate(commands):
            times[i].append(timed(cmd, 1, cwd)[0])
    return [statistics.median(t) for t in times]


def peak_tree_rss_mib(cmd: list[str], cwd: Path | None = None) -> float:
    """Largest sum of RSS over the process and its descendants, sampled every 10 ms."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    page = os.sysconf("SC_PAGE_SIZE")
    while proc.poll() is None:
        parents: dict[int, int] = {}
        rss: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                parents[int(entry)] = int(fields[1])
                rss[int(entry)] = int(fields[21]) * page
            except (OSError, IndexError, ValueError):
                continue
        members = {proc.pid}
        grew = True
        while grew:
            grew = False
            for pid, ppid in parents.items():
                if ppid in members and pid not in members:
                    members.add(pid)
                    grew = True
        peak = max(peak, sum(rss.get(pid, 0) for pid in members))
        time.sleep(0.01)
    return peak / 2**20


def version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
        return out.splitlines()[0] if out else "?"
    except (OSError, subprocess.CalledProcessError):
        return "not installed"


def phase_ms(tree: Path, runs: int) -> dict[str, float]:
    """Where one process's cold lint of a tree spends its time: `session.lint_file` of
    each file (the default selection), its steps timed where the engine takes them
    (parse, index, rules, noqa), the rest of each lint (decoding, the prefilter, freeing
    the trees) as "other". The facts rules share are charged to the first rule that asks.
    The least of `runs` passes, each step summed over the files."""
    sys.path.insert(0, str(ROOT))
    from ascend_lint import engine
    from ascend_lint.session import lint_file
    from ascend_lint.settings import Settings

    steps = {
        "parse": "parse_python",
        "index": "build_index",
        "rules": "run_rules",
        "noqa": "finish_findings",
    }
    spent = dict.fromkeys(("read", *steps, "other"), 0.0)
    clock = time.perf_counter
    originals = {name: getattr(engine, name) for name in steps.values()}

    def timed(step: str, function):
        def run(*args, **kwargs):
            start = clock()
            try:
                return function(*args, **kwargs)
            finally:
                spent[step] += clock() - start

        return run

    paths = sorted(str(p) for p in tree.rglob("*.py"))
    settings = Settings()
    best: dict[str, float] = {}
    try:
        for step, name in steps.items():
            setattr(engine, name, timed(step, originals[name]))
        for _ in range(runs):
            for step in spent:
                spent[step] = 0.0
            for path in paths:
                start = clock()
                with open(path, "rb") as fh:
                    raw = fh.read()
                spent["read"] += clock() - start
                before = sum(spent[step] for step in steps)
                start = clock()
                lint_file(path, raw, settings.options_for(path))
                spent["other"] += clock() - start - (sum(spent[step] for step in steps) - before)
            for step, seconds in spent.items():
                best[step] = min(best.get(step, seconds), seconds)
    finally:
        for name, function in originals.items():
            setattr(engine, name, function)
    return {step: seconds * 1e3 for step, seconds in best.items()}


def cpu_seconds(command: list[str], cwd: Path) -> float:
    """User and system CPU time of one run of `command` and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def per_rule_ms(tree: Path) -> dict[str, float]:
    """Each rule's own time over a tree's candidate files, index built once per file."""
    sys.path.insert(0, str(ROOT))
    import ast

    from ascend_lint.engine import FileResult, run_rules
    from ascend_lint.index import KernelIndex
    from ascend_lint.index.values import kernel_values
    from ascend_lint.rules import ALL_RULES, RuleContext
    from ascend_lint.source import SourceFile

    contexts = []
    for path in tree.rglob("*.py"):
        raw = path.read_bytes()
        if b"triton" not in raw:
            continue
        try:
            source = SourceFile.from_bytes(str(path), raw)
            contexts.append(RuleContext(KernelIndex.build(ast.parse(source.text)), source))
        except (SyntaxError, ValueError):
            continue
    # Facts shared by several rules are computed on first use; warm them so that cost
    # is not charged to whichever rule happens to run first.
    for ctx in contexts:
        for fn in ctx.index.kernels:
            kernel_values(fn, ctx.index.aliases)
            fn.statement_names()
    out = {}
    # As a lint runs them: with the cycle collector paused (`engine.lint_source`), which
    # would otherwise re-scan every file's tree and index kept here, again and again.
    paused = gc.isenabled()
    gc.disable()
    try:
        for rule in ALL_RULES:
            start = time.perf_counter()
            for ctx in contexts:
                # its findings made diagnostics, fixes set after suppression
                run_rules(
                    FileResult(ctx.source.path), ctx.source, ctx.index, frozenset({rule.code})
                )
            out[rule.code] = (time.perf_counter() - start) * 1e3
    finally:
        if paused:
            gc.enable()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--fixit", action="store_true", help="also time `fixit lint` once per tree (minutes)"
    )
    ap.add_argument(
        "--fla-mirror", default=str(MIRRORS / "fla-org+flash-linear-attention" / "repo")
    )
    ap.add_argument("--vllm-mirror", default=str(MIRRORS / "vllm-project+vllm-ascend" / "repo"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    ap.add_argument(
        "--baseline",
        metavar="DIR",
        help="a checkout of an earlier ascend-lint (e.g. `git worktree add DIR <rev>`): its "
        "cold time is measured in the same run, taking turns with this one and with ruff",
    )
    args = ap.parse_args()

    load_before = os.getloadavg()[0]  # the machine may be shared: the table says so
    staged = Path(tempfile.mkdtemp(prefix="ascend-lint-bench-"))
    this = installed_layout(ROOT, staged / "this")
    check = ["-m", "ascend_lint", "check", "--exit-zero", "-q", "--output-format", "concise"]
    # Each version is picked by PYTHONPATH, and `-m` must not put the working directory
    # ahead of it: run from this repository, that would import this checkout's package
    # for the baseline too. PYTHONSAFEPATH (3.11+) and a neutral working directory
    # (older interpreters) both keep it out.
    this_python = ["env", f"PYTHONPATH={this}", "PYTHONSAFEPATH=1", sys.executable]
    lint = [*this_python, *check]
    ruff = shutil.which("ruff")
    fixit = shutil.which("fixit")
    baseline = None
    if args.baseline:
        base = Path(args.baseline).resolve()
        staged_base = installed_layout(base, staged / "baseline")
        baseline = ["env", f"PYTHONPATH={staged_base}", "PYTHONSAFEPATH=1", sys.executable, *check]
        base_rev = subprocess.run(
            ["git", "-C", str(base), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip() or str(base)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        neutral = Path(tmp) / "cwd"  # no package of anyone's in it
        neutral.mkdir()
        trees = {
            "FLA": materialise(Path(args.fla_mirror), Path(tmp) / "fla"),
            "vllm-ascend": materialise(Path(args.vllm_mirror), Path(tmp) / "vllm-ascend"),
        }
        for name, tree in trees.items():
            stats = tree_stats(tree)
            cache = Path(tmp) / f"cache-{name}"
            _, code = timed([*lint, "--no-cache", str(tree)], 1, neutral)
            peers = [[*lint, "--no-cache", str(tree)]]
            if ruff:
                peers.append(
                    [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", str(tree)]
                )
            if baseline:
                peers.append([*baseline, "--no-cache", str(tree)])
            medians = timed_round_robin(peers, args.runs, neutral)
            cold = medians[0]
            ruff_s = medians[1] if ruff else float("nan")
            base_s = medians[-1] if baseline else float("nan")
            subprocess.run(
                [*lint, "--cache-dir", str(cache), str(tree)],
                cwd=neutral,
                stdout=subprocess.DEVNULL,
                check=False,
            )
            warm, _ = timed([*lint, "--cache-dir", str(cache), str(tree)], args.runs, neutral)
            base_warm = float("nan")
            if baseline:  # its own cache: a version's cache entries are its own
                base_cache = [*baseline, "--cache-dir", str(cache) + "-baseline", str(tree)]
                subprocess.run(base_cache, cwd=neutral, stdout=subprocess.DEVNULL, check=False)
                base_warm, _ = timed(base_cache, args.runs, neutral)
            fixit_s = (
                timed([fixit, "lint", str(tree)], 1)[0] if (fixit and args.fixit) else float("nan")
            )
            peak = peak_tree_rss_mib([*lint, "--no-cache", str(tree)], neutral)
            rows.append((name, stats, cold, warm, ruff_s, fixit_s, peak, code, (base_s, base_warm)))
        fla_rules = per_rule_ms(trees["FLA"])
        fla_phases = phase_ms(trees["FLA"], 3)
        lint_cpu = min(
            cpu_seconds([*lint, "--no-cache", str(trees["FLA"])], neutral) for _ in range(3)
        )
        ruff_cpu = (
            min(
                cpu_seconds(
                    [
                        ruff,
                        "check",
                        "--select",
                        "ALL",
                        "--no-cache",
                        "--exit-zero",
                        "-q",
                        str(trees["FLA"]),
                    ],
                    neutral,
                )
                for _ in range(3)
            )
            if ruff
            else float("nan")
        )
        kernel_file = max(
            (
                p
                for p in trees["FLA"].rglob("*.py")
                if b"@triton.jit" in p.read_bytes() and p.stat().st_size <= 45_000
            ),
            key=lambda p: p.stat().st_size,
        )
        one_file, _ = timed([*lint, "--no-cache", str(kernel_file)], args.runs, neutral)
        # What a user sees by default: every finding with its code frame and help line.
        full_check = [*check[: check.index("--output-format")], "--output-format", "full"]
        full_warm = {}
        for version_name, command in (
            ("this", this_python),
            ("base", baseline and baseline[: -len(check)]),
        ):
            if command:
                warm_full = [
                    *command,
                    *full_check,
                    "--cache-dir",
                    str(staged / f"full-{version_name}"),
                    str(trees["FLA"]),
                ]
                subprocess.run(warm_full, cwd=neutral, stdout=subprocess.DEVNULL, check=False)
                full_warm[version_name], _ = timed(warm_full, args.runs, neutral)
        version_s, _ = timed([*this_python, "-m", "ascend_lint", "--version"], args.runs, neutral)
        kernel_kb = kernel_file.stat().st_size / 1e3

    from ascend_lint import __version__

    def ratio(a: float, b: float, digits: int = 2) -> str:
        return f"{a / b:.{digits}f}x" if b == b and b > 0 else "-"

    lines = [
        "## Whole trees",
        "",
        f"* command: `python benchmarks/bench_lint.py --runs {args.runs}{' --fixit' if args.fixit else ''}"
        f"{' --baseline <checkout of ' + base_rev + '>' if baseline else ''}`",
        f"* date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; machine: {os.cpu_count()} cores, "
        f"{platform.machine()}, Python {platform.python_version()}; load average "
        f"{load_before:.1f} before and {os.getloadavg()[0]:.1f} after the run",
        f"* ascend-lint {__version__}; {version([ruff, '--version']) if ruff else 'ruff not installed'}; "
        f"fixit {version([fixit, '--version']).split()[-1] if fixit else 'not installed'}",
        f"* medians of {args.runs} wall-clock runs of the command line (interpreter start included, "
        "the linter's bytecode compiled as pip installs it); Fixit once; peak memory summed over "
        "the process tree; cold = `--no-cache`, warm = unchanged tree with the cache filled",
        "",
        "| tree | .py files | MB | files with `triton` (byte share) | with `@triton.jit` | ascend-lint cold s | warm s | ruff ALL s | cold / ruff | warm / ruff cold | fixit s | fixit / cold | peak MiB | exit |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, st, cold, warm, ruff_s, fixit_s, peak, code, _base in rows:
        lines.append(
            f"| {name} | {st['files']} | {st['mb']:.1f} | {st['triton_files']} ({st['triton_share']:.0%}) | "
            f"{st['jit_files']} | {cold:.2f} | {warm:.3f} | {ruff_s:.2f} | {ratio(cold, ruff_s)} | "
            f"{ratio(warm, ruff_s, 3)} | {fixit_s:.1f} | {ratio(fixit_s, cold)} | {peak:.0f} | {code} |"
        )
    if baseline:
        lines += [
            "",
            f"Same run, against the baseline checkout `{base_rev}` (`--baseline`); cold: the "
            "three commands took turns run by run; warm: each version with a cache it filled:",
            "",
            "| tree | this version cold s | baseline cold s | this / baseline | this / ruff | "
            "baseline / ruff | this version warm s | baseline warm s | this / baseline |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, _st, cold, warm, ruff_s, _fixit, _peak, _code, (base_s, base_warm) in rows:
            lines.append(
                f"| {name} | {cold:.2f} | {base_s:.2f} | {ratio(cold, base_s)} | "
                f"{ratio(cold, ruff_s)} | {ratio(base_s, ruff_s)} | {warm:.3f} | "
                f"{base_warm:.3f} | {ratio(warm, base_warm)} |"
            )
    lines += [
        "",
        f"* one {kernel_kb:.0f} KB kernel file (`{kernel_file.relative_to(trees['FLA'])}` of FLA), as pre-commit "
        f"passes it: {one_file:.2f} s; `ascend-lint --version`: {version_s:.3f} s",
        f"* warm, FLA, the default output (`--output-format full`: code frames and help lines): "
        f"{full_warm['this']:.3f} s"
        + (
            f" (baseline {full_warm['base']:.3f} s, {ratio(full_warm['this'], full_warm['base'])})"
            if "base" in full_warm
            else ""
        ),
        "",
        "## Where a cold lint of FLA spends its time",
        "",
        f"CPU time of the command line (all its processes, least of 3 runs): ascend-lint "
        f"{lint_cpu:.2f} s, `ruff check --select ALL` {ruff_cpu:.2f} s ({ratio(lint_cpu, ruff_cpu)}). "
        "The steps of one process's lint of the same files (`phase_ms`: the engine's own steps "
        "timed where it takes them, the least of 3 passes, each step summed over the files; "
        "the rules of the default selection, the facts they share charged to the first rule "
        "that asks; other: decoding, the prefilter, freeing the trees):",
        "",
        "| step | ms | share | / ruff's CPU |",
        "| --- | ---: | ---: | ---: |",
        *[
            f"| {step} | {ms:.0f} | {ms / sum(fla_phases.values()):.0%} | "
            f"{ratio(ms / 1e3, ruff_cpu)} |"
            for step, ms in fla_phases.items()
        ],
        f"| all | {sum(fla_phases.values()):.0f} | 100% | "
        f"{ratio(sum(fla_phases.values()) / 1e3, ruff_cpu)} |",
        "",
        "## Time per rule on FLA (ms, index built once; shared facts computed beforehand)",
        "",
        "| rule | ms |",
        "| --- | ---: |",
        *[f"| {code} | {ms:.0f} |" for code, ms in fla_rules.items()],
        "",
    ]
    shutil.rmtree(staged, ignore_errors=True)
    write_section(Path(args.out), "lint", "\n".join(lines), title=RESULTS_TITLE)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
