"""Static findings against the lowered IR: which ones the compiler's output bears out.

The static engine runs in-process on each launched kernel's source file (it reads the
text; nothing is imported), and every finding inside a kernel that was lowered is
judged against the IR facts of all its specialisations:

* ``confirmed``: some specialisation shows the predicted fact on the finding's lines;
* ``contradicted``: the finding's lines were lowered, and no specialisation shows it
  (the data to improve a rule);
* ``not-lowered``: no lowered op carries those lines (a constexpr branch that no launch
  took, say), so the IR says nothing.

IR facts no static finding predicted are listed as ``ir_only``.
"""

from __future__ import annotations

from pathlib import Path

# which IR facts bear out which rule
EVIDENCE = {
    "ASC001": ("strided-load", "strided-store"),
    "ASC002": ("strided-load", "strided-store"),
    "ASC003": ("runtime-branch-in-loop",),
    "ASC005": ("runtime-branch-in-loop+dma",),
}


def _fact_tags(fact: dict) -> set[str]:
    tags = {fact["kind"]}
    if fact.get("dma_both_sides"):
        tags.add("runtime-branch-in-loop+dma")
    if fact["kind"].startswith("strided") and not fact.get("certain", True):
        tags = {"possible-" + fact["kind"]}
    return tags


def static_findings(path: str) -> list[dict]:
    from ascend_lint.engine import lint_source
    from ascend_lint.rules import RULES_BY_CODE

    try:
        raw = Path(path).read_bytes()
    except OSError:
        return []
    result = lint_source(path, raw, frozenset(RULES_BY_CODE))
    return [
        {
            "code": d.code,
            "name": d.name,
            "message": d.message,
            "line": d.start.row,
            "end_line": d.end.row,
            "column": d.start.column + 1,
        }
        for d in result.diagnostics
    ]


def judge(specialisations: list[dict]) -> tuple[list[dict], list[dict]]:
    """(ir_confirmation, ir_only) over every lowered specialisation in the report."""
    by_kernel: dict[tuple[str, str], list[dict]] = {}
    for spec in specialisations:
        if spec["status"] == "ok" and spec.get("ir") is not None:
            by_kernel.setdefault((spec["file"], spec["kernel"]), []).append(spec)
    findings_cache: dict[str, list[dict]] = {}
    verdicts: list[dict] = []
    ir_only: list[dict] = []
    for (path, kernel), specs in sorted(by_kernel.items()):
        if path not in findings_cache:
            findings_cache[path] = static_findings(path)
        span = (specs[0]["def_line"], specs[0]["last_line"])
        mine = [
            f
            for f in findings_cache[path]
            if span[0] <= f["line"] <= span[1] and f["code"] in EVIDENCE
        ]
        explained: set[tuple[str, tuple[int, ...], str]] = set()
        for finding in mine:
            lines = set(range(finding["line"], finding["end_line"] + 1))
            wanted = set(EVIDENCE[finding["code"]])
            confirmed_by, seen_by = [], []
            for spec in specs:
                ir = spec["ir"]
                hits = [
                    f for f in ir["facts"] if _fact_tags(f) & wanted and lines & set(f["lines"])
                ]
                for f in hits:
                    explained.add((spec["key"], tuple(f["lines"]), f["kind"]))
                if hits:
                    confirmed_by.append(spec["key"])
                elif lines & set(ir["lines_seen"]):
                    seen_by.append(spec["key"])
            if confirmed_by:
                status = "confirmed"
            elif seen_by:
                status = "contradicted"
            else:
                status = "not-lowered"
            verdicts.append(
                {
                    "file": path,
                    "kernel": kernel,
                    **finding,
                    "status": status,
                    "confirmed_by": confirmed_by,
                    "contradicted_by": seen_by if not confirmed_by else [],
                    "specialisations": len(specs),
                }
            )
        seen_facts: set[tuple[str, tuple[int, ...]]] = set()
        for spec in specs:
            for fact in spec["ir"]["facts"]:
                ident = (spec["key"], tuple(fact["lines"]), fact["kind"])
                where = (fact["kind"], tuple(fact["lines"]))
                if ident in explained or where in seen_facts:
                    continue
                seen_facts.add(where)
                ir_only.append({"file": path, "kernel": kernel, **fact, "example": spec["key"]})
    return verdicts, ir_only
