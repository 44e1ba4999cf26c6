"""The clamp that ASC019 (masked-negative-offset) and ASC024 (where-arm-load) both write:
`tl.maximum(use, 0)` around each place an address spells a quantity that can be
negative (`index.bounds.occurrences` finds them), the access's mask or select kept."""

from __future__ import annotations

import ast

from ascend_lint.codemods import node_offsets
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import LANGUAGE, TRITON
from ascend_lint.index.linear import Occurrence
from ascend_lint.index.syntax import show
from ascend_lint.rules._base import RuleContext

# Summands that keep their text inside a sum without parentheses.
_SUMMAND_NODES = (ast.Name, ast.Constant, ast.Call, ast.Attribute, ast.Subscript, ast.UnaryOp)
_TIGHT_OPS = (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def mask_of(call: ast.Call, position: int) -> ast.AST | None:
    """The `mask` of a `tl.load` (position 1) or `tl.store` (position 2), or None."""
    for kw in call.keywords:
        if kw.arg == "mask":
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _grouping(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of `text[start:end]` with the grouping parentheses right around it, if
    any: the fix's call brackets the expression already. Not a call's or a subscript's
    own (`f(o - 1)` keeps its parentheses)."""
    before, after = start, end
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    while after < len(text) and text[after] in " \t":
        after += 1
    if before == 0 or text[before - 1] != "(" or after >= len(text) or text[after] != ")":
        return start, end
    outside = before - 1
    while outside > 0 and text[outside - 1] in " \t":
        outside -= 1
    if outside > 0 and (text[outside - 1].isalnum() or text[outside - 1] in "_)]}\"'"):
        return start, end  # `f(`: a call's parentheses
    return before - 1, after + 1


def language_prefix(ctx: RuleContext) -> str | None:
    """How the module spells `triton.language`, for the clamp the fix writes."""
    modules = ctx.index.aliases.modules
    spelled = sorted(name for name, qual in modules.items() if qual == LANGUAGE)
    if "tl" in spelled:
        return "tl"
    if spelled:
        return spelled[0]
    triton = sorted(name for name, qual in modules.items() if qual == TRITON)
    return f"{triton[0]}.language" if triton else None


def _source(ctx: RuleContext, node: ast.AST) -> str:
    if getattr(node, "end_col_offset", None) is None:
        return show(node)
    start, end = node_offsets(ctx.source, node)
    text = ctx.source.text[start:end]
    return text if "\n" not in text else show(node)


def _summed(ctx: RuleContext, terms: tuple[tuple[ast.AST, int], ...]) -> str:
    """Signed summands as one sum: `o`, `- 1` -> `o - 1`."""
    parts = []
    for node, sign in terms:
        text = _source(ctx, node)
        tight = isinstance(node, _SUMMAND_NODES) or (
            isinstance(node, ast.BinOp) and isinstance(node.op, _TIGHT_OPS)
        )
        if not tight:
            text = f"({text})"
        if not parts:
            parts.append(text if sign > 0 else f"-{text}")
        else:
            parts.append(f"{'+' if sign > 0 else '-'} {text}")
    return " ".join(parts)


def occurrence_text(ctx: RuleContext, occurrence: Occurrence) -> str:
    """The text of what an occurrence reads, for a message: `o - 1` of `x + o - 1`."""
    if occurrence.terms is None:
        return _source(ctx, occurrence.node)
    return _summed(ctx, occurrence.terms)


def clamp_fix(ctx: RuleContext, uses: list[Occurrence], use: str) -> Fix | None:
    """Clamp every unclamped use: `tl.maximum(use, 0)` for a whole expression, and for
    summands of a sum the sum of the others plus the clamp of theirs. None when a use
    has no source span or the edits would overlap or not parse."""
    prefix = language_prefix(ctx)
    if prefix is None:
        return None
    spans: list[tuple[int, int, Occurrence]] = []
    for occurrence in uses:
        node = occurrence.node
        if getattr(node, "lineno", None) is None or getattr(node, "end_col_offset", None) is None:
            return None
        start, end = node_offsets(ctx.source, node)
        spans.append((start, end, occurrence))
    spans.sort(key=lambda s: (s[0], -s[1]))
    kept: list[tuple[int, int, Occurrence]] = []
    for start, end, occurrence in spans:
        if kept and start < kept[-1][1]:
            if end <= kept[-1][1]:
                continue  # inside a use already clamped
            return None
        kept.append((start, end, occurrence))
    text = ctx.source.text
    edits = []
    for start, end, occurrence in reversed(kept):
        if occurrence.terms is None:
            clamp = f"{prefix}.maximum({text[start:end]}, 0)"
            # `(o - 1) * D` -> `tl.maximum(o - 1, 0) * D`
            start, end = _grouping(text, start, end)
        else:  # `x + o - 1` -> `x + tl.maximum(o - 1, 0)`
            kept_terms = _summed(ctx, occurrence.rest)
            clamp = f"{kept_terms} + {prefix}.maximum({_summed(ctx, occurrence.terms)}, 0)"
        # Each clamp replaces a whole expression (or its grouping brackets), so the
        # file parses when the replacement does; the fix loop re-parses the whole file
        # before writing it. (Parsing the file here, per finding, was most of the
        # rule's time.)
        try:
            ast.parse(clamp, mode="eval")
        except SyntaxError:
            return None
        edits.append(Edit(ctx.source.position_of(start), ctx.source.position_of(end), clamp))
    return Fix(
        Applicability.UNSAFE,
        f"Clamp `{use}` in the address",
        tuple(reversed(edits)),
    )
