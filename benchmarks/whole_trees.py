"""Findings per rule and wall-clock time of ascend-lint on whole real repositories,
written as a Markdown table.

    MIRROR_ROOT=/work/.mirror python benchmarks/whole_trees.py --out docs/WHOLE_TREES.md

Each tree is a bare git snapshot under the mirror root (`--mirror-root`, default
`$MIRROR_ROOT`, else `/work/.mirror`), laid out `<owner>+<name>/repo`. By default:
flash-linear-attention, vllm-ascend, sgl-kernel-npu and triton-ascend; `--repo
owner/name` (repeatable) picks others. For each one the script:

* exports HEAD into a temporary folder (`git -C <mirror> archive HEAD | tar -x`) and
  records the full commit and the number of `.py` files in it;
* runs the real command line in a child process, `python -m ascend_lint check
  --no-cache --exit-zero --output-format json <tree>` (default rule selection, default
  process pool, interpreter start included), and keeps the best wall-clock time of
  `--runs` runs;
* counts findings per rule code and the files with at least one finding;
* with `--ruff`, also times `ruff check --select ALL --no-cache --exit-zero -q <tree>` on
  the same exported tree (each ruff run right after a lint run, best of `--runs` too)
  and counts the files ruff checks (`ruff check --show-files`), as a peer column.

An exit code of 2 (internal or path error), a traceback on stderr, output that is not
JSON or a missing snapshot is reported on stderr and in bold under the table, and so
is any ASC000 (a file the parser rejects). `--per-rule-lines K` adds, for each tree, up
to K example findings per rule (distinct `path:row`, in the linter's order) in a
collapsible block, to check by hand. The script exits 1 when a tree had an exit code 2,
a traceback, unreadable output, a failing ruff run or no snapshot.

`benchmarks/eval_corpus.py` imports `measure_trees`, `method_lines`, `table_lines` and
`commit_lines` to put the same table in docs/EVAL.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench_lint import compile_bytecode, materialise, tree_stats, version

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REPOS = [
    "fla-org/flash-linear-attention",
    "vllm-project/vllm-ascend",
    "sgl-project/sgl-kernel-npu",
    "Ascend/triton-ascend",
]
LINT_ARGS = ["check", "--no-cache", "--exit-zero", "--output-format", "json"]
RUFF_ARGS = ["check", "--select", "ALL", "--no-cache", "--exit-zero", "-q"]
EXIT_ERROR = 2


@dataclass
class TreeResult:
    repo: str
    commit: str = "?"
    py_files: int = 0
    seconds: float = float("nan")
    exit_code: int | None = None
    findings: Counter = field(default_factory=Counter)
    files_with_findings: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ruff_seconds: float | None = None  # None: ruff not timed
    ruff_files: int | None = None

    @property
    def total(self) -> int:
        return sum(self.findings.values())


def mirror_of(root: Path, repo: str) -> Path:
    return root / repo.replace("/", "+") / "repo"


def lint_env() -> dict[str, str]:
    """This checkout's linter, whatever else is installed."""
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}


def lint_command(tree: Path) -> list[str]:
    return [sys.executable, "-m", "ascend_lint", *LINT_ARGS, str(tree)]


def ruff_executable() -> str | None:
    return shutil.which("ruff")


def ruff_command(ruff: str, tree: Path) -> list[str]:
    return [ruff, *RUFF_ARGS, str(tree)]


def tool_versions() -> dict[str, str]:
    """`ascend-lint X`, `ruff Y`, `Python Z` as the tools print them."""
    ruff = ruff_executable()
    return {
        "ascend-lint": version([sys.executable, "-m", "ascend_lint", "--version"]),
        "ruff": version([ruff, "--version"]) if ruff else "ruff not installed",
        "python": f"Python {platform.python_version()}",
    }


def relative(filename: str, tree: Path) -> str:
    path = Path(filename)
    if not path.is_absolute():
        return filename
    try:
        return path.relative_to(tree).as_posix()
    except ValueError:
        return filename


def measure(
    result: TreeResult, tree: Path, runs: int, examples: int, ruff: str | None = None
) -> None:
    """Best of `runs` lint runs; given `ruff`, one ruff run right after each lint run."""
    best = float("inf")
    ruff_best = float("inf")
    counts: list[int] = []
    items: list[dict] = []
    err = ""
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            lint_command(tree), capture_output=True, text=True, errors="replace", env=lint_env()
        )
        best = min(best, time.perf_counter() - start)
        err = proc.stderr
        result.exit_code = proc.returncode
        if proc.returncode == EXIT_ERROR:
            result.problems.append(f"exit code 2: {_last_error(err)}")
        elif proc.returncode != 0:
            result.problems.append(f"exit code {proc.returncode} despite --exit-zero")
        if "Traceback" in err:
            result.problems.append(f"traceback on stderr: {_last_error(err)}")
        try:
            items = json.loads(proc.stdout or "[]")
        except json.JSONDecodeError as exc:
            result.problems.append(f"stdout is not JSON ({exc})")
            items = []
        counts.append(len(items))
        if ruff:
            ruff_best = min(ruff_best, _time_ruff(result, ruff, tree))
    result.seconds = best
    if ruff:
        result.ruff_seconds = ruff_best
        result.ruff_files = _ruff_file_count(ruff, tree)
    result.problems = list(dict.fromkeys(result.problems))  # once, however many runs
    if len(set(counts)) > 1:
        result.problems.append(f"finding counts differ between runs: {counts}")
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    if warnings:
        result.notes.append(f"{len(warnings)} warning(s) on stderr, first: {warnings[0]}")
    result.findings = Counter(item["code"] for item in items)
    result.files_with_findings = len({item["filename"] for item in items})
    for item in items:
        listed = result.examples.setdefault(item["code"], [])
        where = f"{relative(item['filename'], tree)}:{item['location']['row']}"
        if len(listed) < examples and where not in listed:
            listed.append(where)
    if result.findings["ASC000"]:
        result.notes.append(f"**{result.findings['ASC000']} ASC000** (files the parser rejects)")


def _time_ruff(result: TreeResult, ruff: str, tree: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        ruff_command(ruff, tree), capture_output=True, text=True, errors="replace"
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        result.problems.append(f"ruff exit code {proc.returncode}: {_last_error(proc.stderr)}")
    return seconds


def _ruff_file_count(ruff: str, tree: Path) -> int:
    listed = subprocess.run(
        [ruff, "check", "--show-files", "--select", "ALL", "--no-cache", str(tree)],
        capture_output=True,
        text=True,
        errors="replace",
    )
    return sum(1 for line in listed.stdout.splitlines() if line.strip())


def _last_error(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    picked = [ln for ln in lines if "error" in ln.lower()] or lines or ["(stderr empty)"]
    return picked[-1].strip()[:300]


def measure_trees(
    repos: list[str],
    mirror_root: Path,
    runs: int,
    examples: int = 0,
    with_ruff: bool = False,
) -> list[TreeResult]:
    """Export each tree's HEAD, lint it (and ruff it) `runs` times: one result per repo."""
    ruff = ruff_executable() if with_ruff else None
    compile_bytecode(ROOT)
    results: list[TreeResult] = []
    with tempfile.TemporaryDirectory(prefix="ascend-lint-whole-trees-") as work:
        for repo in repos:
            result = TreeResult(repo)
            results.append(result)
            if with_ruff and not ruff:
                result.notes.append("ruff not found on PATH: not timed")
            mirror = mirror_of(mirror_root, repo)
            if not mirror.is_dir():
                result.problems.append(f"no snapshot at {mirror}")
                print(f"{repo}: no snapshot at {mirror}", file=sys.stderr)
                continue
            result.commit = subprocess.run(
                ["git", "-C", str(mirror), "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            tree = materialise(mirror, Path(work) / repo.replace("/", "+"))
            result.py_files = tree_stats(tree)["files"]
            measure(result, tree, runs, examples, ruff)
            shutil.rmtree(tree)
            status = "; ".join(result.problems + result.notes) or "ok"
            peer = "" if result.ruff_seconds is None else f", ruff {result.ruff_seconds:.2f} s"
            print(
                f"{repo}: {result.total} findings in {result.seconds:.2f} s{peer} ({status})",
                file=sys.stderr,
            )
    return results


def method_lines(runs: int, with_ruff: bool) -> list[str]:
    """How the table was measured, as Markdown bullets."""
    best = "wall-clock time" if runs == 1 else f"best wall-clock time of {runs} runs"
    lines = [
        f"* lint run per tree: `python -m ascend_lint {' '.join(LINT_ARGS)} <tree>` "
        f"(default rules and process pool); seconds = {best}, interpreter start included",
        "* tree: `git archive HEAD` of the snapshot; .py files = every `*.py` file in it",
    ]
    if with_ruff:
        lines.append(
            f"* peer: `ruff {' '.join(RUFF_ARGS)} <tree>` on the same exported tree, each run "
            f"right after a lint run, output captured the same way; ruff seconds = {best}; "
            "ratio = seconds / ruff seconds (below 1: ascend-lint is faster); ruff files = "
            "what `ruff check --show-files` lists (ruff honours the tree's own ruff settings "
            "and also checks `.pyi` files and notebooks)"
        )
    return lines


def table_lines(results: list[TreeResult]) -> list[str]:
    """The Markdown table, then the verdict, the problems and the notes."""
    codes = sorted({code for r in results for code in r.findings})
    with_ruff = any(r.ruff_seconds is not None for r in results)
    header = ["repo", "commit", ".py files", "seconds"]
    if with_ruff:
        header += ["ruff seconds", "ratio", "ruff files"]
    header += ["findings", "files with findings", "exit", *codes]
    lines = [
        "| " + " | ".join(header) + " |",
        "| --- | --- |" + " ---: |" * (len(header) - 2),
    ]
    for r in results:
        if r.exit_code is None:  # never linted (no snapshot)
            lines.append("| " + " | ".join([r.repo, *["-"] * (len(header) - 1)]) + " |")
            continue
        exit_cell = str(r.exit_code)
        if r.exit_code == EXIT_ERROR:
            exit_cell = f"**{exit_cell}**"
        cells = [r.repo, f"`{r.commit[:10]}`", f"{r.py_files:,}", f"{r.seconds:.2f}"]
        if with_ruff and r.ruff_seconds is None:
            cells += ["-", "-", "-"]
        elif with_ruff:
            ratio = r.seconds / r.ruff_seconds if r.ruff_seconds else float("nan")
            cells += [f"{r.ruff_seconds:.2f}", f"{ratio:.2f}", f"{r.ruff_files or 0:,}"]
        cells += [
            f"{r.total:,}",
            f"{r.files_with_findings:,}",
            exit_cell,
            *(f"{r.findings[code]:,}" for code in codes),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    problems = [(r, p) for r in results for p in r.problems]
    notes = [(r, n) for r in results for n in r.notes]
    verdict = "no exit code 2, no traceback, every output read as JSON."
    lines += ["", "Result: " + ("**PROBLEMS**" if problems else verdict)]
    lines += [f"* **{r.repo}: {p}**" for r, p in problems]
    lines += [f"* {r.repo}: {n}" for r, n in notes]
    return lines


def example_lines(results: list[TreeResult], examples: int, level: str = "##") -> list[str]:
    """Up to `examples` findings per rule and tree, in collapsible blocks."""
    if not examples:
        return []
    lines = [
        "",
        f"{level} Examples (up to {examples} distinct `path:row` per rule, in the linter's order)",
    ]
    for r in results:
        if not r.examples:
            continue
        lines += ["", "<details>", f"<summary>{r.repo} at {r.commit[:10]}</summary>", ""]
        for code in sorted(r.examples):
            lines.append(f"* {code} ({r.findings[code]:,}): " + ", ".join(r.examples[code]))
        lines += ["", "</details>"]
    return lines


def commit_lines(results: list[TreeResult]) -> list[str]:
    return ["Full commits:", "", *(f"* {r.repo}: `{r.commit}`" for r in results)]


def render(
    results: list[TreeResult], command: str, runs: int, examples: int, with_ruff: bool = False
) -> str:
    now = datetime.datetime.now(datetime.timezone.utc)
    tools = tool_versions()
    lines = [
        "# ascend-lint on whole repositories: findings per rule and time",
        "",
        f"* date: {now:%Y-%m-%d %H:%M} UTC; {tools['ascend-lint']}; {tools['ruff']}; "
        f"{tools['python']}; {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs",
        f"* command: `{command}`",
        *method_lines(runs, with_ruff),
        "",
        *table_lines(results),
        *example_lines(results, examples),
        "",
        *commit_lines(results),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--repo",
        action="append",
        metavar="OWNER/NAME",
        help=f"tree to measure, repeatable (default: {', '.join(DEFAULT_REPOS)})",
    )
    ap.add_argument(
        "--mirror-root",
        type=Path,
        default=Path(os.environ.get("MIRROR_ROOT", "/work/.mirror")),
        help="folder holding <owner>+<name>/repo (default: $MIRROR_ROOT, else /work/.mirror)",
    )
    ap.add_argument("--runs", type=int, default=1, help="timed runs per tree; the best is kept")
    ap.add_argument(
        "--per-rule-lines",
        type=int,
        default=0,
        metavar="K",
        help="list up to K example findings per rule and tree",
    )
    ap.add_argument(
        "--ruff", action="store_true", help="also time `ruff check --select ALL` on each tree"
    )
    ap.add_argument("--out", type=Path, help="write the Markdown here (default: stdout)")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    given = sys.argv[1:] if argv is None else argv
    command = shlex.join(["python", "benchmarks/whole_trees.py", *given])
    if "MIRROR_ROOT" in os.environ:
        command = f"MIRROR_ROOT={shlex.quote(os.environ['MIRROR_ROOT'])} {command}"

    results = measure_trees(
        args.repo or DEFAULT_REPOS, args.mirror_root, args.runs, args.per_rule_lines, args.ruff
    )
    text = render(results, command, args.runs, args.per_rule_lines, args.ruff)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 1 if any(r.problems for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
