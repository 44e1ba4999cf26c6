"""Every command-line case of "nothing lost, nothing surprising", run on a fresh clone.

    python benchmarks/cli_cases.py [--fla-mirror DIR] [--out benchmarks/CLI_CASES.md]

Clones this repository's HEAD into a temporary folder and runs its code from there
(`python -m ascend_lint` with the clone first on PYTHONPATH), each case in a folder of
its own. A case states the exit code Ruff would give and what must hold afterwards:
no traceback, no file lost or changed that should not be, and a message that says what
to do. Then the adoption case on a copy of FLA (`git archive HEAD` of the mirror):
`--add-noqa`, a lint that finds nothing (no ASC100 either), and one `noqa` removed
brings back exactly its finding. Run by hand, not in CI (it needs the mirror and takes
minutes); writes a Markdown table with command, version and date. Exits 1 if a case fails.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_lint import materialise  # noqa: E402

KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def k(x, BT: tl.constexpr):
    pass


def launch(x):
    k[(1,)](x, BT=64, num_warps=4)
"""
CLEAN = KERNEL.replace(", num_warps=4", "")
PYPROJECT = "[project]\nname = 'demo'\n"


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@dataclass
class Case:
    name: str
    command: str  # as shown in the table (the linter spelled `ascend-lint`)
    expected_exit: int
    check: Callable[[Path, Outcome], str | None]  # None: holds; else what went wrong
    setup: Callable[[Path], None] = lambda d: None
    stdin: str | None = None


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Content hash and mode of every file under `folder` (the cache folder left out)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        skip = ".ascend_lint_cache" in path.parts or ".git" in path.parts
        if skip or path.is_symlink() or not path.is_file():
            continue
        found[str(path.relative_to(folder))] = (
            hashlib.sha256(path.read_bytes()).hexdigest(),
            stat.S_IMODE(path.stat().st_mode),
        )
    return found


class Runner:
    def __init__(self, clone: Path):
        self.env = {**os.environ, "PYTHONPATH": str(clone), "NO_COLOR": "1"}
        self.env.pop("ASCEND_LINT_CACHE_DIR", None)

    def run(self, args: list[str], cwd: Path, stdin: str | None = None, timeout=600) -> Outcome:
        proc = subprocess.run(
            [sys.executable, "-m", "ascend_lint", *args],
            cwd=cwd,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Outcome(proc.returncode, proc.stdout, proc.stderr)


def args_of(command: str) -> list[str]:
    import shlex

    parts = shlex.split(command)
    assert parts[0] == "ascend-lint"
    return parts[1:]


# --- checks -----------------------------------------------------------------------------


def all_of(*checks):
    def check(d: Path, o: Outcome) -> str | None:
        for c in checks:
            problem = c(d, o)
            if problem:
                return problem
        return None

    return check


def says(*needles: str, stream: str = "err"):
    def check(_d, o: Outcome):
        text = o.err if stream == "err" else o.out
        missing = [n for n in needles if n not in text]
        return f"{stream} lacks {missing!r}" if missing else None

    return check


def never_says(*needles: str):
    def check(_d, o: Outcome):
        found = [n for n in needles if n in o.out or n in o.err]
        return f"output has {found!r}" if found else None

    return check


def file_is(name: str, text: str):
    def check(d: Path, _o):
        path = d / name
        if not path.is_file():
            return f"{name} is gone"
        return None if path.read_text() == text else f"{name} changed"

    return check


def exists(name: str):
    return lambda d, _o: None if (d / name).exists() else f"{name} missing"


def json_out(predicate, what: str):
    def check(_d, o: Outcome):
        try:
            data = json.loads(o.out)
        except ValueError:
            return "stdout is not JSON"
        return None if predicate(data) else what

    return check


def write(files: dict[str, str], modes: dict[str, int] | None = None):
    def setup(d: Path) -> None:
        for name, text in files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text)
        for name, mode in (modes or {}).items():
            os.chmod(d / name, mode)

    return setup


def git_tree(files: dict[str, str]):
    """Files in a git work tree: .gitignore files count inside one, as for Ruff."""

    def setup(d: Path) -> None:
        subprocess.run(["git", "init", "-q", str(d)], check=True)
        write(files)(d)

    return setup


VARLEN = """\
import triton
import triton.language as tl


@triton.jit
def k(g, cu_seqlens, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_bh // HV, i_bh % HV
    bos = tl.load(cu_seqlens + i_n).to(tl.int64)
    g += bos * HV + i_h
    p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    tl.store(p_g, tl.load(p_g, boundary_check=(0,)), boundary_check=(0,))


def launch(g, cu_seqlens, T, HV):
    k[(1, HV)](g.transpose(1, 2).contiguous(), cu_seqlens, T, HV=HV, BT=64)
"""


def cases(examples: Path) -> list[Case]:
    stale = (examples / "stale_pointer_math.py").read_text()
    base = {"pyproject.toml": PYPROJECT}
    return [
        Case(
            "clean refuses a folder without its marker",
            "ascend-lint clean --cache-dir .",
            2,
            all_of(says("refusing to remove", "nothing was deleted"), file_is("keep.txt", "mine")),
            write({**base, "keep.txt": "mine"}),
        ),
        Case(
            "clean with cache-dir = src deletes nothing",
            "ascend-lint clean",
            2,
            all_of(says("refusing to remove"), file_is("src/k.py", KERNEL)),
            write(
                {"pyproject.toml": '[tool.ascend-lint]\ncache-dir = "src"\n', "src/k.py": KERNEL}
            ),
        ),
        Case(
            "clean removes its own cache",
            "ascend-lint clean",
            0,
            lambda d, o: None if not (d / ".ascend_lint_cache").exists() else "cache still there",
            lambda d: (write({**base, "k.py": KERNEL})(d), Runner.current.run(["k.py"], d)),
        ),
        Case(
            "report into a missing folder",
            "ascend-lint k.py -o reports/x.sarif",
            1,
            all_of(exists("reports/x.sarif"), never_says("Traceback")),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "report onto a folder",
            "ascend-lint k.py -o /tmp",
            2,
            says("cannot write the report to /tmp", "is a directory"),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "a path that does not exist",
            "ascend-lint does/not/exist.py",
            2,
            all_of(says("No such file or directory"), never_says("All checks passed")),
            write(base),
        ),
        Case(
            "a path that does not exist, JSON",
            "ascend-lint does/not/exist.py --output-format json",
            2,
            all_of(says("No such file or directory"), never_says("All checks passed")),
            write(base),
        ),
        Case(
            "an explicit symlink loop",
            "ascend-lint loop.py",
            2,
            all_of(says("loop.py"), never_says("All checks passed")),
            lambda d: (write(base)(d), os.symlink("loop.py", d / "loop.py")),
        ),
        Case(
            "an explicit FIFO",
            "ascend-lint pipe.py",
            2,
            all_of(says("pipe.py"), never_says("All checks passed")),
            lambda d: (write(base)(d), os.mkfifo(d / "pipe.py")),
        ),
        Case("help is a command", "ascend-lint help", 0, says("Exit codes", stream="out")),
        Case("help check", "ascend-lint help check", 0, says("--select", stream="out")),
        Case("version is a command", "ascend-lint version", 0, says("ascend-lint ", stream="out")),
        Case(
            "--unsafe-fixes hides no fixes",
            "ascend-lint --unsafe-fixes stale.py",
            1,
            all_of(
                says("fixable with the `--fix` option", stream="out"), never_says("hidden fixes")
            ),
            write({**base, "stale.py": stale}),
        ),
        Case(
            "ASC002 fix does what rules/asc002/ASC002.md says",
            "ascend-lint --fix --unsafe-fixes --select ASC002 stale.py",
            1,
            # The stride is fixed; a batch offset (`bos = i_b * T`) is left for a human,
            # and its finding stays (the doc's "Fix safety").
            lambda d, o: (
                None
                if "(T,), (1,)" in (d / "stale.py").read_text()
                and "g += bos * HV + i_h" in (d / "stale.py").read_text()
                and "1 fixed, 1 remaining" in o.out
                else "not as documented"
            ),
            write({**base, "stale.py": stale}),
        ),
        Case(
            "ASC002 fix rewrites a varlen offset",
            "ascend-lint --fix --unsafe-fixes --select ASC002 varlen.py",
            0,
            lambda d, o: (
                None
                if "g += bos + i_h * T" in (d / "varlen.py").read_text()
                else "offset not rewritten"
            ),
            write({**base, "varlen.py": VARLEN}),
        ),
        Case(
            "--fix leaves a read-only file untouched",
            "ascend-lint --fix k.py",
            2,
            all_of(says("read-only", "left unchanged"), file_is("k.py", KERNEL)),
            write({**base, "k.py": KERNEL}, {"k.py": 0o444}),
        ),
        Case(
            "--fix keeps the file's mode",
            "ascend-lint --fix k.py",
            0,
            lambda d, o: (
                None if stat.S_IMODE((d / "k.py").stat().st_mode) == 0o754 else "mode changed"
            ),
            write({**base, "k.py": KERNEL}, {"k.py": 0o754}),
        ),
        Case(
            "--show-files",
            "ascend-lint --show-files .",
            0,
            all_of(says("k.py", stream="out"), never_says("ignored.py")),
            git_tree({**base, "k.py": KERNEL, "ignored.py": KERNEL, ".gitignore": "ignored.py\n"}),
        ),
        Case(
            "--no-respect-gitignore",
            "ascend-lint --show-files --no-respect-gitignore .",
            0,
            says("ignored.py", stream="out"),
            git_tree({**base, "k.py": KERNEL, "ignored.py": KERNEL, ".gitignore": "ignored.py\n"}),
        ),
        Case(
            "--show-settings",
            "ascend-lint --show-settings --select ASC004 k.py",
            0,
            # ASC000 (a file no rule could read) is reported whatever is selected.
            json_out(lambda s: s["enabled-codes"] == ["ASC000", "ASC004"], "not ASC000, ASC004"),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "--add-noqa",
            "ascend-lint --add-noqa k.py",
            0,
            all_of(
                says("Added 1 noqa directive.", stream="out"),
                lambda d, o: None if "# noqa: ASC004" in (d / "k.py").read_text() else "no noqa",
            ),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "unused noqa is ASC100 with a fix",
            "ascend-lint k.py",
            1,
            says("ASC100 [*]", stream="out"),
            write({**base, "k.py": CLEAN.replace("BT=64)", "BT=64)  # noqa: ASC004")}),
        ),
        Case(
            "--ignore-noqa",
            "ascend-lint --ignore-noqa k.py",
            1,
            says("ASC004", stream="out"),
            write({**base, "k.py": KERNEL.replace("num_warps=4)", "num_warps=4)  # noqa: ASC004")}),
        ),
        Case(
            "--exclude on the command line",
            "ascend-lint --extend-exclude legacy .",
            0,
            says("All checks passed!", stream="out"),
            write({**base, "k.py": CLEAN, "legacy/old.py": KERNEL}),
        ),
        Case(
            "--per-file-ignores on the command line",
            "ascend-lint --per-file-ignores 'legacy/*:ASC004' .",
            0,
            says("All checks passed!", stream="out"),
            write({**base, "k.py": CLEAN, "legacy/old.py": KERNEL}),
        ),
        Case(
            "--unfixable offers no fix",
            "ascend-lint --unfixable ASC004 k.py",
            1,
            all_of(says("ASC004", stream="out"), never_says("[*]")),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "--config KEY=VALUE",
            "ascend-lint --config 'ignore = [\"ASC004\"]' k.py",
            0,
            says("All checks passed!", stream="out"),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "--config with an unknown key",
            "ascend-lint --config 'ignroe = [\"ASC004\"]' k.py",
            2,
            says("ignroe"),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "--isolated ignores the configuration",
            "ascend-lint --isolated k.py",
            1,
            says("ASC004", stream="out"),
            write({"pyproject.toml": '[tool.ascend-lint]\nignore = ["ASC004"]\n', "k.py": KERNEL}),
        ),
        Case(
            "-e exits 0",
            "ascend-lint -e k.py",
            0,
            says("ASC004", stream="out"),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "-n writes no cache",
            "ascend-lint -n k.py",
            1,
            lambda d, o: "cache written" if (d / ".ascend_lint_cache").exists() else None,
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "-s prints nothing",
            "ascend-lint -s k.py",
            1,
            lambda d, o: None if not (o.out or o.err) else "printed something",
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "-v says what it read",
            "ascend-lint -v k.py",
            1,
            says("files found"),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "repeated --select combines",
            "ascend-lint --select ASC004 --select ASC007 --output-format json k.py",
            1,
            json_out(lambda d: {x["code"] for x in d} == {"ASC004"}, "not ASC004 alone"),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "--fix-only",
            "ascend-lint --fix-only k.py",
            0,
            all_of(says("Fixed 1 error.", stream="out"), file_is("k.py", CLEAN)),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "rule by kebab name",
            "ascend-lint rule launch-num-warps-stages",
            0,
            says("ASC004", stream="out"),
        ),
        Case("unknown rule", "ascend-lint rule ASC04", 2, says("did you mean")),
        *[
            Case(
                f"--output-format {fmt}",
                f"ascend-lint --output-format {fmt} k.py",
                1,
                says("ASC004", stream="out"),
                write({**base, "k.py": KERNEL}),
            )
            for fmt in (
                "gitlab",
                "pylint",
                "grouped",
                "azure",
                "sarif",
                "rdjson",
                "junit",
                "github",
            )
        ],
        Case(
            "standard input",
            "ascend-lint --stdin-filename k.py -",
            1,
            says("ASC004", stream="out"),
            write(base),
            stdin=KERNEL,
        ),
        Case(
            "a syntax error",
            "ascend-lint broken.py",
            1,
            all_of(says("ASC000", stream="out"), file_is("broken.py", "import triton\ndef f(:\n")),
            write({**base, "broken.py": "import triton\ndef f(:\n"}),
        ),
        Case(
            "--fix on a syntax error changes nothing",
            "ascend-lint --fix broken.py",
            1,
            file_is("broken.py", "import triton\ndef f(:\n"),
            write({**base, "broken.py": "import triton\ndef f(:\n"}),
        ),
        Case(
            "a bad pyproject",
            "ascend-lint k.py",
            2,
            all_of(says("pyproject.toml"), file_is("k.py", KERNEL)),
            write({"pyproject.toml": "[tool.ascend-lint\n", "k.py": KERNEL}),
        ),
        Case(
            "an unknown option",
            "ascend-lint --selcet ASC004 k.py",
            2,
            says("unrecognized arguments"),
            write({**base, "k.py": KERNEL}),
        ),
        Case(
            "--watch refuses standard input",
            "ascend-lint --watch -",
            2,
            says("--watch"),
            write(base),
        ),
    ]


def run_case(runner: Runner, case: Case, folder: Path) -> tuple[Outcome, list[str]]:
    case.setup(folder)
    before = snapshot(folder)
    outcome = runner.run(args_of(case.command), folder, case.stdin)
    problems = []
    if outcome.code != case.expected_exit:
        problems.append(f"exit {outcome.code}, expected {case.expected_exit}")
    if "Traceback" in outcome.out + outcome.err:
        problems.append("traceback")
    problem = case.check(folder, outcome)
    if problem:
        problems.append(problem)
    # Nothing but the files a fix or --add-noqa may write changes; nothing disappears.
    may_change = "--fix" in case.command or "--add-noqa" in case.command
    before.pop(".git", None)
    after = snapshot(folder)
    lost = sorted(set(before) - set(after))
    if lost and "clean" not in case.command:
        problems.append(f"lost {lost}")
    changed = sorted(k for k in before if k in after and before[k] != after[k])
    if changed and not may_change:
        problems.append(f"changed {changed}")
    if outcome.code == 2 and not outcome.err.strip() and "-s" not in case.command.split():
        problems.append("exit 2 without a message")
    return outcome, problems


def watch_case(runner: Runner, folder: Path) -> tuple[str, int, list[str]]:
    """`--watch`: a run, an edit, a second run that sees it, Ctrl-C exits 0."""
    write({"pyproject.toml": PYPROJECT, "k.py": CLEAN})(folder)
    env = {**runner.env, "WATCHFILES_FORCE_POLLING": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ascend_lint", "--no-cache", "--watch", "."],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # even under nohup
    )
    problems = []
    try:
        time.sleep(4)
        (folder / "k.py").write_text(KERNEL)
        time.sleep(6)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out = proc.communicate(timeout=30)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            out = proc.communicate()[0]
            problems.append("did not stop on Ctrl-C")
    if out.count("Watching for file changes.") < 2 or "ASC004" not in out:
        problems.append("the edit was not linted")
    if "Traceback" in out:
        problems.append("traceback")
    if proc.returncode != 0:
        problems.append(f"exit {proc.returncode}, expected 0")
    return "ascend-lint --watch . (edit k.py, then Ctrl-C)", proc.returncode, problems


def adoption_case(
    runner: Runner, mirror: Path, folder: Path
) -> list[tuple[str, int, int, list[str]]]:
    """--add-noqa on FLA, then 0 findings; one noqa removed brings back its finding."""
    tree = materialise(mirror, folder / "fla")
    rows = []
    before = runner.run(["--no-cache", "--statistics", "."], tree)
    n_before = sum(int(line.split()[0]) for line in before.out.splitlines() if line.strip())
    added = runner.run(["--no-cache", "--add-noqa", "."], tree)
    problems = [] if added.code == 0 else [f"exit {added.code}: {added.err[-300:]}"]
    m = re.search(r"Added (\d+) noqa", added.out)
    rows.append(("ascend-lint --add-noqa .", 0, added.code, problems + ([] if m else ["no count"])))
    after = runner.run(["--no-cache", "--output-format", "json", "."], tree)
    findings = json.loads(after.out or "[]")
    problems = (
        [f"{len(findings)} findings remain: {sorted({f['code'] for f in findings})}"]
        if findings
        else []
    )
    rows.append(("ascend-lint . (after --add-noqa; ASC100 included)", 0, after.code, problems))
    # Remove one noqa: exactly that finding comes back.
    grep = subprocess.run(
        ["grep", "-rn", "--include=*.py", "# noqa: ASC", "."],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    first = grep.stdout.splitlines()[0]
    path, row, _ = first.split(":", 2)
    lines = (tree / path).read_text().splitlines(keepends=True)
    codes = (
        re.search(r"# noqa: ([A-Z0-9, ]+)", lines[int(row) - 1])
        .group(1)
        .replace(" ", "")
        .split(",")
    )
    lines[int(row) - 1] = re.sub(r"\s*# noqa: [A-Z0-9, ]+", "", lines[int(row) - 1], count=1)
    (tree / path).write_text("".join(lines))
    back = runner.run(["--no-cache", "--output-format", "json", "."], tree)
    got = sorted(
        (f["filename"].removeprefix(str(tree) + "/"), f["location"]["row"], f["code"])
        for f in json.loads(back.out or "[]")
    )
    want_rows = {(path.removeprefix("./"), int(row))}
    problems = []
    if (
        not got
        or {(p, r) for p, r, _ in got} != want_rows
        or sorted({c for *_, c in got}) != sorted(set(codes))
    ):
        problems.append(f"got {got}, expected {codes} at {path}:{row}")
    rows.append(
        (
            f"remove the noqa at {path.removeprefix('./')}:{row}, then ascend-lint .",
            1,
            back.code,
            problems,
        )
    )
    return rows, n_before, int(m.group(1)) if m else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fla-mirror", type=Path, default=Path("/work/.mirror/fla-org+flash-linear-attention/repo")
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "CLI_CASES.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ascend-lint-cli-cases-") as tmp:
        work = Path(tmp)
        clone = work / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        head = subprocess.run(
            ["git", "-C", str(clone), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        runner = Runner(clone)
        Runner.current = runner
        version = runner.run(["--version"], work).out.strip()
        rows = []
        for i, case in enumerate(cases(clone / "examples" / "gpu_habits")):
            folder = work / f"case{i:02d}"
            folder.mkdir()
            outcome, problems = run_case(runner, case, folder)
            message = (outcome.err.strip() or outcome.out.strip()).splitlines()
            shown = message[0] if outcome.code == 2 and message else ""
            rows.append(
                (case.name, case.command, case.expected_exit, outcome.code, problems, shown)
            )
            if problems:
                print(
                    f"FAIL {case.name}: {problems}\n{outcome.out[-600:]}\n{outcome.err[-600:]}",
                    file=sys.stderr,
                )
        folder = work / "watch"
        folder.mkdir()
        command, code, problems = watch_case(runner, folder)
        rows.append(("--watch", command, 0, code, problems, ""))
        adoption = []
        if args.fla_mirror.is_dir():
            fla_head = subprocess.run(
                ["git", "-C", str(args.fla_mirror), "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            adoption, n_before, n_added = adoption_case(runner, args.fla_mirror, work)
    failed = [r for r in rows if r[4]] + [r for r in adoption if r[3]]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "# Command-line cases",
        "",
        "* command: `python benchmarks/cli_cases.py` (run by hand; not part of CI)",
        f"* date: {now}; {version} from a fresh clone of `{head}`; Python {platform.python_version()}, {platform.system()}",
        "* each case runs in a folder of its own; a case passes when the exit code is Ruff's for it, nothing "
        "prints a traceback, no file is lost, no file changes unless the command fixes or adds noqa comments, "
        "an exit 2 comes with a message, and the case's own check holds",
        f"* {len(rows) + len(adoption) - len(failed)} of {len(rows) + len(adoption)} cases pass",
        "",
        "| case | command | expected exit | exit | result | first line of the error (exit 2) |",
        "| --- | --- | ---: | ---: | --- | --- |",
    ]
    for name, command, expected, code, problems, shown in rows:
        result = "pass" if not problems else "FAIL: " + "; ".join(problems)
        shown = shown.replace("|", "\\|")
        out.append(f"| {name} | `{command}` | {expected} | {code} | {result} | {shown} |")
    if adoption:
        out += [
            "",
            f"## Adopting the tool on FLA (`git archive` of `fla-org/flash-linear-attention` at `{fla_head[:12]}`)",
            "",
            f"{n_before} findings before; `--add-noqa` added {n_added} directives.",
            "",
            "| step | expected exit | exit | result |",
            "| --- | ---: | ---: | --- |",
        ]
        for command, expected, code, problems in adoption:
            result = "pass" if not problems else "FAIL: " + "; ".join(problems)
            out.append(f"| `{command}` | {expected} | {code} | {result} |")
    args.out.write_text("\n".join(out) + "\n", encoding="utf-8")
    print("\n".join(out))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
