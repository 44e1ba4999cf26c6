"""Whether `ascend-lint --fix` leaves code a project's own linters accept, and whether
`--fix --unsafe-fixes` reaches a fixed point, written as a Markdown report.

    python benchmarks/fix_hygiene.py --mirror /path/to/flash-linear-attention.git \
        [--mirror /path/to/other.git ...] [--tree examples] [--out benchmarks/FIX_HYGIENE.md]

Each tree is the HEAD of a bare git snapshot (`git archive`; blobs the snapshot lacks
are left out), or a folder taken as it is (`--tree`), copied three times: as it is,
after `ascend-lint --fix`, and after `ascend-lint --fix --unsafe-fixes`. On each copy it
counts:

* the project's own `ruff check` (its pyproject configuration, from the tree's root):
  a fix must add nothing;
* `ascend-lint --select ALL` findings per code: no code may gain a finding (one rule's
  fix must not create another rule's findings, nor its own);
* repeated `triton.Config`s: configs of one list display written the same, and configs a
  list comprehension yields more than once, found by expanding the comprehension over
  its literal iterables (and module constants bound once to literals, each branch of a
  conditional in turn); comprehensions it cannot expand are counted apart. This count
  does not use the linter's own analysis.

And after `--fix --unsafe-fixes`, that it converged: every file it changed parses, a
second run changes nothing, and re-linting finds nothing the fix run left or created:

* left: a finding that still offers a fix `--fix --unsafe-fixes` applies, or a finding
  of a code on a statement the run rewrote where that code's fix was applied (the fix
  did part of its job: `tl.cast(a * b + c, tl.int64)` after a late-cast fix);
* created: a file that gains findings of a code it had fewer of before.
"""

from __future__ import annotations

import argparse
import ast
import collections
import datetime
import difflib
import filecmp
import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sh(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)


def materialize(mirror: Path, dest: Path) -> str:
    dest.mkdir(parents=True)
    git = ["git", "--git-dir", str(mirror)]
    archive = subprocess.run([*git, "archive", "HEAD"], capture_output=True)
    if archive.returncode != 0:
        # A snapshot without some large blobs: archive the paths whose blobs it has.
        listing = subprocess.run(
            [*git, "ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True
        ).stdout.split(b"\0")
        entries = [e.split(b"\t", 1) for e in listing if e]
        objects = b"\n".join(meta.split()[2] for meta, _path in entries) + b"\n"
        check = subprocess.run(
            [*git, "cat-file", "--batch-check"], input=objects, capture_output=True, check=True
        ).stdout.splitlines()
        present = [
            path.decode()
            for (_meta, path), line in zip(entries, check)
            if not line.endswith(b"missing")
        ]
        archive = subprocess.run(
            [*git, "archive", "HEAD", "--", *present], capture_output=True, check=True
        )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    head = subprocess.run(
        [*git, "log", "-1", "--format=%H %cs"], capture_output=True, text=True, check=True
    )
    return head.stdout.strip()


def ruff_counts(tree: Path) -> collections.Counter | str:
    """The project's own `ruff check` findings per code, or why ruff could not run (a
    configuration this ruff does not read)."""
    out = sh(["ruff", "check", "--no-cache", "--output-format", "json", "--exit-zero", "."], tree)
    if out.returncode != 0:
        return (out.stderr.strip().splitlines() or ["ruff failed"])[0]
    return collections.Counter(item["code"] or "syntax" for item in json.loads(out.stdout))


def lint_findings(tree: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "ascend_lint", "check", "--no-cache", "--select", "ALL"]
    out = sh([*cmd, "--output-format", "json", "--exit-zero", "."], tree)
    if out.returncode != 0:
        raise SystemExit(f"ascend-lint failed in {tree}: {out.stderr}")
    return json.loads(out.stdout)


def run_fix(tree: Path, unsafe: bool) -> str:
    cmd = [sys.executable, "-m", "ascend_lint", "check", "--no-cache", "--select", "ALL"]
    cmd += ["--fix", "--exit-zero", *(["--unsafe-fixes"] if unsafe else [])]
    out = sh([*cmd, "-q", "."], tree)
    if out.returncode != 0:
        raise SystemExit(f"ascend-lint --fix failed in {tree}: {out.stderr}")
    return out.stdout


# -- did the fix run converge? ---------------------------------------------------------

APPLIED = ("safe", "unsafe")  # what `--fix --unsafe-fixes` applies


def _relative(item: dict, root: Path) -> str:
    return os.path.relpath(os.path.join(root, item["filename"]), root)


def newly_unparsable(before: Path, after: Path) -> list[str]:
    """Files the fix changed that no longer parse (a file that did not parse before is
    not the fix's doing)."""
    bad = []
    for path in sorted(after.rglob("*.py")):
        old = before / path.relative_to(after)
        if old.is_file() and filecmp.cmp(old, path, shallow=False):
            continue
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            try:
                ast.parse(old.read_bytes())
            except (OSError, SyntaxError, ValueError):
                continue
            bad.append(str(path.relative_to(after)))
    return bad


def changed_files(a: Path, b: Path) -> list[str]:
    changed = []
    for path in sorted(b.rglob("*.py")):
        other = a / path.relative_to(b)
        if not other.is_file() or not filecmp.cmp(other, path, shallow=False):
            changed.append(str(path.relative_to(b)))
    return changed


def _statement_rows(tree: ast.Module, row: int) -> tuple[int, int]:
    """The rows of the innermost statement holding `row` (a compound statement's
    header only), or the row alone."""
    found = (row, row)
    body = tree.body
    while True:
        for stmt in body:
            end = stmt.end_lineno or stmt.lineno
            if stmt.lineno <= row <= end:
                inner = [
                    b
                    for name in ("body", "orelse", "finalbody")
                    for b in [getattr(stmt, name, None)]
                    if isinstance(b, list) and b and isinstance(b[0], ast.stmt)
                ]
                inner += [h.body for h in getattr(stmt, "handlers", ())]
                first_inner = min((b[0].lineno for b in inner), default=end + 1)
                found = (stmt.lineno, end if not inner else max(first_inner - 1, stmt.lineno))
                nested = [b for b in inner if b[0].lineno <= row]
                if row >= first_inner and nested:
                    body = [s for b in inner for s in b]
                    break
                return found
        else:
            return found


@dataclass
class Convergence:
    unparsable: list[str] = field(default_factory=list)
    second_run: list[str] = field(default_factory=list)  # files a second run changes
    left: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)


def convergence(
    before_tree: Path, after_tree: Path, before: list[dict], after: list[dict], second: list[str]
) -> Convergence:
    result = Convergence(newly_unparsable(before_tree, after_tree), second)
    counts_before = collections.Counter((_relative(d, before_tree), d["code"]) for d in before)
    counts_after = collections.Counter((_relative(d, after_tree), d["code"]) for d in after)
    for (path, code), n in sorted(counts_after.items()):
        if n > counts_before[(path, code)]:
            result.created.append(f"`{path}`: {code} {counts_before[(path, code)]} -> {n}")
    fixed_before: dict[str, list[dict]] = collections.defaultdict(list)
    for d in before:
        if d["fix"] and d["fix"]["applicability"] in APPLIED:
            fixed_before[_relative(d, before_tree)].append(d)
    trees: dict[str, tuple] = {}
    for d in after:
        path = _relative(d, after_tree)
        row = d["location"]["row"]
        where = f"`{path}:{row}` {d['code']} {d['message']}"
        if d["fix"] and d["fix"]["applicability"] in APPLIED:
            result.left.append(where + " (a fix is still offered)")
            continue
        if not any(f["code"] == d["code"] for f in fixed_before.get(path, ())):
            continue
        if path not in trees:
            old_lines = (before_tree / path).read_text(errors="replace").splitlines()
            new_text = (after_tree / path).read_text(errors="replace")
            opcodes = difflib.SequenceMatcher(
                None, old_lines, new_text.splitlines(), autojunk=False
            ).get_opcodes()
            trees[path] = (ast.parse(new_text), opcodes)
        tree, opcodes = trees[path]
        top, bottom = _statement_rows(tree, row)
        old_rows: list[int] = []
        rewritten = False
        for tag, i1, i2, j1, j2 in opcodes:
            if j1 < bottom and top - 1 < max(j2, j1 + 1):
                old_rows += [i1 + 1, i2]
                rewritten = rewritten or tag != "equal"
        if not rewritten or not old_rows:
            continue
        low, high = min(old_rows), max(old_rows)
        if any(
            f["code"] == d["code"] and low <= f["location"]["row"] <= high
            for f in fixed_before[path]
        ):
            result.left.append(where + " (on a statement its own fix rewrote)")
    return result


# -- repeated configs, counted without the linter ------------------------------------


def is_config(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "Config")
        or (isinstance(node.func, ast.Name) and node.func.id == "Config")
    )


class Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, object]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return ast.Constant(self.values[node.id])
        return node


def bound_once(tree: ast.Module) -> dict[str, list[ast.AST]]:
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


def literal_options(expr: ast.AST, constants) -> list[list] | None:
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
    constants = bound_once(tree)
    repeats = unexpanded = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)):
            shapes = [ast.dump(e) for e in node.elts if is_config(e)]
            repeats += len(shapes) - len(set(shapes))
        elif isinstance(node, ast.ListComp) and any(is_config(n) for n in ast.walk(node.elt)):
            targets, option_lists = [], []
            for clause in node.generators:
                options = literal_options(clause.iter, constants)
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
                        elt = Substitute(dict(zip(targets, values))).visit(
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


LABELS = {
    "before": "as it is",
    "fix": "after `--fix`",
    "unsafe": "after `--fix --unsafe-fixes`",
}


@dataclass
class TreeResult:
    name: str
    origin: str
    files: int
    ruff: dict[str, collections.Counter | str]
    lint: dict[str, collections.Counter]
    repeats: dict[str, tuple[int, int, int]]
    converged: Convergence

    def gained(self) -> list[str]:
        return [
            f"{code} ({LABELS[label]})"
            for label in ("fix", "unsafe")
            for code, n in sorted(self.lint[label].items())
            if n > self.lint["before"][code]
        ]

    def ruff_added(self) -> list[str]:
        before = self.ruff["before"]
        if isinstance(before, str):
            return []
        return [
            f"{code} ({LABELS[label]})"
            for label in ("fix", "unsafe")
            if isinstance(self.ruff[label], collections.Counter)
            for code, n in sorted(self.ruff[label].items())
            if n > before[code]
        ]

    def ok(self) -> bool:
        c = self.converged
        return not (
            self.gained()
            or self.ruff_added()
            or self.repeats["fix"][1]
            or self.repeats["unsafe"][1]
            or c.unparsable
            or c.second_run
            or c.left
            or c.created
        )


def check_tree(name: str, origin: str, work: Path) -> TreeResult:
    """`work/before` holds the tree: fix copies of it and count what each leaves."""
    shutil.copytree(work / "before", work / "fix")
    shutil.copytree(work / "before", work / "unsafe")
    run_fix(work / "fix", unsafe=False)
    run_fix(work / "unsafe", unsafe=True)
    shutil.copytree(work / "unsafe", work / "again")
    run_fix(work / "again", unsafe=True)
    found = {label: lint_findings(work / label) for label in LABELS}
    converged = convergence(
        work / "before",
        work / "unsafe",
        found["before"],
        found["unsafe"],
        changed_files(work / "unsafe", work / "again"),
    )
    return TreeResult(
        name,
        origin,
        sum(1 for _ in (work / "before").rglob("*.py")),
        {label: ruff_counts(work / label) for label in LABELS},
        {label: collections.Counter(d["code"] for d in found[label]) for label in LABELS},
        {label: config_repeats(work / label) for label in LABELS},
        converged,
    )


def _ruff_cell(result: TreeResult) -> str:
    cells = []
    for label in LABELS:
        value = result.ruff[label]
        cells.append(str(sum(value.values())) if isinstance(value, collections.Counter) else "n/a")
    text = " / ".join(cells)
    if isinstance(result.ruff["before"], str):
        text += f" (ruff: {result.ruff['before']})"
    return text


def _yes(items: list) -> str:
    return "yes" if not items else f"**no** ({len(items)})"


def render(results: list[TreeResult], command: str) -> str:
    ruff_version = subprocess.run(["ruff", "--version"], capture_output=True, text=True)
    from ascend_lint import __version__

    lines = [
        "# Fix hygiene on real trees",
        "",
        "What `ascend-lint --fix` leaves for each project's own linters, and whether",
        "`--fix --unsafe-fixes` reaches a fixed point. Generated by",
        "`benchmarks/fix_hygiene.py`; do not edit by hand.",
        "",
        f"* command: `{command}`",
        *[f"* {r.name}: {r.origin}, {r.files} Python files" for r in results],
        f"* ascend-lint {__version__}, {ruff_version.stdout.strip()}, Python "
        f"{platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.machine()}",
        f"* date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        "| tree | the project's `ruff check`: as it is / after `--fix` / after "
        "`--fix --unsafe-fixes` | repeated configs left by the fixes | codes that gained "
        "findings | files the fixes changed parse | a second `--fix --unsafe-fixes` "
        "changes nothing | re-lint after `--fix --unsafe-fixes` finds nothing the fix run "
        "left or created |",
        "|---|---|---:|---|---|---|---|",
    ]
    for r in results:
        c = r.converged
        left_created = c.left + c.created
        lines.append(
            f"| {r.name} | {_ruff_cell(r)} | {r.repeats['fix'][1] + r.repeats['unsafe'][1]} | "
            f"{', '.join(r.gained() + r.ruff_added()) or 'none'} | {_yes(c.unparsable)} | "
            f"{_yes(c.second_run)} | {_yes(left_created)} |"
        )
    for r in results:
        c = r.converged
        lines += [
            "",
            f"## {r.name}",
            "",
            "| | the project's `ruff check` | files with repeated `triton.Config`s | "
            "repeated configs | comprehensions not expanded |",
            "|---|---|---:|---:|---:|",
        ]
        for label, text in LABELS.items():
            ruff = r.ruff[label]
            shown = (
                f"{sum(ruff.values())} ({_counts(ruff)})"
                if isinstance(ruff, collections.Counter)
                else f"n/a ({ruff})"
            )
            files, repeats, unexpanded = r.repeats[label]
            lines.append(f"| {text} | {shown} | {files} | {repeats} | {unexpanded} |")
        lines += [
            "",
            "`ascend-lint --select ALL` findings per code (a fix must not add any):",
            "",
            "| code | " + " | ".join(LABELS.values()) + " |",
            "|---|---:|---:|---:|",
        ]
        for code in sorted(set().union(*(r.lint[label].keys() for label in LABELS))):
            counts = " | ".join(str(r.lint[label][code]) for label in LABELS)
            lines.append(f"| {code} | {counts} |")
        lines.append("")
        problems = [
            ("Files the fixes changed that no longer parse", c.unparsable),
            ("Files a second `--fix --unsafe-fixes` changes", c.second_run),
            ("Findings the fix run left", c.left),
            ("Findings the fix run created", c.created),
        ]
        if not any(items for _title, items in problems):
            lines.append(
                "After `--fix --unsafe-fixes`: every changed file parses, a second run "
                "changes nothing, and re-linting finds nothing the run left or created."
            )
        for title, items in problems:
            if items:
                lines += [f"{title}:", "", *[f"* {item}" for item in items], ""]
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mirror", type=Path, action="append", default=[], help="bare git repository"
    )
    parser.add_argument(
        "--tree", type=Path, action="append", default=[], help="a folder, taken as it is"
    )
    parser.add_argument("--out", type=Path, help="Markdown file (default: stdout)")
    args = parser.parse_args(argv)
    if not args.mirror and not args.tree:
        parser.error("give at least one --mirror or --tree")
    results = []
    sources = [(m, True) for m in args.mirror] + [(t, False) for t in args.tree]
    for source, is_mirror in sources:
        work = Path(tempfile.mkdtemp(prefix="fix-hygiene-"))
        try:
            if is_mirror:
                name = _mirror_name(source)
                origin = f"{materialize(source, work / 'before')} (`git archive HEAD`)"
            else:
                name = source.resolve().name
                shutil.copytree(source, work / "before")
                origin = f"the folder `{source}`"
            results.append(check_tree(name, origin, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    shown = " ".join(
        [*(f"--mirror <{_mirror_name(m)} bare clone>" for m in args.mirror)]
        + [f"--tree {t}" for t in args.tree]
    )
    text = render(results, f"python benchmarks/fix_hygiene.py {shown}")
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0 if all(r.ok() for r in results) else 1


def _mirror_name(mirror: Path) -> str:
    """`/work/.mirror/fla-org+flash-linear-attention/repo` -> `flash-linear-attention`."""
    for part in reversed(mirror.resolve().parts):
        if part not in ("repo", ".git") and not part.endswith(".git"):
            return part.split("+", 1)[-1]
        if part.endswith(".git") and part != ".git":
            return part[: -len(".git")].split("+", 1)[-1]
    return mirror.name


if __name__ == "__main__":
    sys.exit(main())
