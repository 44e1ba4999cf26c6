"""What compiling the index would buy: the modules of `ascend_lint/index` where a lint
spends most of its time, compiled with mypyc, against the same source run by CPython
and against Ruff, in one run on FLA.

    python benchmarks/compiled_index.py [--runs 5] [--fla-mirror M] [--out benchmarks/RESULTS.md]

Needs mypy (it ships mypyc) and a C compiler. Nothing in the checkout changes but the
results section: the package is laid out as pip installs it in a temporary folder,
adapted there for mypyc 1.13, and that one adapted source runs both interpreted and
compiled, so the two differ only in compilation. The adaptations keep what every module
computes, and the run checks it: the JSON findings of both on the tree must be the same
bytes, or the script stops without writing a table.

* `__slots__` declarations are dropped: a compiled class lays out its own attributes,
  and mypyc rejects the declaration.
* `weakref.ref(x)` becomes a closure that returns `x`: compiled classes take no weak
  reference. That holds a strong reference, which changes memory, not results.
* The `ast` classes that dataclass fields are annotated with are imported by their bare
  names: mypyc 1.13 looks a compiled dataclass's annotations up by bare name.
* Every line mypy reports gets `# type: ignore`: mypyc compiles only code that
  type-checks, and checks such lines' values at run time instead.

Cold runs are `--no-cache` with every rule of the default selection, the three
commands taking turns run by run; CPU time is user plus system over the process tree,
the least of three runs.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_lint import (  # noqa: E402
    MIRRORS,
    cpu_seconds,
    installed_layout,
    materialise,
    timed_round_robin,
    version,
)
from results_file import write_section  # noqa: E402

# The modules of `ascend_lint/index` that take the most of a lint's time on FLA
# (cProfile, cumulative, rules run on a fresh index), and those they call in turn.
MODULES = ("syntax", "linear", "lanes", "constexpr", "values", "coverage", "aliases", "accesses")
_SLOTS = re.compile(r"\n    __slots__ = \((?:[^()]|\n)*?\)\n")
_FIELD = re.compile(r"^\s+\w+: (.*)$", re.M)
_AST_CLASS = re.compile(r"\bast\.(\w+)")
_MYPY_ERROR = re.compile(r"(.+?):(\d+): error:")


def adapt(path: Path) -> None:
    """The source changes mypyc needs before a module type-checks (the module doc)."""
    text = _SLOTS.sub("\n", path.read_text(encoding="utf-8"))
    if "weakref.ref(" in text:
        text = text.replace("weakref.ref(", "_strong(")
        helper = "\n\ndef _strong(value):\n    return lambda: value\n\n"
        text = text.replace("\nimport ast\n", "\nimport ast\n" + helper, 1)
    annotated = _AST_CLASS.findall(" ".join(_FIELD.findall(text)))
    classes = sorted({n for n in annotated if n[0].isupper() or n in ("stmt", "expr")})
    if classes:
        names = "from ast import " + ", ".join(classes) + "  # noqa"
        text = text.replace("\nimport ast\n", f"\nimport ast\n{names}\n", 1)
    path.write_text(text, encoding="utf-8")


def run_mypy(tool: str, files: list[Path], cwd: Path) -> subprocess.CompletedProcess:
    """`mypy` (check) or `mypyc` (check and compile) on `files`, relative to `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", tool, "--ignore-missing-imports", "--follow-imports=silent"]
        + [str(f.relative_to(cwd)) for f in files],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def silence_type_errors(files: list[Path], cwd: Path) -> int:
    """`# type: ignore` on every line mypy reports; how many errors there were."""
    report = run_mypy("mypy", files, cwd).stdout
    rows: dict[str, set[int]] = collections.defaultdict(set)
    for match in _MYPY_ERROR.finditer(report):
        rows[match[1]].add(int(match[2]))
    for name, numbers in rows.items():
        path = cwd / name
        lines = path.read_text(encoding="utf-8").split("\n")
        for n in numbers:
            code = lines[n - 1].split("  #", 1)[0]
            lines[n - 1] = code + "  # type: ignore"
        path.write_text("\n".join(lines), encoding="utf-8")
    return sum(len(n) for n in rows.values())


def compile_modules(stage: Path, modules: tuple[str, ...]) -> tuple[int, float]:
    """Adapt and compile `modules` of the staged package in place: (errors silenced,
    build seconds). The extension modules land beside their sources."""
    files = [stage / "ascend_lint" / "index" / f"{m}.py" for m in modules]
    for f in files:
        adapt(f)
    silenced = silence_type_errors(files, stage)
    start = time.perf_counter()
    build = run_mypy("mypyc", files, stage)
    seconds = time.perf_counter() - start
    built = list((stage / "ascend_lint" / "index").glob("*.so"))
    if build.returncode != 0 or len(built) != len(modules):
        raise SystemExit(f"mypyc did not build all {len(modules)} modules:\n{build.stdout[-3000:]}")
    return silenced, seconds


def lines_of(stage: Path, modules: tuple[str, ...]) -> int:
    return sum(
        len((stage / "ascend_lint" / "index" / f"{m}.py").read_text().splitlines()) for m in modules
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--fla-mirror", default=str(MIRRORS / "fla-org+flash-linear-attention" / "repo")
    )
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    args = ap.parse_args()
    if importlib.util.find_spec("mypyc") is None:
        raise SystemExit("mypyc is not installed (it comes with mypy: pip install mypy)")
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        raise SystemExit("no C compiler: mypyc cannot build")

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ascend-lint-compiled-") as tmp:
        work = Path(tmp)
        compiled = installed_layout(ROOT, work / "compiled")
        source_lines = lines_of(compiled, MODULES)
        silenced, build_s = compile_modules(compiled, MODULES)
        # The interpreted arm runs the very same adapted source, without the extensions.
        interpreted = work / "interpreted"
        shutil.copytree(
            compiled / "ascend_lint",
            interpreted / "ascend_lint",
            ignore=shutil.ignore_patterns("*.so", "__pycache__"),
        )
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(interpreted)], check=True)
        tree = materialise(Path(args.fla_mirror), work / "fla")
        neutral = work / "cwd"
        neutral.mkdir()

        def lint(stage: Path, *extra: str) -> list[str]:
            return [
                "env", f"PYTHONPATH={stage}", "PYTHONSAFEPATH=1", sys.executable,
                "-m", "ascend_lint", "check", "--no-cache", "--exit-zero", *extra, str(tree),
            ]  # fmt: skip

        findings = [
            subprocess.run(lint(stage, "--output-format", "json"), cwd=neutral, capture_output=True)
            for stage in (interpreted, compiled)
        ]
        for found in findings:
            if found.returncode != 0 or found.stderr.strip():
                raise SystemExit(f"a lint failed:\n{found.stderr.decode(errors='replace')}")
        if findings[0].stdout != findings[1].stdout:
            raise SystemExit("compiled and interpreted findings differ: no table written")
        quiet = ("-q", "--output-format", "concise")
        commands = [lint(interpreted, *quiet), lint(compiled, *quiet)]
        ruff = shutil.which("ruff")
        if ruff:
            commands.append(
                [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", str(tree)]
            )
        medians = timed_round_robin(commands, args.runs, neutral)
        cpu = [min(cpu_seconds(c, neutral) for _ in range(3)) for c in commands]
    load_after = os.getloadavg()[0]

    ruff_s = medians[2] if ruff else float("nan")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    mypy_version = version([sys.executable, "-m", "mypy", "--version"])
    rows = [
        ("CPython (the adapted source)", medians[0], cpu[0]),
        (f"{len(MODULES)} index modules compiled", medians[1], cpu[1]),
    ]
    if ruff:
        rows.append(("`ruff check --select ALL`", ruff_s, cpu[2]))
    body = [
        "## A compiled index (mypyc), on FLA",
        "",
        f"* command: `python benchmarks/compiled_index.py --runs {args.runs}`",
        f"* date: {date}; machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; load average {load_before:.1f} before and "
        f"{load_after:.1f} after the run",
        f"* {mypy_version}; {version([ruff, '--version']) if ruff else 'ruff not installed'}",
        f"* compiled: `{'`, `'.join(MODULES)}` of `ascend_lint/index` ({source_lines} lines); "
        f"{silenced} lines mypy reports got `# type: ignore`; the build took {build_s:.0f} s",
        "* findings: the compiled and the interpreted lint of the tree print the same JSON",
        "",
        "| lint of FLA, cold | wall s (median) | / ruff | CPU s (least of 3) | wall / CPython |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, wall, seconds in rows:
        body.append(
            f"| {name} | {wall:.2f} | {wall / ruff_s:.2f}x | {seconds:.2f} | "
            f"{wall / medians[0]:.2f}x |"
        )
    write_section(Path(args.out), "compiled-index", "\n".join(body))
    print("\n".join(body))
    return 0


if __name__ == "__main__":
    sys.exit(main())
