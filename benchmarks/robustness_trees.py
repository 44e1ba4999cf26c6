"""Robustness on whole real trees: lint every Python file of large code bases with the
real command line and check that the answer is a clean one, then write a Markdown table.

    python benchmarks/robustness_trees.py [--out benchmarks/ROBUSTNESS.md]

Trees:

* flash-linear-attention and vllm-ascend, materialised from bare git snapshots with
  `git -C <mirror> archive HEAD | tar -x -C <dir>` (`--fla-mirror`, `--vllm-mirror`);
* the running interpreter's standard library (`sysconfig.get_paths()['stdlib']`): a
  large, varied corpus with deliberately broken and oddly encoded test files. Only
  files that mention triton (or `num_warps`/`num_stages`) are parsed, so few are.

Each tree is linted in a child process (`--no-cache --select ALL --output-format json`,
default process pool), then once more with `--diff` to run every fix without writing
anything. A tree passes when every run exits 0 or 1 and its stderr has no "Traceback"
and no "internal error".

The prefilter keeps most files away from the parser, so every file of each tree is also
forced through the engine (`lint_source` on its bytes plus a trailing `# triton` line):
no exception, no internal error, an ASC000 exactly where CPython's own parser (the file
decoded as `python file.py` would, then `ast.parse`) rejects the file, and every reported
position inside the file. The script exits 1 if any tree fails, so it can gate CI on a
machine that has the snapshots.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import io
import json
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
import time
import tokenize
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_lint import __version__  # noqa: E402
from ascend_lint.discovery import discover  # noqa: E402
from ascend_lint.engine import lint_source  # noqa: E402
from ascend_lint.results import may_contain_kernels  # noqa: E402
from ascend_lint.settings import ALL_CODES, load_settings  # noqa: E402
from ascend_lint.source import SourceDecodeError, SourceFile  # noqa: E402

MIRRORS = Path("/work/.mirror")
DEFAULT_FLA = MIRRORS / "fla-org+flash-linear-attention" / "repo"
DEFAULT_VLLM = MIRRORS / "vllm-project+vllm-ascend" / "repo"
LINT = ["--no-cache", "--select", "ALL", "--output-format", "json"]


@dataclass
class TreeReport:
    name: str
    source: str
    files: int = 0
    python_bytes: int = 0
    triton_files: int = 0  # bytes contain b"triton"
    prefilter_files: int = 0  # what the engine parses (triton, num_warps or num_stages)
    findings: Counter = field(default_factory=Counter)
    exit_code: int | None = None
    tracebacks: int = 0
    internal_errors: int = 0
    warnings: int = 0
    seconds: float = 0.0
    diff_exit_code: int | None = None
    diff_would_fix: int = 0
    diff_tracebacks: int = 0
    diff_internal_errors: int = 0
    diff_seconds: float = 0.0
    forced_files: int = 0
    forced_asc000: int = 0
    cpython_rejects: int = 0
    forced_disagreements: int = 0
    forced_internal_errors: int = 0
    forced_exceptions: int = 0
    forced_bad_positions: int = 0
    forced_seconds: float = 0.0
    paths: list[str] = field(default_factory=list, repr=False)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def materialise(mirror: Path, dest: Path) -> Path:
    """`git -C <mirror> archive HEAD | tar -x -C <dest>`."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(
        ["git", "-C", str(mirror), "archive", "HEAD"], stdout=subprocess.PIPE
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        raise SystemExit(f"git archive failed for {mirror}")
    return dest


def head_commit(mirror: Path) -> str:
    proc = subprocess.run(
        ["git", "-C", str(mirror), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip() or "?"


def count_files(tree: Path, report: TreeReport) -> None:
    """The files the command line lints (same discovery and excludes), and their bytes."""
    settings = load_settings(None, tree)
    found = discover([str(tree)], settings)
    report.files = len(found.files)
    report.paths = list(found.files)
    for path in found.files:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        report.python_bytes += len(data)
        report.triton_files += b"triton" in data
        report.prefilter_files += may_contain_kernels(data)


def run_cli(args: list[str], cwd: Path) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ascend_lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="replace",
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start


def check_tree(report: TreeReport, tree: Path) -> None:
    count_files(tree, report)

    code, out, err, seconds = run_cli([*LINT, "."], tree)
    report.exit_code, report.seconds = code, seconds
    report.tracebacks = err.count("Traceback")
    report.internal_errors = err.count("internal error")
    report.warnings = sum(line.startswith("warning:") for line in err.splitlines())
    try:
        report.findings = Counter(item["code"] for item in json.loads(out or "[]"))
    except json.JSONDecodeError as exc:
        report.problems.append(f"lint: stdout is not JSON ({exc})")
    if code not in (0, 1):
        report.problems.append(f"lint: exit code {code}")
    if report.tracebacks or report.internal_errors:
        report.problems.append("lint: " + _first_error(err))

    code, _, err, seconds = run_cli(["--no-cache", "--select", "ALL", "--diff", "."], tree)
    report.diff_exit_code, report.diff_seconds = code, seconds
    report.diff_tracebacks = err.count("Traceback")
    report.diff_internal_errors = err.count("internal error")
    for line in err.splitlines():
        if line.startswith("Would fix "):
            report.diff_would_fix = int(line.split()[2])
    if code not in (0, 1):
        report.problems.append(f"--diff: exit code {code}")
    if report.diff_tracebacks or report.diff_internal_errors:
        report.problems.append("--diff: " + _first_error(err))

    force_parse(report)


FORCE_SUFFIX = b"\n# triton\n"  # past the prefilter, without moving any position


def cpython_parses(raw: bytes) -> bool:
    """Would `python file.py` parse it? The whole file decoded first (strictly, in the
    encoding it declares, line breaks made LF), then `ast.parse`. Not
    `importlib.util.decode_source`, which drops a final lone CR that Python reads as a
    line break."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        text = io.IncrementalNewlineDecoder(None, translate=True).decode(
            raw.decode(encoding), final=True
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, LookupError):
        return False
    return True


def force_one(path: str) -> tuple[str, str | None, bool, bool]:
    """(kind, detail, engine gave ASC000, CPython rejects) for one file forced through
    the engine; kind is "ok", or the problem: exception, internal, position, disagree."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read() + FORCE_SUFFIX
    except OSError:
        return "unreadable", None, False, False
    rejected = not cpython_parses(raw)
    try:
        result = lint_source(path, raw, ALL_CODES)
    except Exception as exc:  # the engine must never raise
        return "exception", f"{path}: {type(exc).__name__}: {exc}", False, rejected
    asc000 = [d for d in result.diagnostics if d.code == "ASC000"]
    if result.error:
        return "internal", f"{path}: {result.error}", bool(asc000), rejected
    try:
        lines = SourceFile.from_bytes(path, raw).lines
    except SourceDecodeError:
        lines = [""]
    for d in result.diagnostics:
        for pos in (d.start, d.end):
            if not (1 <= pos.row <= len(lines) and 0 <= pos.column <= len(lines[pos.row - 1])):
                detail = f"{path}: {d.code} at {pos.row}:{pos.column}"
                return "position", detail, bool(asc000), rejected
    if asc000 and len(result.diagnostics) != 1:
        detail = f"{path}: ASC000 among {len(result.diagnostics)} findings"
        return "position", detail, True, rejected
    if bool(asc000) != rejected:
        verdict = asc000[0].message if asc000 else "no ASC000"
        detail = f"{path}: CPython {'rejects' if rejected else 'accepts'}; engine: {verdict}"
        return "disagree", detail, bool(asc000), rejected
    return "ok", None, bool(asc000), rejected


def force_parse(report: TreeReport) -> None:
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        outcomes = list(pool.map(force_one, report.paths, chunksize=16))
    report.forced_seconds = time.perf_counter() - start
    kinds = Counter(kind for kind, *_ in outcomes)
    report.forced_files = len(outcomes) - kinds["unreadable"]
    report.forced_asc000 = sum(asc000 for _, _, asc000, _ in outcomes)
    report.cpython_rejects = sum(rejected for *_, rejected in outcomes)
    report.forced_disagreements = kinds["disagree"]
    report.forced_internal_errors = kinds["internal"]
    report.forced_exceptions = kinds["exception"]
    report.forced_bad_positions = kinds["position"]
    report.problems += [f"forced parse: {detail}" for _, detail, *_ in outcomes if detail]


def _first_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if "internal error" in ln or "Error" in ln]
    return (lines[-1] if lines else err.strip().splitlines()[-1])[:300]


def render(reports: list[TreeReport], command: str) -> str:
    codes = sorted({c for r in reports for c in r.findings})
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Robustness on real trees",
        "",
        "Every Python file of each tree linted by the real command line in a child process;",
        "a tree passes when each run exits 0 or 1 with no traceback and no internal error",
        "on stderr. Generated by `benchmarks/robustness_trees.py`; do not edit by hand.",
        "",
        f"* command: `{command}`",
        f"* lint run: `ascend-lint {' '.join(LINT)} .` (cwd: the tree); fix run: the same "
        "with `--diff` (every fix computed, nothing written)",
        f"* ascend-lint {__version__}, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs",
        f"* date: {now}",
        "",
        "| tree | files | Python bytes | candidate files (`triton` in bytes) "
        "| parsed (prefilter) | findings | exit | tracebacks | internal errors "
        "| stderr warnings | wall s |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in reports:
        per_code = ", ".join(f"{c} {r.findings[c]}" for c in codes if r.findings[c]) or "none"
        lines.append(
            f"| {r.name} | {r.files:,} | {r.python_bytes:,} | {r.triton_files:,} "
            f"| {r.prefilter_files:,} | {sum(r.findings.values()):,} ({per_code}) "
            f"| {r.exit_code} | {r.tracebacks} | {r.internal_errors} | {r.warnings} "
            f"| {r.seconds:.1f} |"
        )
    lines += [
        "",
        "Fix path (`--diff`):",
        "",
        "| tree | exit | would fix | tracebacks | internal errors | wall s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in reports:
        lines.append(
            f"| {r.name} | {r.diff_exit_code} | {r.diff_would_fix:,} | {r.diff_tracebacks} "
            f"| {r.diff_internal_errors} | {r.diff_seconds:.1f} |"
        )
    lines += [
        "",
        "Every file forced through the engine (its bytes plus a trailing `# triton` line, so "
        "the prefilter lets it in), compared with CPython's own parser:",
        "",
        "| tree | files | ASC000 | CPython rejects | disagreements | internal errors "
        "| exceptions | positions outside the file | wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in reports:
        lines.append(
            f"| {r.name} | {r.forced_files:,} | {r.forced_asc000} | {r.cpython_rejects} "
            f"| {r.forced_disagreements} | {r.forced_internal_errors} | {r.forced_exceptions} "
            f"| {r.forced_bad_positions} | {r.forced_seconds:.1f} |"
        )
    lines += ["", "Sources:", ""]
    lines += [f"* {r.name}: {r.source}" for r in reports]
    failed = [r for r in reports if not r.ok]
    lines += ["", "Result: " + ("all trees pass." if not failed else "FAILED")]
    for r in failed:
        lines += [f"* {r.name}: {problem}" for problem in r.problems]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fla-mirror", type=Path, default=DEFAULT_FLA)
    parser.add_argument("--vllm-mirror", type=Path, default=DEFAULT_VLLM)
    parser.add_argument("--no-stdlib", action="store_true", help="skip the standard library")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "ROBUSTNESS.md")
    args = parser.parse_args(argv)
    command = "python benchmarks/robustness_trees.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:])
    )

    reports: list[TreeReport] = []
    with tempfile.TemporaryDirectory(prefix="ascend-lint-robustness-") as work:
        for name, mirror in (
            ("flash-linear-attention", args.fla_mirror),
            ("vllm-ascend", args.vllm_mirror),
        ):
            if not mirror.exists():
                print(f"skipping {name}: no snapshot at {mirror}", file=sys.stderr)
                continue
            tree = materialise(mirror, Path(work) / name)
            report = TreeReport(name, f"`{mirror}` at {head_commit(mirror)} (git archive HEAD)")
            check_tree(report, tree)
            reports.append(report)
            print(f"{name}: {'ok' if report.ok else report.problems}", file=sys.stderr)
        if not args.no_stdlib:
            stdlib = Path(sysconfig.get_paths()["stdlib"])
            report = TreeReport(
                f"Python {platform.python_version()} stdlib", f"`{stdlib}` (linted in place)"
            )
            check_tree(report, stdlib)
            reports.append(report)
            print(f"stdlib: {'ok' if report.ok else report.problems}", file=sys.stderr)

    text = render(reports, command)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0 if reports and all(r.ok for r in reports) else 1


if __name__ == "__main__":
    raise SystemExit(main())
