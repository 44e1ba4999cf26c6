"""Regenerate docs/EVAL.md: the rules on the labelled corpora, and whole repositories.

    MIRROR_ROOT=<root of the bare clones> python benchmarks/eval_corpus.py

The corpus folder (`--eval-dir`, default `benchmarks/corpus/` of this repository) holds
the labels (`*_cases.json`), `materialize.sh` and `score.py`. MIRROR_ROOT (or `--mirror-root`) is a folder holding
one bare clone per public repository, laid out `<owner>+<name>/repo`.

For each manifest (`--manifest`, repeatable; default `fla_public_cases.json` and
`wide_public_cases.json`) the script materialises the labelled files with
`materialize.sh`, lints them with `ascend-lint check --no-cache --output-format json`,
and scores them with `score.py FINDINGS MANIFEST -v` and the gate thresholds
`--min-recall 0.9 --min-precision 0.9 --min-pos 5 --max-fp-small 0`. Each manifest gets
its own section: the repositories and commits it pins, the number of findings, the
per-rule table with every miss and false positive, and score.py's `summary:` line,
and a small table of ASC001's unsafe gate fix: offered or not for each finding, and each
offered fix applied and checked (parses, converges, leaves no fixed finding or ASC002).

Then, unless `--skip-trees`, it measures whole repositories with
`benchmarks/whole_trees.py` (default: flash-linear-attention, vllm-ascend,
sgl-kernel-npu, triton-ascend at the HEAD of each bare clone; best of `--runs`),
findings per rule and seconds, with `ruff check --select ALL` timed on the same tree as
a peer. With `--skip-trees` the whole-tree section of the existing output is kept as it
is (it carries its own command line and date).

A gate that falls short is reported, not an error. The script exits 1 when a corpus
could not be materialised, linted (exit code 2, traceback, unreadable JSON) or scored,
or when a whole tree had such a problem; the document is written either way.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # whole_trees, bench_lint

import whole_trees  # noqa: E402

DEFAULT_EVAL_DIR = ROOT / "benchmarks" / "corpus"
DEFAULT_MANIFESTS = ["fla_public_cases.json", "wide_public_cases.json"]
GATE_ARGS = ["--min-recall", "0.9", "--min-precision", "0.9", "--min-pos", "5"]
GATE_ARGS += ["--max-fp-small", "0"]
CORPUS_LINT_ARGS = ["check", "--no-cache", "--output-format", "json"]
TREES_START = "<!-- whole-trees:start -->"
TREES_END = "<!-- whole-trees:end -->"
GITHUB = "https://github.com"


@dataclass
class CorpusResult:
    manifest: Path
    samples: list[dict]
    findings: int | None = None
    table: str = ""
    summary: str = ""
    gate_met: bool | None = None
    problems: list[str] = field(default_factory=list)
    gate_fix: dict[str, int] | None = None  # ASC001's stride-1 gate fix, see gate_fix_counts

    @property
    def repos(self) -> list[str]:
        return list(dict.fromkeys(s["repo"] for s in self.samples))

    def pins(self) -> list[tuple[str, str, int]]:
        """Unique (repo, commit) pairs in manifest order, with the number of files."""
        counts: dict[tuple[str, str], int] = {}
        for s in self.samples:
            key = (s["repo"], s["commit"])
            counts[key] = counts.get(key, 0) + 1
        return [(repo, commit, n) for (repo, commit), n in counts.items()]

    def labelled_codes(self) -> set[str]:
        codes = {code for s in self.samples for code in s.get("scope", [])}
        return codes | {e["rule"] for s in self.samples for e in s.get("expect", [])}


def resolve_manifest(name: str, eval_dir: Path) -> Path:
    for candidate in (Path(name), eval_dir / name):
        if candidate.is_file():
            return candidate.resolve()
    sys.exit(f"manifest not found: {name} (nor in {eval_dir})")


def score_corpus(
    manifest: Path, eval_dir: Path, mirror_root: Path, rules: str, work: Path
) -> CorpusResult:
    result = CorpusResult(manifest, json.loads(manifest.read_text(encoding="utf-8")))
    corpus = work / manifest.stem
    made = subprocess.run(
        ["bash", str(eval_dir / "materialize.sh"), str(corpus), str(manifest)],
        capture_output=True,
        text=True,
        env={**os.environ, "MIRROR_ROOT": str(mirror_root)},
    )
    if made.returncode != 0:
        result.problems.append(f"materialize.sh exit code {made.returncode}: {made.stderr.strip()}")
        return result
    findings = work / f"{manifest.stem}.findings.json"
    with open(findings, "w", encoding="utf-8") as fh:
        lint = subprocess.run(
            [sys.executable, "-m", "ascend_lint", *CORPUS_LINT_ARGS, str(corpus)],
            stdout=fh,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            cwd=ROOT,
            env=whole_trees.lint_env(),
        )
    if lint.returncode not in (0, 1):
        result.problems.append(f"ascend-lint exit code {lint.returncode}: {lint.stderr[-300:]}")
    if "Traceback" in lint.stderr:
        result.problems.append(f"traceback on ascend-lint's stderr: {lint.stderr[-300:]}")
    try:
        result.findings = len(json.loads(findings.read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        result.problems.append(f"ascend-lint output is not JSON ({exc})")
        return result
    result.gate_fix = gate_fix_counts(corpus)
    score_cmd = [sys.executable, str(eval_dir / "score.py"), str(findings), str(manifest), "-v"]
    score_cmd += GATE_ARGS
    if rules:
        score_cmd += ["--rules", rules]
    score = subprocess.run(score_cmd, capture_output=True, text=True)
    lines = score.stdout.rstrip().splitlines()
    if score.returncode not in (0, 1) or not lines or not lines[-1].startswith("summary:"):
        result.problems.append(f"score.py exit code {score.returncode}: {score.stderr[-300:]}")
        result.table = score.stdout.rstrip()
        return result
    result.table = "\n".join(lines[:-1])
    result.summary = lines[-1]
    result.gate_met = score.returncode == 0
    return result


def gate_fix_counts(corpus: Path) -> dict[str, int]:
    """ASC001's unsafe gate fix on every file of a corpus: findings with and without a
    fix, then each file with one fixed (`--fix --unsafe-fixes`, ASC001 only) and checked:
    it parses, the fixed findings are gone, no ASC002 appears, a second fix changes
    nothing. In-process, with the same engine the CLI uses."""
    from ascend_lint.diagnostics import Applicability
    from ascend_lint.engine import lint_source
    from ascend_lint.fixes import fix_source, parsed

    asc001, layout = frozenset({"ASC001"}), frozenset({"ASC001", "ASC002"})
    unsafe = frozenset({Applicability.SAFE, Applicability.UNSAFE})
    counts = dict.fromkeys(
        ("findings", "offered", "files", "parse", "gone", "asc002", "converged", "clean"), 0
    )
    for path in sorted(corpus.glob("*.py")):
        raw = path.read_bytes()
        found = lint_source(str(path), raw, asc001).diagnostics
        offered = [d for d in found if d.fix and d.fix.applicability is Applicability.UNSAFE]
        counts["findings"] += len(found)
        counts["offered"] += len(offered)
        if not offered:
            continue
        counts["files"] += 1
        outcome = fix_source(str(path), raw, asc001, unsafe)
        if outcome.error is not None or isinstance(
            parsed(outcome.fixed.decode("utf-8", "replace")), str
        ):
            continue
        counts["parse"] += 1
        left = lint_source(str(path), outcome.fixed, layout).diagnostics
        left_asc001 = sum(d.code == "ASC001" for d in left)
        counts["gone"] += left_asc001 == len(found) - len(offered)
        counts["asc002"] += any(d.code == "ASC002" for d in left)
        counts["clean"] += not left
        again = fix_source(str(path), outcome.fixed, asc001, unsafe)
        counts["converged"] += again.fixed == outcome.fixed
    return counts


def gate_fix_lines(counts: dict[str, int]) -> list[str]:
    c = counts
    if not c["findings"]:
        return ["ASC001's stride-1 gate fix: no ASC001 finding on these files."]
    return [
        "ASC001's unsafe stride-1 gate fix (`G_T_CONTIG`, kernel and launcher): every "
        "ASC001 finding on these files, with the fix offered or not; then each file with an "
        "offered fix is fixed with `--fix --unsafe-fixes` (ASC001 only) and checked. The "
        "columns after `not offered` count files: parsed after the fix, every fixed finding "
        "gone (the ASC001 left are exactly those without a fix), new ASC002, a second fix "
        "changing nothing, and no ASC001/ASC002 left at all.",
        "",
        "| ASC001 findings | fix offered | not offered | files fixed | parse | fixed findings "
        "gone | with ASC002 after | converged | no ASC001/ASC002 left |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {c['findings']} | {c['offered']} | {c['findings'] - c['offered']} | {c['files']} "
        f"| {c['parse']} | {c['gone']} | {c['asc002']} | {c['converged']} | {c['clean']} |",
    ]


def codes_list(codes: list[str]) -> str:
    return ", ".join(codes) if codes else "none"


def corpus_section(result: CorpusResult) -> list[str]:
    from ascend_lint.rules import RULES_BY_CODE

    implemented = set(RULES_BY_CODE) - {"ASC000"}
    labelled = result.labelled_codes()
    not_implemented = sorted(labelled - set(RULES_BY_CODE))
    rows = {line.split()[0] for line in result.table.splitlines() if line.startswith("ASC")}
    no_row = sorted((labelled & implemented) - rows)
    repos = " and ".join(result.repos)
    lines = [
        f"### `{result.manifest.name}`: {len(result.samples)} files of {repos}",
        "",
        "| repository | commit | files |",
        "| --- | --- | ---: |",
        *(f"| {repo} | `{commit}` | {n} |" for repo, commit, n in result.pins()),
        "",
    ]
    if result.findings is not None:
        lines.append(
            f"ascend-lint reported {result.findings:,} findings on these "
            f"{len(result.samples)} files (every code, in scope or not)."
        )
    if not_implemented:
        pos = tp = fp = 0
        for line in result.table.splitlines():
            cells = line.split()
            if line.startswith("ASC") and cells[0] in implemented:
                pos, tp, fp = pos + int(cells[1]), tp + int(cells[2]), fp + int(cells[4])
        lines.append(
            f"Not implemented in this version of ascend-lint: {codes_list(not_implemented)}. "
            "They are labelled in this manifest for a later rule catalogue, so their expected "
            f"findings all show as misses; on the implemented rules alone, {tp} of {pos} "
            f"expected findings are reported, with {fp} false positives."
        )
    if no_row and result.table:
        lines.append(
            f"Implemented rules without a row ({codes_list(no_row)}) have no labelled "
            "positive here and made no in-scope report: their clean controls stayed clean."
        )
    lines += ["", "```", result.table or "(no score)", "```", ""]
    if result.summary:
        verdict = "met" if result.gate_met else "short"
        lines.append(f"Gate `{' '.join(GATE_ARGS)}`: **{verdict}**.")
        lines += ["", "```", result.summary, "```"]
    if result.gate_fix is not None:
        lines += ["", *gate_fix_lines(result.gate_fix)]
    lines += [f"* **problem: {p}**" for p in result.problems]
    return lines


def reproduce_section(corpus_repos: list[str], tree_repos: list[str], eval_dir: Path) -> list[str]:
    everything = list(dict.fromkeys(corpus_repos + tree_repos))
    shown_eval = (
        "benchmarks/corpus" if eval_dir.resolve() == DEFAULT_EVAL_DIR.resolve() else eval_dir
    )
    return [
        "## How to reproduce",
        "",
        "You need a clone of this repository installed with its dev tools "
        "(`pip install -e '.[dev]'`, which pins ruff), git, bash, Python 3.9 or newer and "
        "access to github.com.",
        "",
        "1. Make a bare clone of each public repository, one folder per repository laid out "
        "`<owner>+<name>/repo`. A bare clone is enough: `materialize.sh` reads each labelled "
        "file with `git -C <root>/<owner>+<name>/repo show COMMIT:PATH`, and the whole-tree "
        "runs export `git archive HEAD`. Every commit the labels pin is on the default "
        "branch of its repository.",
        "",
        "   ```bash",
        "   root=$HOME/ascend-lint-eval   # any folder",
        f"   for r in {' '.join(everything)}; do",
        f'     git clone --bare "{GITHUB}/$r" "$root/${{r/\\//+}}/repo"',
        "   done",
        "   ```",
        "",
        f"   The labelled corpora use {', '.join(corpus_repos)}; the whole-tree table uses "
        f"{', '.join(tree_repos)}.",
        "",
        "2. The labels ship in this repository, in `benchmarks/corpus/`: the manifests "
        "`*_cases.json` (which files, at which commits, what each rule must and must not "
        "report), `materialize.sh`, `score.py` and a README with the label conventions. "
        "That is the corpus folder the script reads by default; `--eval-dir DIR` "
        "points it at another one.",
        "",
        "3. Run, from the repository root:",
        "",
        "   ```bash",
        '   MIRROR_ROOT="$root" python benchmarks/eval_corpus.py',
        "   ```",
        "",
        "   It rewrites this file. `--manifest NAME` (repeatable) scores only some manifests, "
        "`--skip-trees` redoes only the corpora and keeps the whole-tree section, `--runs N` "
        "sets the timed runs per tree (the best is kept), `--rules ASC001,...` restricts "
        "the scoring.",
        "",
        "In one command, for the corpus tables alone: `benchmarks/reproduce_eval.sh ROOT` "
        "clones (bare) every repository the manifests pin into ROOT (reusing a clone "
        "already there), writes out the labelled files with `materialize.sh`, lints them "
        "and prints `score.py`'s table for each manifest, with every miss and false "
        "positive. It exits 1 when a manifest falls short of the gate, 2 when something "
        "could not run, and rewrites nothing.",
        "",
        "The corpus scores depend only on the pinned commits, so they reproduce exactly. The "
        "whole-tree table lints the HEAD of each clone, so a fresh clone measures newer "
        "code; to measure the commits listed under the table, point each clone's HEAD at "
        'its commit first: `git -C "$root/<owner>+<name>/repo" update-ref --no-deref HEAD '
        "<commit>`. Seconds depend on the machine and its load.",
        f"(This run read the labels from `{shown_eval}`.)",
    ]


def trees_section(results: list[whole_trees.TreeResult], runs: int, provenance: str) -> list[str]:
    return [
        TREES_START,
        f"Measured {provenance}.",
        "",
        *whole_trees.method_lines(runs, with_ruff=True),
        "",
        *whole_trees.table_lines(results),
        "",
        *whole_trees.commit_lines(results),
        TREES_END,
    ]


def kept_trees_section(out: Path) -> list[str]:
    old = out.read_text(encoding="utf-8") if out.is_file() else ""
    match = re.search(re.escape(TREES_START) + r".*?" + re.escape(TREES_END), old, re.S)
    if match:
        return match.group(0).splitlines()
    return [TREES_START, "Not measured yet: run without `--skip-trees`.", TREES_END]


def command_line(argv: list[str]) -> str:
    command = shlex.join(["python", "benchmarks/eval_corpus.py", *argv])
    if "MIRROR_ROOT" in os.environ:
        command = f"MIRROR_ROOT=<root of the bare clones> {command}"
    return command


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--eval-dir",
        type=Path,
        default=DEFAULT_EVAL_DIR,
        help="corpus folder with the manifests, materialize.sh and score.py "
        "(default: benchmarks/corpus of this repository)",
    )
    ap.add_argument(
        "--manifest",
        action="append",
        metavar="NAME",
        help="manifest to score, a path or a name in --eval-dir; repeatable "
        f"(default: {', '.join(DEFAULT_MANIFESTS)})",
    )
    ap.add_argument(
        "--mirror-root",
        type=Path,
        default=Path(os.environ["MIRROR_ROOT"]) if os.environ.get("MIRROR_ROOT") else None,
        help="folder holding the bare clones as <owner>+<name>/repo (default: $MIRROR_ROOT)",
    )
    ap.add_argument(
        "--rules", default="", help="comma-separated codes to score (default: all in scope)"
    )
    ap.add_argument(
        "--repo",
        action="append",
        metavar="OWNER/NAME",
        help=f"whole tree to measure, repeatable (default: {', '.join(whole_trees.DEFAULT_REPOS)})",
    )
    ap.add_argument("--runs", type=int, default=3, help="timed runs per tree; the best is kept")
    ap.add_argument(
        "--skip-trees",
        action="store_true",
        help="only redo the corpora; keep the whole-tree section of --out as it is",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "EVAL.md")
    args = ap.parse_args(argv)
    if args.mirror_root is None:
        ap.error("set MIRROR_ROOT (or --mirror-root) to the folder holding <owner>+<name>/repo")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    started = time.perf_counter()
    eval_dir = args.eval_dir.resolve()
    manifests = [resolve_manifest(m, eval_dir) for m in args.manifest or DEFAULT_MANIFESTS]
    tree_repos = args.repo or whole_trees.DEFAULT_REPOS
    command = command_line(sys.argv[1:] if argv is None else argv)
    now = datetime.datetime.now(datetime.timezone.utc)
    tools = whole_trees.tool_versions()
    machine = f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"
    provenance = (
        f"by `{command}` on {now:%Y-%m-%d %H:%M} UTC with {tools['ascend-lint']}, "
        f"{tools['ruff']}, {tools['python']} ({machine})"
    )

    with tempfile.TemporaryDirectory(prefix="ascend-lint-eval-") as work:
        corpora = []
        for manifest in manifests:
            result = score_corpus(manifest, eval_dir, args.mirror_root, args.rules, Path(work))
            corpora.append(result)
            print(f"== {manifest.name}\n{result.table}\n{result.summary}")
            for problem in result.problems:
                print(f"{manifest.name}: {problem}", file=sys.stderr)

    if args.skip_trees:
        trees: list[whole_trees.TreeResult] = []
        tree_lines = kept_trees_section(args.out)
    else:
        trees = whole_trees.measure_trees(
            tree_repos, args.mirror_root, args.runs, examples=0, with_ruff=True
        )
        tree_lines = trees_section(trees, args.runs, provenance)
        print("\n".join(whole_trees.table_lines(trees)))

    corpus_repos = list(dict.fromkeys(repo for c in corpora for repo in c.repos))
    lines = [
        "# ascend-lint evaluation: labelled corpora and whole repositories",
        "",
        f"Generated {provenance}. Do not edit by hand: rerun the command.",
        "",
        "1. **Labelled corpora**: how well each rule scores against hand-labelled files of "
        "public repositories (recall, precision, every miss and false positive).",
        "2. **Whole repositories**: what ascend-lint reports on entire real code bases, "
        "and how long it takes next to `ruff check --select ALL`.",
        "",
        *reproduce_section(corpus_repos, tree_repos, eval_dir),
        "",
        "## Labelled corpora",
        "",
        "Each manifest's files are written out with `materialize.sh`, linted with "
        f"`ascend-lint {' '.join(CORPUS_LINT_ARGS)}` and scored with `score.py FINDINGS "
        f"MANIFEST -v {' '.join(GATE_ARGS)}`. Only rules in a file's `scope` are scored. "
        "`pos` = expected findings, `tp` = those reported, recall = tp / pos, `fp` = "
        "in-scope reports that match no expected or ambiguous label, precision = tp / "
        "(tp + fp). Under a rule, `miss` lines are expected findings not reported and `fp` "
        "lines are false positives (`[absent]`: a function labelled as must-not-report). "
        "The gate asks for recall and precision of at least 0.9 on rules with 5 or more "
        "positives, and no false positive on the others; `short:` in the summary names what "
        "falls short. The label conventions are in `benchmarks/corpus/README.md`.",
        "",
    ]
    for result in corpora:
        lines += [f"* `{result.manifest.name}`: `{result.summary or 'not scored'}`"]
    for result in corpora:
        lines += ["", *corpus_section(result)]
    lines += ["", "## Whole repositories", "", *tree_lines]
    elapsed = time.perf_counter() - started
    if args.skip_trees:
        lines += ["", f"(This run redid the corpora only, in {elapsed:.0f} s.)"]
    else:
        lines += ["", f"(This run took {elapsed:.0f} s.)"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {elapsed:.0f} s", file=sys.stderr)
    failed = any(c.problems or not c.summary for c in corpora) or any(t.problems for t in trees)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
