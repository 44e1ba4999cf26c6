"""Applying fixes: text edits, overlap resolution, re-parse check, repeat until stable."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.diagnostics import Applicability, Diagnostic, Fix
from ascend_lint.engine import lint_source
from ascend_lint.source import SourceFile

MAX_ROUNDS = 10  # fixes converge in one or two rounds; this bounds a pathological case


@dataclass
class FixOutcome:
    text: str
    applied: list[Diagnostic]
    error: str | None = None  # a fix that broke parsing: the file is left as it was


def apply_edits(source: SourceFile, fixes: list[Fix]) -> tuple[str, list[int]]:
    """Apply non-overlapping fixes; a fix that overlaps an earlier one waits for the next round."""
    spans = []
    for i, fix in enumerate(fixes):
        edits = sorted(
            (
                source.offset(e.start.row, e.start.column),
                source.offset(e.end.row, e.end.column),
                e.content,
            )
            for e in fix.edits
        )
        spans.append((edits[0][0], edits[-1][1], i, edits))
    spans.sort()
    chosen: list[tuple[int, int, int, list]] = []
    last_end = -1
    for start, end, i, edits in spans:
        if start < last_end or (start == last_end and start == end and chosen):
            continue
        chosen.append((start, end, i, edits))
        last_end = end
    text = source.text
    for _start, _end, _i, edits in reversed(chosen):
        for s, e, content in reversed(edits):
            text = text[:s] + content + text[e:]
    return text, [i for *_, i, _ in chosen]


def fix_source(
    path: str, raw: bytes, codes: frozenset[str], allowed: frozenset[Applicability]
) -> FixOutcome:
    source = SourceFile.from_bytes(path, raw)
    original = source.text
    applied: list[Diagnostic] = []
    for _ in range(MAX_ROUNDS):
        result = lint_source(path, source.text.encode(source.encoding), codes)
        fixable = [
            d for d in result.diagnostics if d.fix is not None and d.fix.applicability in allowed
        ]
        if not fixable:
            break
        text, used = apply_edits(source, [d.fix for d in fixable])
        if text == source.text:
            break
        try:
            ast.parse(text)
        except SyntaxError as exc:
            rules = ", ".join(sorted({fixable[i].code for i in used}))
            return FixOutcome(
                original,
                [],
                f"a fix by {rules} produced invalid code ({exc.msg}); file left unchanged",
            )
        applied += [fixable[i] for i in used]
        source = SourceFile(
            path, text.encode(source.encoding), text, source.encoding, source.has_bom
        )
    return FixOutcome(source.text, applied)
