"""Static findings against the lowered IR: which ones the compiler's output bears out.

The static engine runs in-process on each launched kernel's source file (it reads the
text; nothing is imported), and every finding inside a kernel that was lowered, or in
a helper such a kernel inlines, is judged against the IR facts of its specialisations:

* ``confirmed``: some specialisation shows the predicted fact on the finding's lines;
* ``contradicted``: the finding's lines were lowered, and no specialisation shows it
  (the data to improve a rule);
* ``not-lowered``: no lowered op carries those lines (a constexpr branch that no launch
  took, say), so the IR says nothing;
* ``unverifiable``: an ASC003 branch whose loops are all ``tl.static_range``: the
  compiler unrolls them, so no ``scf.for`` is left around the branch.  It is confirmed
  by the branch repeated (two or more ``scf.if`` of its line outside any loop), and
  otherwise unverifiable, never contradicted.

A finding the compiler answers with a rejection is judged by the rejections: an ASC029
pointer chosen between tensors is ``confirmed`` by a specialisation rejected at its
lines with a pointer chosen at run time, and ``contradicted`` by one that lowered them.

IR facts no static finding predicted are listed as ``ir_only``.

Two rules are judged per launched kernel, not per line (`KERNEL_EVIDENCE`): an ASC026
finding by the ``mix_mode`` the kernel was lowered with (``aiv`` bears out "a
vector-only kernel", ``mix``/``aic`` "a kernel on the cube unit"), an ASC031 row the
front end rejects by a rejection of that kernel whose error is the row's, and contradicted
by a specialisation that lowered the finding's line. The ASC031 rows that are
miscompiles, not rejections, are ``unverifiable`` here.
"""

from __future__ import annotations

from ascend_lint.index import KernelIndex
from ascend_lint.pytest_plugin.linted_files import linted_file
from ascend_lint.rules.asc026.rule import CoreTypeMismatch
from ascend_lint.rules.asc031.rule import LIMITS

# rules judged per launched kernel (see the module doc)
KERNEL_EVIDENCE = ("ASC026", "ASC031")
# the lowered modes that run a program on an AI core (cube unit) or on a vector core
_CUBE_MODES = ("mix", "aic")
_VECTOR_MODES = ("aiv",)
# which IR facts bear out which rule
EVIDENCE = {
    "ASC001": ("strided-load", "strided-store"),
    "ASC002": ("strided-load", "strided-store"),
    "ASC003": ("runtime-branch-in-loop",),
    "ASC005": ("runtime-branch-in-loop+dma",),
    "ASC027": ("discrete-load",),
    "ASC028": ("unaligned-rows",),
    "ASC032": ("int-vector-op",),
}
# which rejections bear out which rule: words of the gate's reason or the compiler's text
REJECTION_EVIDENCE = {
    "ASC029": (
        "pointer chosen at run time",
        "ptr type from different source",
        "AddPtrOp produced by unsupported operation",
    ),
}


def _fact_tags(fact: dict) -> set[str]:
    tags = {fact["kind"]}
    if fact.get("dma_both_sides"):
        tags.add("runtime-branch-in-loop+dma")
    if fact["kind"].startswith("strided") and not fact.get("certain", True):
        tags = {"possible-" + fact["kind"]}
    return tags


def static_findings(path: str) -> list[dict]:
    linted = linted_file(path)
    if linted is None:
        return []
    result, index = linted.result, linted.index
    unrolled = _unrolled_lines(index) if index is not None else set()
    kernel_of = _kernel_evidence(index, result.diagnostics) if index is not None else {}
    findings = []
    for d in result.diagnostics:
        finding = {
            "code": d.code,
            "name": d.name,
            "message": d.message,
            "line": d.start.row,
            "end_line": d.end.row,
            "column": d.start.column + 1,
        }
        if d.code == "ASC003" and d.start.row in unrolled:
            finding["unrolled_loop"] = True
        if (d.code, d.start.row) in kernel_of:
            finding["kernel"], finding["expects"] = kernel_of[(d.code, d.start.row)]
        findings.append(finding)
    return findings


def _kernel_evidence(index: KernelIndex, diagnostics) -> dict[tuple[str, int], tuple[str, str]]:
    """(code, row) -> (kernel, what its lowering should show) for the findings of
    `KERNEL_EVIDENCE`: "vector" or "cube" (the mode an ASC026 finding takes the kernel
    to be lowered in), "rejected" (an ASC031 row the front end rejects), "miscompiled"."""
    wanted = [d for d in diagnostics if d.code in KERNEL_EVIDENCE]
    if not wanted:
        return {}
    found: dict[tuple[str, int], tuple[str, str]] = {}
    axes = {}
    for binding in index.launches:
        axis = CoreTypeMismatch._core_axis(index, binding)
        if axis is not None:
            cube = index.core_kinds.cube_use(binding.callee) is not None
            axes[axis.lineno] = (binding.callee.name, "cube" if cube else "vector")
    for d in wanted:
        row = d.start.row
        if d.code == "ASC026" and row in axes:
            found[(d.code, row)] = axes[row]
        elif d.code == "ASC031":
            kernel = next(
                (
                    k.name
                    for k in index.kernels
                    if k.node.lineno <= row <= (k.node.end_lineno or k.node.lineno)
                ),
                None,
            )
            limit = next((v for v in LIMITS.values() if d.message.startswith(v.use)), None)
            if kernel is not None and limit is not None:
                found[(d.code, row)] = (kernel, "rejected" if limit.rejects else "miscompiled")
    return found


def _unrolled_lines(index: KernelIndex) -> set[int]:
    """Lines of kernel statements whose every enclosing loop is a ``tl.static_range``,
    as the kernel index sees them."""
    lines: set[int] = set()
    for fn in index.kernels:
        for stmt in fn.statements:
            loops = fn.context(stmt).loops
            if loops and all(loop.static for loop in loops):
                lines.add(stmt.lineno)
    return lines


def judge(specialisations: list[dict]) -> tuple[list[dict], list[dict]]:
    """(ir_confirmation, ir_only) over every lowered specialisation in the report.

    A finding inside a launched kernel is judged by that kernel's specialisations; one
    outside every launched kernel (in a `@triton.jit` helper, which the compiler
    inlines, so its IR carries the helper's lines) by every kernel of the file that
    lowered its lines."""
    by_kernel: dict[tuple[str, str], list[dict]] = {}
    for spec in specialisations:
        if spec["status"] == "ok" and spec.get("ir") is not None:
            by_kernel.setdefault((spec["file"], spec["kernel"]), []).append(spec)
    spans: dict[str, list[tuple[int, int]]] = {}
    for (path, _kernel), specs in by_kernel.items():
        spans.setdefault(path, []).append((specs[0]["def_line"], specs[0]["last_line"]))
    every: dict[str, list[dict]] = {}  # each file's static findings, linted once

    def findings_of(path: str) -> list[dict]:
        if path not in every:
            every[path] = static_findings(path)
        return every[path]

    findings_cache: dict[str, list[dict]] = {}
    for path in spans:
        findings_cache[path] = [f for f in findings_of(path) if f["code"] in EVIDENCE]
    rejection_verdicts = _judge_rejections(specialisations, by_kernel, findings_of)
    verdicts: list[dict] = []
    explained: set[tuple[str, tuple[int, ...], str]] = set()
    for (path, kernel), specs in sorted(by_kernel.items()):
        span = (specs[0]["def_line"], specs[0]["last_line"])
        for finding in findings_cache[path]:
            if span[0] <= finding["line"] <= span[1]:
                verdicts.append(_verdict(path, kernel, finding, specs, explained))
    for path, findings in sorted(findings_cache.items()):
        specs = [
            spec
            for (p, _kernel), kernel_specs in sorted(by_kernel.items())
            if p == path
            for spec in kernel_specs
        ]
        for finding in findings:
            if any(a <= finding["line"] <= b for a, b in spans[path]):
                continue
            kernels = sorted({spec["kernel"] for spec in specs if _lowered(finding, spec)})
            verdicts.append(
                _verdict(path, ", ".join(kernels), finding, specs, explained, lowered_only=True)
            )
    verdicts += _judge_kernels(specialisations)
    ir_only: list[dict] = []
    seen_facts: set[tuple[str, str, tuple[int, ...]]] = set()
    for (path, kernel), specs in sorted(by_kernel.items()):
        for spec in specs:
            for fact in spec["ir"]["facts"]:
                ident = (spec["key"], tuple(fact["lines"]), fact["kind"])
                where = (path, fact["kind"], tuple(fact["lines"]))
                if ident in explained or where in seen_facts:
                    continue
                seen_facts.add(where)
                ir_only.append({"file": path, "kernel": kernel, **fact, "example": spec["key"]})
    return verdicts + rejection_verdicts, ir_only


def _judge_rejections(
    specialisations: list[dict], by_kernel: dict[tuple[str, str], list[dict]], findings_of
) -> list[dict]:
    """Findings the compiler answers by rejecting the kernel (see the module doc)."""
    rejected: dict[str, list[dict]] = {}
    for spec in specialisations:
        if spec.get("status") == "rejected":
            rejected.setdefault(spec["file"], []).append(spec)
    verdicts: list[dict] = []
    lowered_files = {path for path, _kernel in by_kernel}
    for path in sorted(set(rejected) | lowered_files):
        findings = [f for f in findings_of(path) if f["code"] in REJECTION_EVIDENCE]
        for finding in findings:
            lines = _lines(finding)
            words = REJECTION_EVIDENCE[finding["code"]]
            confirmed_by = [
                spec["key"]
                for spec in rejected.get(path, [])
                if (spec.get("location") or {}).get("line") in lines
                and any(w in (spec.get("reason", "") + spec.get("message", "")) for w in words)
            ]
            seen_by = [
                spec["key"]
                for (p, _kernel), specs in sorted(by_kernel.items())
                if p == path
                for spec in specs
                if lines & set(spec["ir"]["lines_seen"])
            ]
            status = "confirmed" if confirmed_by else "contradicted" if seen_by else "not-lowered"
            kernels = sorted(
                {spec["kernel"] for spec in rejected.get(path, []) if spec["key"] in confirmed_by}
                | {
                    k
                    for (p, k), specs in by_kernel.items()
                    if p == path and any(s["key"] in seen_by for s in specs)
                }
            )
            verdicts.append(
                {
                    "file": path,
                    "kernel": ", ".join(kernels),
                    **finding,
                    "status": status,
                    "confirmed_by": confirmed_by,
                    "contradicted_by": seen_by if status == "contradicted" else [],
                    "specialisations": len(confirmed_by) + len(seen_by),
                }
            )
    return verdicts


def _lines(finding: dict) -> set[int]:
    return set(range(finding["line"], finding["end_line"] + 1))


def _lowered(finding: dict, spec: dict) -> bool:
    ir = spec["ir"]
    lines = _lines(finding)
    return bool(lines & set(ir["lines_seen"])) or any(lines & set(f["lines"]) for f in ir["facts"])


def _verdict(
    path: str,
    kernel: str,
    finding: dict,
    specs: list[dict],
    explained: set,
    lowered_only: bool = False,
) -> dict:
    """The finding judged by `specs`; with `lowered_only`, by those that lowered its
    lines (a helper's finding is not contradicted by a kernel that never calls it)."""
    if lowered_only:
        specs = [spec for spec in specs if _lowered(finding, spec)]
    lines = _lines(finding)
    wanted = set(EVIDENCE[finding["code"]])
    unrolled = finding.get("unrolled_loop", False)
    confirmed_by, seen_by = [], []
    for spec in specs:
        ir = spec["ir"]
        hits = [f for f in ir["facts"] if _fact_tags(f) & wanted and lines & set(f["lines"])]
        for f in hits:
            explained.add((spec["key"], tuple(f["lines"]), f["kind"]))
        copies = ir.get("branch_copies", {})
        if hits or (unrolled and any(copies.get(str(line), 0) >= 2 for line in lines)):
            confirmed_by.append(spec["key"])
        elif lines & set(ir["lines_seen"]):
            seen_by.append(spec["key"])
    if confirmed_by:
        status = "confirmed"
    elif seen_by:
        status = "unverifiable" if unrolled else "contradicted"
    else:
        status = "not-lowered"
    return {
        "file": path,
        "kernel": kernel,
        **finding,
        "status": status,
        "confirmed_by": confirmed_by,
        "contradicted_by": seen_by if status == "contradicted" else [],
        "specialisations": len(specs),
    }


def _judge_kernels(specialisations: list[dict]) -> list[dict]:
    """The `KERNEL_EVIDENCE` findings of every file a specialisation came from, each
    judged by its kernel's specialisations (lowered or rejected)."""
    by_kernel: dict[tuple[str, str], list[dict]] = {}
    for spec in specialisations:
        if spec.get("status") in ("ok", "rejected"):
            name = spec["kernel"].rsplit(".", 1)[-1]
            by_kernel.setdefault((spec["file"], name), []).append(spec)
    verdicts: list[dict] = []
    for path in sorted({p for p, _ in by_kernel}):
        for finding in static_findings(path):
            if finding["code"] not in KERNEL_EVIDENCE or "kernel" not in finding:
                continue
            specs = by_kernel.get((path, finding["kernel"]), [])
            verdicts.append(_kernel_verdict(path, finding, specs))
    return verdicts


def _kernel_verdict(path: str, finding: dict, specs: list[dict]) -> dict:
    expects = finding["expects"]
    lowered = [s for s in specs if s["status"] == "ok" and s.get("ir") is not None]
    confirmed_by, seen_by = [], []
    if expects in ("vector", "cube"):
        modes = _VECTOR_MODES if expects == "vector" else _CUBE_MODES
        for spec in lowered:
            mode = spec["ir"].get("mix_mode")
            if mode in modes:
                confirmed_by.append(spec["key"])
            elif mode is not None:
                seen_by.append(spec["key"])
    elif expects == "rejected":
        signature = ("tensor.extract", "PtrOffsetInfo")
        for spec in specs:
            if spec["status"] == "rejected" and any(
                s in spec.get("message", "") for s in signature
            ):
                confirmed_by.append(spec["key"])
        lines = _lines(finding)
        seen_by = [s["key"] for s in lowered if lines & set(s["ir"]["lines_seen"])]
    if confirmed_by:
        status = "confirmed"
    elif expects == "miscompiled" and lowered:
        status = "unverifiable"
    elif seen_by:
        status = "contradicted"
    else:
        status = "not-lowered"
    return {
        "file": path,
        "kernel": finding["kernel"],
        **finding,
        "status": status,
        "confirmed_by": confirmed_by,
        "contradicted_by": seen_by if status == "contradicted" else [],
        "specialisations": len(specs),
    }
