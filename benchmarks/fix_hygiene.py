"""Whether `ascend-lint --fix` leaves code a project's own linters accept, written as a
Markdown report.

    python benchmarks/fix_hygiene.py --mirror /path/to/flash-linear-attention.git \
        [--out benchmarks/FIX_HYGIENE.md]

The tree is the HEAD of a bare git snapshot (`git archive`), copied three times:
as it is, after `ascend-lint --fix`, and after `ascend-lint --fix --unsafe-fixes`. On each
copy it counts:

* the project's own `ruff check` (its pyproject configuration, from the tree's root):
  a fix must add nothing;
* `ascend-lint --select ALL` findings per code: no code may gain a finding (one rule's
  fix must not create another rule's findings, nor its own);
* repeated `triton.Config`s: configs of one list display written the same, and configs a
  list comprehension yields more than once, found by expanding the comprehension over
  its literal iterables (and module constants bound once to literals, each branch of a
  conditional in turn); comprehensions it cannot expand are counted apart. This count
  does not use the linter's own analysis.
"""

from __future__ import annotations

import argparse
import ast
import collections
import datetime
import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sh(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)


def materialize(mirror: Path, dest: Path) -> str:
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "--git-dir", str(mirror), "archive", "HEAD"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    head = subprocess.run(
        ["git", "--git-dir", str(mirror), "log", "-1", "--format=%H %cs"],
        capture_output=True,
        text=True,
        check=True,
    )
    return head.stdout.strip()


def ruff_counts(tree: Path) -> collections.Counter:
    out = sh(["ruff", "check", "--no-cache", "--output-format", "json", "--exit-zero", "."], tree)
    if out.returncode != 0:
        raise SystemExit(f"ruff failed in {tree}: {out.stderr}")
    return collections.Counter(item["code"] or "syntax" for item in json.loads(out.stdout))


def lint_counts(tree: Path) -> collections.Counter:
    cmd = [sys.executable, "-m", "ascend_lint", "check", "--no-cache", "--select", "ALL"]
    out = sh([*cmd, "--output-format", "json", "--exit-zero", "."], tree)
    if out.returncode != 0:
        raise SystemExit(f"ascend-lint failed in {tree}: {out.stderr}")
    return collections.Counter(item["code"] for item in json.loads(out.stdout))


def run_fix(tree: Path, unsafe: bool) -> str:
    cmd = [sys.executable, "-m", "ascend_lint", "check", "--no-cache", "--fix", "--exit-zero"]
    cmd += ["--unsafe-fixes"] if unsafe else []
    out = sh([*cmd, "-q", "."], tree)
    if out.returncode != 0:
        raise SystemExit(f"ascend-lint --fix failed in {tree}: {out.stderr}")
    return out.stdout


# -- repeated configs, counted without the linter ------------------------------------


def _is_config(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "Config")
        or (isinstance(node.func, ast.Name) and node.func.id == "Config")
    )


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, object]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return ast.Constant(self.values[node.id])
        return node


def _constants(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """Module names bound once, with the expressions they may hold (both branches of a
    conditional)."""
    bound: dict[str, list[ast.AST]] = collections.defaultdict(list)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    bound[target.id].append(stmt.value)
    out = {}
    for name, values in bound.items():
        if len(values) == 1:
            value = values[0]
            out[name] = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
    return out


def _literal_options(expr: ast.AST, constants) -> list[list] | None:
    """The value lists an iterable may be, or None when it is not literal."""
    candidates = [expr]
    if isinstance(expr, ast.Name) and expr.id in constants:
        candidates = constants[expr.id]
    elif isinstance(expr, ast.IfExp):
        candidates = [expr.body, expr.orelse]
    options = []
    for candidate in candidates:
        try:
            if (
                isinstance(candidate, ast.Call)
                and isinstance(candidate.func, ast.Name)
                and candidate.func.id == "range"
            ):
                options.append(list(range(*[ast.literal_eval(a) for a in candidate.args])))
            else:
                options.append(list(ast.literal_eval(candidate)))
        except (ValueError, TypeError, SyntaxError):
            return None
    return options


def repeated_configs(path: Path) -> tuple[int, int]:
    """(configs that repeat another in the same list, comprehensions not expanded)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return 0, 0
    constants = _constants(tree)
    repeats = unexpanded = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)):
            shapes = [ast.dump(e) for e in node.elts if _is_config(e)]
            repeats += len(shapes) - len(set(shapes))
        elif isinstance(node, ast.ListComp) and any(_is_config(n) for n in ast.walk(node.elt)):
            targets, option_lists = [], []
            for clause in node.generators:
                options = _literal_options(clause.iter, constants)
                names = [n.id for n in ast.walk(clause.target) if isinstance(n, ast.Name)]
                if clause.ifs or options is None or not isinstance(clause.target, ast.Name):
                    unexpanded += 1
                    break
                targets.append(names[0])
                option_lists.append(options)
            else:
                worst = 0
                for choice in itertools.product(*option_lists):
                    shapes = []
                    for values in itertools.product(*choice):
                        elt = _Substitute(dict(zip(targets, values))).visit(
                            ast.parse(ast.unparse(node.elt), mode="eval")
                        )
                        shapes.append(ast.dump(elt))
                    worst = max(worst, len(shapes) - len(set(shapes)))
                repeats += worst
    return repeats, unexpanded


def config_repeats(tree: Path) -> tuple[int, int, int]:
    files = repeats = unexpanded = 0
    for path in sorted(tree.rglob("*.py")):
        r, u = repeated_configs(path)
        files += r > 0
        repeats += r
        unexpanded += u
    return files, repeats, unexpanded


def _counts(counter: collections.Counter) -> str:
    return ", ".join(f"{code} {n}" for code, n in sorted(counter.items())) or "none"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, required=True, help="bare git repository")
    parser.add_argument("--name", default="flash-linear-attention")
    parser.add_argument("--out", type=Path, help="Markdown file (default: stdout)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="fix-hygiene-"))
    try:
        head = materialize(args.mirror, work / "before")
        shutil.copytree(work / "before", work / "fix")
        shutil.copytree(work / "before", work / "unsafe")
        run_fix(work / "fix", unsafe=False)
        run_fix(work / "unsafe", unsafe=True)
        rows = {}
        for label in ("before", "fix", "unsafe"):
            tree = work / label
            rows[label] = (ruff_counts(tree), lint_counts(tree), config_repeats(tree))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ruff_version = subprocess.run(["ruff", "--version"], capture_output=True, text=True)
    from ascend_lint import __version__

    labels = {
        "before": "as it is",
        "fix": "after `ascend-lint --fix`",
        "unsafe": "after `ascend-lint --fix --unsafe-fixes`",
    }
    lines = [
        "# Fix hygiene on a real tree",
        "",
        "What `ascend-lint --fix` leaves for the project's own linters. Generated by",
        "`benchmarks/fix_hygiene.py`; do not edit by hand.",
        "",
        f"* command: `python benchmarks/fix_hygiene.py --mirror <{args.name} bare clone>`",
        f"* tree: {args.name} at {head} (`git archive HEAD`)",
        f"* ascend-lint {__version__}, {ruff_version.stdout.strip()}, Python "
        f"{platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.machine()}",
        f"* date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        "| tree | the project's `ruff check` | files with repeated `triton.Config`s | "
        "repeated configs | comprehensions not expanded |",
        "|---|---|---:|---:|---:|",
    ]
    for label, (ruff, _lint, (files, repeats, unexpanded)) in rows.items():
        lines.append(
            f"| {labels[label]} | {sum(ruff.values())} ({_counts(ruff)}) | {files} | "
            f"{repeats} | {unexpanded} |"
        )
    lines += [
        "",
        "`ascend-lint --select ALL` findings per code (a fix must not add any):",
        "",
        "| code | " + " | ".join(labels.values()) + " |",
        "|---|---:|---:|---:|",
    ]
    codes = sorted(set().union(*(lint.keys() for _r, lint, _c in rows.values())))
    gained = []
    for code in codes:
        counts = [rows[label][1][code] for label in labels]
        lines.append(f"| {code} | " + " | ".join(str(n) for n in counts) + " |")
        gained += [
            f"{code} ({labels[label]})"
            for label in ("fix", "unsafe")
            if rows[label][1][code] > counts[0]
        ]
    ruff_added = [
        f"{code} ({labels[label]})"
        for label in ("fix", "unsafe")
        for code, n in rows[label][0].items()
        if n > rows["before"][0][code]
    ]
    lines += [
        "",
        f"Codes that gained findings: {', '.join(gained) or 'none'}. "
        f"Ruff codes that gained findings: {', '.join(ruff_added) or 'none'}. "
        f"Repeated configs left after the fixes: {rows['fix'][2][1]} and {rows['unsafe'][2][1]}.",
        "",
    ]
    text = "\n".join(lines)
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 1 if gained or ruff_added or rows["fix"][2][1] or rows["unsafe"][2][1] else 0


if __name__ == "__main__":
    sys.exit(main())
