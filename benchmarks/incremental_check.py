"""Incremental lints of real kernel modules, edit after edit, against lints of the whole
text: are they equal, how many edits were linted incrementally, and how long each took.

    python benchmarks/incremental_check.py [--edits 8] [--seed 0] \
        [--out benchmarks/INCREMENTAL.md] NAME=TREE [NAME=TREE ...]

Every Python file of a tree that defines a kernel (`triton.jit`) gets `--edits` random
keystroke-sized edits one after another (a number typed over, a line added, removed,
copied or commented out, a name replaced by another of the file, a launch option
deleted); an edit that leaves the file unparsable is compared too, and typing goes on
from the last text that parsed. Each edit is linted from the previous lint
(`ascend_lint.incremental.lint_text`) and as a whole text (`engine.lint_source`), with
every rule; the results must be identical, fixes included. tests/test_incremental.py
runs the same edits on the shipped modules.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import platform
import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_lint import __version__  # noqa: E402
from ascend_lint.engine import lint_source  # noqa: E402
from ascend_lint.incremental import lint_text  # noqa: E402
from ascend_lint.options import LintOptions  # noqa: E402
from ascend_lint.rules import RULES_BY_CODE, SYNTAX_ERROR_CODE  # noqa: E402

CODES = frozenset(RULES_BY_CODE) | {SYNTAX_ERROR_CODE}
OPTIONS = LintOptions(CODES, fixable=CODES)  # every rule, every fix offered: as `lint_source`
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def random_edit(text: str, rng: random.Random) -> str:
    """One small edit at a random line, of the kinds typing makes."""
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    line = lines[i]
    indent = line[: len(line) - len(line.lstrip())]
    kind = rng.randrange(9)
    if kind == 0 and re.search(r"\d", line):  # a number typed over
        at = rng.choice([m.start() for m in re.finditer(r"\d", line)])
        lines[i] = line[:at] + str(rng.randrange(10)) + line[at + 1 :]
    elif kind == 1:
        lines.insert(i, line)  # a line duplicated
    elif kind == 2:
        del lines[i]
    elif kind == 3:
        lines.insert(i, "")
    elif kind == 4:
        lines.insert(i, f"{indent}_typed = 1")
    elif kind == 5 and _IDENTIFIER.search(line):  # a name replaced by another of the file
        m = rng.choice(list(_IDENTIFIER.finditer(line)))
        lines[i] = line[: m.start()] + rng.choice(_IDENTIFIER.findall(text)) + line[m.end() :]
    elif kind == 6:
        lines[i] = re.sub(r"num_(warps|stages)=\d+,?\s*", "", line)
    elif kind == 7:
        lines[i] = f"{indent}# {line.lstrip()}"
    else:  # a line copied elsewhere
        lines.insert(rng.randrange(len(lines)), line)
    return "\n".join(lines)


def shape(result) -> tuple:
    """Everything a user or `--fix` sees of a result, FixGroup sharing included."""
    groups: dict[int, int] = {}
    out = []
    for d in result.diagnostics:
        together = d.fix.together if d.fix is not None else None
        group = None
        if together is not None:
            edits = [(e.start, e.end, e.content) for e in together.edits]
            group = (groups.setdefault(id(together), len(groups)), together.size, edits)
        out.append((d.to_dict(), group))
    return out, result.error


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def replay(
    path: str,
    text: str,
    edits: int,
    rng: random.Random,
    tally: Counter,
    times: list[tuple[float, float]],
) -> list[str]:
    """Edit `text` `edits` times, counting into `tally` and timing into `times` each
    incremental lint and the whole lint of the same text. Returns a line per edit whose
    incremental result differs from the whole lint."""
    differences = []
    memo = lint_text(path, text.encode(), OPTIONS)[1]
    for step in range(edits):
        changed = random_edit(text, rng)
        raw = changed.encode()
        started = time.perf_counter()
        result, next_memo = lint_text(path, raw, OPTIONS, previous=memo)
        took = time.perf_counter() - started
        started = time.perf_counter()
        whole = lint_source(path, raw, CODES)
        whole_took = time.perf_counter() - started
        tally["edits"] += 1
        if shape(result) == shape(whole):
            tally["equal"] += 1
        else:
            differences.append(f"{path}: edit {step}")
        if next_memo is not None and next_memo.from_previous:
            tally["incremental"] += 1
            times.append((took, whole_took))
        if parses(changed):
            text, memo = changed, next_memo
        else:
            memo = lint_text(path, text.encode(), OPTIONS)[1]
    return differences


def kernel_files(tree: Path) -> list[Path]:
    return sorted(
        p
        for p in tree.rglob("*.py")
        if "triton.jit" in p.read_text(encoding="utf-8", errors="replace")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", metavar="NAME=TREE")
    parser.add_argument("--edits", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    rows = []
    differences: list[str] = []
    for spec in args.trees:
        name, _, folder = spec.partition("=")
        tree = Path(folder or name)
        tally: Counter = Counter()
        times: list[tuple[float, float]] = []
        rng = random.Random(args.seed)
        files = kernel_files(tree)
        for path in files:
            text = path.read_text(encoding="utf-8", errors="replace")
            differences += replay(str(path), text, args.edits, rng, tally, times)
        inc = [t for t, _ in times]
        whole = [w for _, w in times]
        rows.append(
            f"| {name} | {len(files)} | {tally['edits']} | {tally['equal']} | "
            f"{tally['incremental']} ({100 * tally['incremental'] / max(1, tally['edits']):.0f}%) | "
            + (
                f"{1000 * statistics.median(inc):.1f} / {1000 * statistics.median(whole):.1f} |"
                if times
                else "- |"
            )
        )
        print(rows[-1], flush=True)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python benchmarks/incremental_check.py " + " ".join(
        [f"--edits {args.edits}", f"--seed {args.seed}", *args.trees]
    )
    table = "\n".join(
        [
            "# Incremental lints against lints of the whole text",
            "",
            f"`{command}`, {now}; ascend-lint {__version__}, Python {platform.python_version()}.",
            "",
            "Each kernel module gets random keystroke-sized edits one after another; each",
            "edit is linted from the previous lint and as a whole text, with every rule.",
            "Equal: results identical, fixes included. Incremental: edits linted from the",
            "previous lint (the others: whole-text lints, e.g. an edit of imports or a",
            "syntax error). Times: medians over the incremental edits, ms.",
            "",
            "| tree | kernel modules | edits | equal | incremental | ms incremental / whole |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
            *rows,
            "",
            *(f"* differs: {d}" for d in differences),
        ]
    )
    if args.out:
        args.out.write_text(table.rstrip() + "\n", encoding="utf-8")
    print(table)
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
