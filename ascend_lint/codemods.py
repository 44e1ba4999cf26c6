"""Text edits for fixes, computed from the index's node spans.

Each edit is the smallest change that removes one element with its separator, so two
fixes on the same call overlap only where they touch; the fix engine applies one,
re-parses and re-lints for the rest.
"""

from __future__ import annotations

import ast
import functools

from ascend_lint.diagnostics import Edit, Position
from ascend_lint.source import SourceFile, common_ends


def node_span(source: SourceFile, node: ast.AST) -> tuple[Position, Position]:
    start = Position(node.lineno, source.char_column(node.lineno, node.col_offset))
    end_row = node.end_lineno or node.lineno
    end = Position(end_row, source.char_column(end_row, node.end_col_offset or 0))
    return start, end


def _offset(source: SourceFile, row: int, utf8_col: int) -> int:
    return source.offset(row, source.char_column(row, utf8_col))


def node_offsets(source: SourceFile, node: ast.AST) -> tuple[int, int]:
    """Where a node's text starts and ends in `source.text` (code-point offsets)."""
    end_row = node.end_lineno or node.lineno
    return (
        _offset(source, node.lineno, node.col_offset),
        _offset(source, end_row, node.end_col_offset or 0),
    )


def reindent(text: str, first: str, extra: str) -> str:
    """A statement's text (first line without its indentation, later lines with theirs)
    one block deeper: `first` before the first line, `extra` added to the others."""
    lines = text.split("\n")
    return "\n".join([first + lines[0]] + [extra + ln if ln.strip() else ln for ln in lines[1:]])


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


_SPACE = " \t\r\n\\\f"


def _widen(text: str, start: int, end: int, lo: int, hi: int) -> tuple[int, int]:
    """Grow [start, end) over parentheses that wrap it (`(x)`, `"k": (4)`): `ast` spans
    leave them out. `lo`/`hi` are the container's own brackets, never taken."""
    while True:
        s = start - 1
        while s > lo and text[s] in _SPACE:
            s -= 1
        e = end
        while e < hi and text[e] in _SPACE:
            e += 1
        if not (lo < s and e < hi and text[s] == "(" and text[e] == ")"):
            return start, end
        start, end = s, e + 1


def _node_offsets(source: SourceFile, node: ast.AST) -> tuple[int, int]:
    return (
        _offset(source, node.lineno, node.col_offset),
        _offset(source, node.end_lineno or node.lineno, node.end_col_offset or 0),
    )


def _element_spans(source: SourceFile, container: ast.AST) -> list[tuple[int, int, str | None]]:
    """(start, end, key) text offsets of each comma-separated element, in source order,
    with the parentheses around it and a dict entry's `**` included."""
    text = source.text
    lo, hi = _node_offsets(source, container)
    hi -= 1  # the closing bracket
    out: list[tuple[int, int, str | None]] = []
    if isinstance(container, ast.Call):
        lo = text.find("(", _node_offsets(source, container.func)[1])
        for node, key in [(a, None) for a in container.args] + [
            (k, k.arg) for k in container.keywords
        ]:
            out.append((*_widen(text, *_node_offsets(source, node), lo, hi), key))
    elif isinstance(container, ast.Dict):
        for k, v in zip(container.keys, container.values):
            v_start, v_end = _widen(text, *_node_offsets(source, v), lo, hi)
            if k is None:  # `**other`
                start = v_start
                while start > lo and text[start - 1] in _SPACE:
                    start -= 1
                start = start - 2 if text[start - 2 : start] == "**" else v_start
                out.append((start, v_end, None))
                continue
            start = _widen(text, *_node_offsets(source, k), lo, hi)[0]
            key = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
            out.append((start, v_end, key))
    return sorted(out)


def _removal_span(
    text: str, elements: list[tuple[int, int, str | None]], idx: int
) -> tuple[int, int]:
    """The text to delete to remove element `idx` of a comma list, with its comma."""
    start, end, _ = elements[idx]
    comma = _skip_blanks(text, end)
    has_comma = comma < len(text) and text[comma] == ","
    after = comma + 1 if has_comma else end
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", after)
    line_end = len(text) if line_end < 0 else line_end
    rest = text[after:line_end].strip()
    alone_on_line = text[line_start:start].strip() == "" and (rest == "" or rest.startswith("#"))
    is_last = idx == len(elements) - 1
    if alone_on_line and (has_comma or not is_last or idx == 0):
        return line_start, min(line_end + 1, len(text))
    if not is_last:
        return start, elements[idx + 1][0]
    if idx > 0:
        # Last element: remove the comma before it; a trailing comma after it stays as
        # the previous element's trailing comma.
        return elements[idx - 1][1], end if has_comma else after
    return start, after


def remove_argument(source: SourceFile, container: ast.AST, key: str) -> Edit | None:
    """Delete keyword `key=` from a call, or the `'key': ...` entry from a dict display,
    with the comma that separated it. An element alone on its line goes with the whole
    line, so the remaining layout is untouched."""
    return remove_arguments(source, container, (key,))


def remove_arguments(source: SourceFile, container: ast.AST, keys) -> Edit | None:
    """Delete every keyword of `keys` from a call (or entry from a dict display) as
    `remove_argument` would one after the other, as one edit. Findings on the same call
    share it, so fixing them all takes one round (the one-by-one edits of two neighbours
    overlap at the comma between them)."""
    elements = _element_spans(source, container)
    return _remove_elements(
        source, elements, [i for i, (_, _, k) in enumerate(elements) if k in keys]
    )


def remove_arguments_each(
    source: SourceFile, container: ast.AST, keys
) -> tuple[Edit | None, dict[str, Edit | None]]:
    """`remove_arguments` of all `keys` and `remove_argument` of each key, from one look
    at the container's elements."""
    elements = _element_spans(source, container)

    def without(wanted) -> Edit | None:
        return _remove_elements(
            source, elements, [i for i, (_, _, k) in enumerate(elements) if k in wanted]
        )

    every = without(keys)
    if len(keys) == 1:  # the one key's edit is the edit of them all
        return every, dict.fromkeys(keys, every)
    return every, {key: without((key,)) for key in keys}


def remove_list_elements(source: SourceFile, nodes: list[ast.AST], drop: list[int]) -> Edit | None:
    """Delete elements `drop` (indices) of a comma-separated list whose elements are
    `nodes` (a list display's items, an import's names), each with its comma, as one edit:
    an element alone on its line goes with the whole line."""
    elements = [(*_node_offsets(source, node), str(i)) for i, node in enumerate(nodes)]
    return _remove_elements(source, elements, drop)


def _remove_elements(
    source: SourceFile, elements: list[tuple[int, int, str | None]], wanted: list[int]
) -> Edit | None:
    text = source.text
    if not wanted:
        return None
    # Work on the whole lines around the container: removals look at line boundaries.
    lo = text.rfind("\n", 0, elements[0][0]) + 1
    hi = text.find("\n", elements[-1][1])
    hi = len(text) if hi < 0 else hi + 1
    window = text[lo:hi]
    spans = [(s - lo, e - lo, k) for s, e, k in elements]
    # Each removal shifts the spans after it: find the element again by its identity.
    spans = [(s, e, (i, k)) for i, (s, e, k) in enumerate(spans)]
    for target in wanted:
        idx = next(i for i, (_, _, (j, _k)) in enumerate(spans) if j == target)
        s, e = _removal_span(window, spans, idx)
        window = window[:s] + window[e:]
        cut = e - s
        spans = [
            (a - cut if a >= e else a, b - cut if b >= e else b, k)
            for j, (a, b, k) in enumerate(spans)
            if j != idx
        ]
    prefix, suffix = common_ends(text[lo:hi], window)
    return text_edit(source, lo + prefix, hi - suffix, window[prefix : len(window) - suffix])


def remove_comprehension_clauses(
    source: SourceFile, comp: ast.ListComp, clauses: list[ast.comprehension]
) -> list[Edit] | None:
    """Delete `for` clauses (without `if`s) from a list comprehension: a clause on lines
    of its own as those lines (so a comment on the line before, `for GS in [1, 8]  #
    note`, stays with its clause), any other from the end of what precedes it to the end
    of its iterable, so with none left it is the display `[elt]`. Edits only outside the
    element, so a fix may edit the element too. None when the text is not one of these
    shapes (`async`, a comment before a clause that shares its lines)."""
    text = source.text
    gone = {id(c) for c in clauses}
    spans: list[list[int]] = []
    lo, hi = _node_offsets(source, comp)
    hi -= 1  # the closing bracket
    previous_end = _widen(text, *_node_offsets(source, comp.elt), lo, hi)[1]
    ends = [
        _widen(text, *_node_offsets(source, g.ifs[-1] if g.ifs else g.iter), lo, hi)[1]
        for g in comp.generators
    ]
    for i, clause in enumerate(comp.generators):
        if id(clause) in gone:
            target_start = _widen(text, *_node_offsets(source, clause.target), lo, hi)[0]
            gap = text[previous_end:target_start]
            whole = _own_lines(text, gap, target_start, ends[i])
            if whole is not None:
                spans.append(whole)
            elif gap.strip() == "for":
                spans.append([previous_end, ends[i]])
            else:
                return None  # `async`, a comment before a clause sharing its lines
        previous_end = ends[i]
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [text_edit(source, start, end, "") for start, end in merged]


def _own_lines(text: str, gap: str, target_start: int, end: int) -> list[int] | None:
    """[start, end) of the whole lines of a `for` clause whose gap before its target
    holds comments (on earlier lines) and whose lines hold nothing else but a comment
    after it; None otherwise."""
    lines = gap.split("\n")
    if len(lines) < 2 or lines[-1].strip() != "for":
        return None
    if any(ln.strip() and not ln.strip().startswith("#") for ln in lines[1:-1]):
        return None
    first = lines[0].strip()
    if first and not first.startswith("#"):
        return None
    line_start = target_start - len(lines[-1])
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    rest = text[end:line_end].strip()
    if rest and not rest.startswith("#"):
        return None
    return [line_start, min(line_end + 1, len(text))]


def replace_node(source: SourceFile, node: ast.AST, content: str) -> Edit:
    """Replace the text of one node (a keyword, a value, an expression)."""
    return text_edit(source, *_node_offsets(source, node), content)


def node_text(source: SourceFile, node: ast.AST) -> str:
    start, end = _node_offsets(source, node)
    return source.text[start:end]


def append_after(source: SourceFile, node: ast.AST, content: str) -> Edit:
    """Insert `content` right after a node (`.to(tl.float16)` after a call)."""
    end = _node_offsets(source, node)[1]
    return text_edit(source, end, end, content)


def nest_bool_op(source: SourceFile, node: ast.BoolOp) -> Edit:
    """`a or b or c or d` -> `((a or b) or c) or d`: the same operands and operators in
    the same order, grouped left to right, so precedence, short-circuiting, comments and
    line breaks inside the expression are kept (only parentheses are added). Operands
    already in parentheses keep them: the groups open before the first one's `(`."""
    text = source.text
    lo, hi = _node_offsets(source, node)
    ends = [_widen(text, *_node_offsets(source, v), lo - 1, hi)[1] for v in node.values]
    start = _widen(text, *_node_offsets(source, node.values[0]), lo - 1, hi)[0]
    pieces = ["(" * (len(node.values) - 2), text[start : ends[1]]]
    for previous, end in zip(ends[1:-2], ends[2:-1]):
        pieces += [")", text[previous:end]]
    pieces += [")", text[ends[-2] : hi]]
    return text_edit(source, start, hi, "".join(pieces))


def text_edit(source: SourceFile, start: int, end: int, content: str) -> Edit:
    """Replace the text between two code-point offsets of `source.text`."""
    return Edit(source.position_of(start), source.position_of(end), content)


def remove_statement(source: SourceFile, stmt: ast.stmt, alone: bool | None = None) -> Edit:
    """Delete a simple statement that starts its line: the whole line when nothing else
    is on it, only `stmt;` when another statement follows on the line, and `pass` in its
    place when it is the only statement of a block (an empty block does not parse).
    `alone`: whether it is, when the caller knows (else the file is parsed to see)."""
    text = source.text
    start, end = _node_offsets(source, stmt)
    after = _skip_blanks(text, end)
    if text.startswith(";", after):
        end = after + 1
        after = _skip_blanks(text, end)
    if after < len(text) and text[after] not in "#\r\n":  # `stmt; other()`
        return text_edit(source, start, after, "")
    if _only_statement_in_block(source.text, stmt) if alone is None else alone:
        return text_edit(source, start, end, "pass")
    end_row = stmt.end_lineno or stmt.lineno
    line_end = source.offset(end_row + 1, 0) if end_row < len(source.lines) else len(text)
    return text_edit(source, source.offset(stmt.lineno, 0), line_end, "")


@functools.lru_cache(maxsize=4)
def _block_sizes(text: str) -> dict[tuple[int, int], int]:
    """(row, col) of each statement in a compound statement's block -> the block's length."""
    sizes: dict[tuple[int, int], int] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module):
            continue  # an empty module is fine
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                for st in block:
                    if isinstance(st, ast.stmt):
                        sizes[(st.lineno, st.col_offset)] = len(block)
    return sizes


def _only_statement_in_block(text: str, stmt: ast.stmt) -> bool:
    try:
        return _block_sizes(text).get((stmt.lineno, stmt.col_offset)) == 1
    except (SyntaxError, ValueError, RecursionError):
        return False


def transposed_offset(
    expr: ast.AST, length: str, is_heads, is_length, pointer: str | None = None
) -> str | None:
    """Rewrite [B, T, HV] address math for [B, HV, T] storage, term by term:

    * the bare head index (`i_h`) becomes `i_h * <length>`;
    * a term scaled by the head count but not by a length (`bos * HV`, `t * HV`) loses
      the head count: time is now the unit-stride axis;
    * a term scaled by both (`i_b * T * HV`, a batch offset) is the same in both layouts.

    Returns None when the expression is not a plain sum of that shape.
    """
    terms = signed_terms(expr, "+")
    heads = [
        i
        for i, (_, t) in enumerate(terms)
        if isinstance(t, ast.Name)
        and t.id != pointer
        and not is_heads(t.id)
        and not is_length(t.id)
    ]
    if len(heads) != 1:
        return None
    out = []
    for i, (sign, term) in enumerate(terms):
        parts = product_factors(term)
        names = [p.id for p in parts if isinstance(p, ast.Name)]
        if isinstance(term, ast.Name) and term.id == pointer:
            text = term.id
        elif i == heads[0]:
            text = f"{term.id} * {length}"
        elif any(is_heads(n) for n in names) and not any(is_length(n) for n in names):
            kept = [p for p in parts if not (isinstance(p, ast.Name) and is_heads(p.id))]
            text = " * ".join(factor_text(p) for p in kept) if kept else "1"
        else:
            text = ast.unparse(term)
        out.append((sign, text))
    first_sign, first = out[0]
    result = first if first_sign == "+" else f"-{first}"
    for sign, text in out[1:]:
        result += f" {sign} {text}"
    return result


def signed_terms(node: ast.AST, sign: str = "+") -> list[tuple[str, ast.AST]]:
    """The summands of a sum with their signs: `a - (b - c)` -> +a, -b, +c."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        right_sign = sign if isinstance(node.op, ast.Add) else ("-" if sign == "+" else "+")
        return signed_terms(node.left, sign) + signed_terms(node.right, right_sign)
    return [(sign, node)]


def product_factors(node: ast.AST) -> list[ast.AST]:
    """Factors of a product; casts are not looked through (a rewrite must keep them)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return product_factors(node.left) + product_factors(node.right)
    return [node]


def factor_text(node: ast.AST) -> str:
    """A factor as source, parenthesised when it is a sum."""
    text = ast.unparse(node)
    return (
        f"({text})" if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Mult) else text
    )
