"""Text edits for fixes, computed from the index's node spans.

Each edit is the smallest change that removes one element with its separator, so two
fixes on the same call overlap only where they touch; the fix engine applies one,
re-parses and re-lints for the rest.
"""

from __future__ import annotations

import ast

from ascend_lint.diagnostics import Edit, Position
from ascend_lint.source import SourceFile


def node_span(source: SourceFile, node: ast.AST) -> tuple[Position, Position]:
    start = Position(node.lineno, source.char_column(node.lineno, node.col_offset))
    end_row = node.end_lineno or node.lineno
    end = Position(end_row, source.char_column(end_row, node.end_col_offset or 0))
    return start, end


def _element_spans(container: ast.AST) -> list[tuple[ast.AST, ast.AST, str | None]]:
    """(first node, last node, key) of each comma-separated element, in source order."""
    out: list[tuple[ast.AST, ast.AST, str | None]] = []
    if isinstance(container, ast.Call):
        out += [(a, a, None) for a in container.args]
        out += [(k, k, k.arg) for k in container.keywords]
    elif isinstance(container, ast.Dict):
        for k, v in zip(container.keys, container.values):
            key = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
            out.append((k if k is not None else v, v, key))
    return sorted(out, key=lambda e: (e[0].lineno, e[0].col_offset))


def _offset(source: SourceFile, row: int, utf8_col: int) -> int:
    return source.offset(row, source.char_column(row, utf8_col))


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def remove_argument(source: SourceFile, container: ast.AST, key: str) -> Edit | None:
    """Delete keyword `key=` from a call, or the `'key': ...` entry from a dict display,
    with the comma that separated it. An element alone on its line goes with the whole
    line, so the remaining layout is untouched."""
    elements = _element_spans(container)
    idx = next((i for i, (_, _, k) in enumerate(elements) if k == key), None)
    if idx is None:
        return None
    text = source.text
    first, last, _ = elements[idx]
    start = _offset(source, first.lineno, first.col_offset)
    end = _offset(source, last.end_lineno, last.end_col_offset)
    comma = _skip_blanks(text, end)
    has_comma = comma < len(text) and text[comma] == ","
    after = comma + 1 if has_comma else end
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", after)
    line_end = len(text) if line_end < 0 else line_end
    rest = text[after:line_end].strip()
    alone_on_line = text[line_start:start].strip() == "" and (rest == "" or rest.startswith("#"))
    is_last = idx == len(elements) - 1
    if alone_on_line and (has_comma or not is_last):
        return _edit(source, line_start, min(line_end + 1, len(text)), "")
    if not is_last:
        nxt = elements[idx + 1][0]
        return _edit(source, start, _offset(source, nxt.lineno, nxt.col_offset), "")
    if idx > 0:
        # Last element: remove the comma before it; a trailing comma after it stays as
        # the previous element's trailing comma.
        prev = elements[idx - 1][1]
        return _edit(
            source,
            _offset(source, prev.end_lineno, prev.end_col_offset),
            end if has_comma else after,
            "",
        )
    return _edit(source, start, after, "")


def _edit(source: SourceFile, start: int, end: int, content: str) -> Edit:
    return Edit(source.position_of(start), source.position_of(end), content)


def remove_statement(source: SourceFile, stmt: ast.stmt) -> Edit:
    """Delete a whole simple statement that sits alone on its lines."""
    start = Position(stmt.lineno, 0)
    end_row = stmt.end_lineno or stmt.lineno
    return Edit(start, Position(end_row + 1, 0), "")
