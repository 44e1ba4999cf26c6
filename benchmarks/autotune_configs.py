"""Does ASC004's fix keep every autotune config list the same set of configs, less the
options it removes? Written as a Markdown report.

    python benchmarks/autotune_configs.py --mirror /path/to/flash-linear-attention.git \
        [--mirror ...] [--out benchmarks/AUTOTUNE_CONFIGS.md]

Each tree is the HEAD of a bare git snapshot, copied twice: as it is, and after
`ascend-lint check --select ASC004 --fix --unsafe-fixes`. In both copies every list of
`triton.Config`s (a display, or a comprehension) is expanded without the linter's own
analysis: comprehension clauses over literal iterables (and module constants bound once
to a literal, each branch of a conditional in turn), filters evaluated on the values
they test (`if not (w == 4 and s == 2)`, `if any(... for w in (2, 4))`). The lists are
paired in source order, file by file, and for each pair:

* the configs before, each with its `num_warps`/`num_stages`/`num_ctas`/`maxnreg`
  removed, must be the configs after, as a set (the fix removes the options, never a
  config that differs in anything else);
* the list after must yield no config twice;
* a list that cannot be expanded on either side (an iterable or a filter that is not
  literal) is counted apart, not judged.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import itertools
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from fix_hygiene import (  # noqa: E402
    Substitute,
    bound_once,
    is_config,
    literal_options,
    materialize,
    sh,
)

KNOBS = frozenset({"num_warps", "num_stages", "num_ctas", "maxnreg"})
# What a filter may call once its loop variables are values: nothing else is evaluated.
_FILTER_CALLS = {"any": any, "all": all, "len": len}
_FILTER_NODES = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.UnaryOp,
    ast.Not,
    ast.USub,
    ast.Compare,
    ast.cmpop,
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Call,
    ast.GeneratorExp,
    ast.comprehension,
)


def _without_knobs(config: ast.Call) -> str:
    kept = [k for k in config.keywords if k.arg not in KNOBS]
    return ast.dump(ast.Call(config.func, config.args, kept))


def _passes(test: ast.expr, values: dict[str, object]) -> bool | None:
    """A comprehension filter's value for these loop values; None when it reads
    anything else."""
    tree = ast.Expression(Substitute(values).visit(ast.parse(ast.unparse(test), mode="eval")).body)
    if not all(isinstance(node, _FILTER_NODES) for node in ast.walk(tree)):
        return None
    try:
        return bool(eval(compile(tree, "<filter>", "eval"), {"__builtins__": {}}, _FILTER_CALLS))
    except Exception:  # a name the filter reads that is not one of its loop variables
        return None


def _plain_target(target: ast.AST) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, ast.Tuple) and all(_plain_target(e) for e in target.elts)


def _bind(target: ast.AST, value: object, bound: dict[str, object]) -> bool:
    """Bind a loop target (`w`, `(BK, BV)`) to one value; False where it does not unpack."""
    if isinstance(target, ast.Name):
        bound[target.id] = value
        return True
    if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
        return False
    return all(_bind(t, v, bound) for t, v in zip(target.elts, value))


def expand(node: ast.AST, constants) -> list[list[ast.Call]] | None:
    """The configs a list yields, one list per choice of the module constants it reads
    (both branches of `X = a if c else b`), or None when it cannot be expanded."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [[e for e in node.elts if is_config(e)]]
    targets, option_lists = [], []
    for clause in node.generators:
        options = literal_options(clause.iter, constants)
        if options is None or not _plain_target(clause.target):
            return None
        targets.append(clause.target)
        option_lists.append(options)
    tests = [test for clause in node.generators for test in clause.ifs]
    out = []
    for choice in itertools.product(*option_lists):
        configs = []
        for values in itertools.product(*choice):
            bound: dict[str, object] = {}
            if not all(_bind(t, v, bound) for t, v in zip(targets, values)):
                return None
            verdicts = [_passes(test, bound) for test in tests]
            if None in verdicts:
                return None
            if all(verdicts):
                elt = Substitute(bound).visit(ast.parse(ast.unparse(node.elt), mode="eval")).body
                configs.append(elt)
        out.append(configs)
    return out


def config_lists(path: Path) -> list[tuple[int, list[list[ast.Call]] | None]]:
    """(line, expansion) of every list of configs in the file, in source order."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return []
    constants = bound_once(tree)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, (ast.List, ast.Tuple)) and any(is_config(e) for e in node.elts)) or (
            isinstance(node, ast.ListComp) and is_config(node.elt)
        ):
            found.append((node.lineno, expand(node, constants)))
    return sorted(found, key=lambda item: item[0])


@dataclass
class TreeResult:
    name: str
    origin: str
    lists: int = 0
    judged: int = 0
    same_set: int = 0
    not_expanded: int = 0
    repeats_after: int = 0
    knobs_before: int = 0
    knobs_after: int = 0
    problems: list[str] = field(default_factory=list)


def compare(name: str, origin: str, before: Path, after: Path) -> TreeResult:
    result = TreeResult(name, origin)
    for path in sorted(before.rglob("*.py")):
        relative = path.relative_to(before)
        old, new = config_lists(path), config_lists(after / relative)
        if len(old) != len(new):
            result.problems.append(
                f"`{relative}`: {len(old)} config lists before, {len(new)} after"
            )
            continue
        for (line, was), (_line, now) in zip(old, new):
            result.lists += 1
            if was is None or now is None:
                result.not_expanded += 1
                continue
            result.judged += 1
            result.knobs_before += sum(k.arg in KNOBS for cs in was for c in cs for k in c.keywords)
            result.knobs_after += sum(k.arg in KNOBS for cs in now for c in cs for k in c.keywords)
            for configs_after in now:  # each choice of module constants on its own
                shapes = [_without_knobs(c) for c in configs_after]
                repeated = len(shapes) - len(set(shapes))
                if repeated:
                    result.repeats_after += repeated
                    result.problems.append(
                        f"`{relative}:{line}`: {repeated} config(s) yielded twice after the fix"
                    )
            if len(was) == len(now):
                pairs = list(zip(was, now))
            else:
                # a loop over a conditional module constant went with the options: the
                # configs of every branch together are compared
                pairs = [([c for cs in was for c in cs], [c for cs in now for c in cs])]
            same = all(
                {_without_knobs(c) for c in before_configs}
                == {_without_knobs(c) for c in after_configs}
                for before_configs, after_configs in pairs
            )
            if same:
                result.same_set += 1
            else:
                result.problems.append(f"`{relative}:{line}`: the set of configs changed")
    return result


def render(results: list[TreeResult], command: str) -> str:
    lines = [
        "# Autotune configs through ASC004's fix",
        "",
        "Whether `ascend-lint check --select ASC004 --fix --unsafe-fixes` keeps each list of",
        "`triton.Config`s the same set of configs less the options it removes, and yields no",
        "config twice. Generated by `benchmarks/autotune_configs.py`; do not edit by hand.",
        "",
        f"* command: `{command}`",
        *[f"* {r.name}: {r.origin} (`git archive HEAD`)" for r in results],
        f"* ascend-lint {_version()}, Python {platform.python_version()}",
        f"* date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        "| tree | config lists | expanded on both sides | same set less the options | configs "
        "yielded twice after | options in the expanded configs before | options left | not "
        "expanded |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.name} | {r.lists} | {r.judged} | {r.same_set} | {r.repeats_after} | "
            f"{r.knobs_before} | {r.knobs_after} | {r.not_expanded} |"
        )
    for r in results:
        if r.problems:
            lines += ["", f"## {r.name}", "", *[f"* {p}" for p in r.problems]]
    return "\n".join(lines) + "\n"


def _version() -> str:
    out = sh([sys.executable, "-m", "ascend_lint", "--version"], ROOT).stdout.split()
    return out[-1] if out else "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", action="append", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "AUTOTUNE_CONFIGS.md")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for mirror in args.mirror:
            name = mirror.parent.name.split("+")[-1] if mirror.name == "repo" else mirror.stem
            before, after = Path(work, name, "before"), Path(work, name, "after")
            origin = materialize(mirror, before)
            subprocess.run(["cp", "-a", str(before), str(after)], check=True)
            fix = [sys.executable, "-m", "ascend_lint", "check", "--no-cache", "--select"]
            fix += ["ASC004", "--fix", "--unsafe-fixes", "--exit-zero", "-q", "."]
            done = sh(fix, after)
            if done.returncode != 0:
                raise SystemExit(f"ascend-lint --fix failed on {name}: {done.stderr}")
            results.append(compare(name, origin, before, after))
    shown = " ".join(f"--mirror <{r.name} bare clone>" for r in results)
    text = render(results, f"python benchmarks/autotune_configs.py {shown}")
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0 if all(not r.problems for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
