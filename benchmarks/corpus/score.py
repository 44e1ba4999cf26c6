#!/usr/bin/env python3
"""Score ascend-lint JSON findings against the labelled manifests.

usage: score.py FINDINGS.json MANIFEST.json [MANIFEST.json ...] [--rules ASC001,ASC002]
                [--min-recall R] [--min-precision P] [--max-fp N] [--min-pos K] [--max-fp-small N]

FINDINGS.json is the project's `--output-format json` output (ruff layout: a list of
objects with "code", "filename", "location": {"row", ...}).  Each sample's file must be
named <id>.py (as materialize.sh / synthetic copies write them).  The enclosing function
of a finding is computed here with `ast`, so the project need not report it.
Prints a per-rule table, then one summary line; exits 1 when a bar is not met.
Bars: --min-recall/--min-precision apply to rules with at least --min-pos positives (default 1);
--max-fp to every rule; --max-fp-small to rules with fewer than --min-pos positives.
"""

import argparse
import ast
import json
import os
import sys
from collections import defaultdict


def enclosing_functions(path):
    """Map line -> innermost enclosing def name (decorator lines belong to the def)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            spans.append((start, node.end_lineno, node.name))

    def lookup(line):
        best = None
        for s, e, name in spans:
            if s <= line <= e and (best is None or s >= best[0]):
                best = (s, e, name)
        return best[2] if best else "<module>"

    return lookup


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("findings")
    ap.add_argument("manifests", nargs="+")
    ap.add_argument("--rules", default="")
    ap.add_argument("--min-recall", type=float, default=None)
    ap.add_argument("--max-fp", type=int, default=None)
    ap.add_argument("--min-precision", type=float, default=None)
    ap.add_argument("--min-pos", type=int, default=1)
    ap.add_argument("--max-fp-small", type=int, default=None)
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()
    rules = set(r for r in a.rules.split(",") if r)

    raw = json.load(open(a.findings))
    by_id = defaultdict(list)
    for f in raw:
        sid = os.path.splitext(os.path.basename(f["filename"]))[0]
        by_id[sid].append((f["code"], f["location"]["row"]))

    samples = []
    for m in a.manifests:
        samples += json.load(open(m))
    base_dirs = {os.path.dirname(os.path.abspath(f["filename"])) for f in raw}

    tp = defaultdict(int)
    npos = defaultdict(int)
    fp = defaultdict(int)
    fp_list = defaultdict(list)
    miss_list = defaultdict(list)
    for s in samples:
        scope = [r for r in s["scope"] if not rules or r in rules]
        if not scope:
            continue
        path = None
        for d in base_dirs:
            p = os.path.join(d, s["id"] + ".py")
            if os.path.exists(p):
                path = p
        reports = [(c, l) for c, l in by_id.get(s["id"], []) if c in scope]
        reports = sorted(set(reports))
        func_of = enclosing_functions(path) if path else (lambda line: "?")
        expect = [e for e in s["expect"] if e["rule"] in scope]
        amb = [e for e in s.get("ambiguous", []) if e["rule"] in scope]
        absent = {(e["rule"], e["function"]) for e in s.get("absent", [])}
        for e in expect:
            npos[e["rule"]] += 1
        matched = [False] * len(expect)
        leftovers = []
        # exact line first, then alt_lines
        for c, l in reports:
            hit = None
            for i, e in enumerate(expect):
                if not matched[i] and e["rule"] == c and e["line"] == l:
                    hit = i
                    break
            if hit is None:
                for i, e in enumerate(expect):
                    if not matched[i] and e["rule"] == c and l in e.get("alt_lines", []):
                        hit = i
                        break
            if hit is not None:
                matched[hit] = True
                tp[c] += 1
            else:
                leftovers.append((c, l))
        for c, l in leftovers:
            fn = func_of(l)
            dup = any(
                e["rule"] == c and (e["line"] == l or l in e.get("alt_lines", [])) for e in expect
            )
            if dup:
                continue
            if any(e["rule"] == c and (e["line"] == l or l in e.get("alt_lines", [])) for e in amb):
                continue
            fp[c] += 1
            fp_list[c].append(f"{s['id']}:{l} ({fn}){' [absent]' if (c, fn) in absent else ''}")
        for i, e in enumerate(expect):
            if not matched[i]:
                miss_list[e["rule"]].append(
                    f"{s['id']}:{e['line']} ({e['function']}) {e.get('snippet', '')[:60]}"
                )

    all_rules = sorted(set(npos) | set(fp) | set(tp))
    print(f"{'rule':8} {'pos':>5} {'tp':>5} {'recall':>7} {'fp':>5} {'precision':>9}")
    failing = []
    tot_p = tot_tp = tot_fp = 0
    for r in all_rules:
        rec = tp[r] / npos[r] if npos[r] else float("nan")
        prec = tp[r] / (tp[r] + fp[r]) if (tp[r] + fp[r]) else float("nan")
        print(f"{r:8} {npos[r]:5d} {tp[r]:5d} {rec:7.3f} {fp[r]:5d} {prec:9.3f}")
        tot_p += npos[r]
        tot_tp += tp[r]
        tot_fp += fp[r]
        big = npos[r] >= max(a.min_pos, 1)
        if a.min_recall is not None and big and rec < a.min_recall:
            failing.append(f"{r} recall {rec:.2f}")
        if a.min_precision is not None and big and tp[r] + fp[r] and prec < a.min_precision:
            failing.append(f"{r} precision {prec:.2f}")
        if a.max_fp is not None and fp[r] > a.max_fp:
            failing.append(f"{r} {fp[r]} fp")
        if a.max_fp_small is not None and not big and fp[r] > a.max_fp_small:
            failing.append(f"{r} {fp[r]} fp")
        if a.verbose:
            for x in miss_list[r][:30]:
                print("   miss", x)
            for x in fp_list[r][:30]:
                print("   fp  ", x)
    rec = tot_tp / tot_p if tot_p else float("nan")
    prec = tot_tp / (tot_tp + tot_fp) if (tot_tp + tot_fp) else float("nan")
    tail = f"; short: {', '.join(failing)}" if failing else ""
    print(
        f"summary: recall {rec:.3f} ({tot_tp}/{tot_p}), precision {prec:.3f}, false positives {tot_fp}, samples {len(samples)}{tail}"
    )
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()
