"""Syntax helpers every index module shares: names, summands and factors of an
expression, statement walks that do not descend into nested statements.

Pure functions of the `ast` nodes; no fact about kernels is computed here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

MAX_FIXPOINT_ROUNDS = 50
MAX_FIXPOINT_ROUNDS = 50
MAX_HELPER_DEPTH = 8


def dotted(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def call_name(node: ast.AST) -> str | None:
    """The bare callee name of a call: `f` for `f(...)`, `k` for `self.k(...)`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def names_in(node: ast.AST | None) -> set[str]:
    """Every identifier an expression mentions."""
    if node is None:
        return set()
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name):
            found.add(n.id)
        else:
            stack.extend(children(n))
    return found


def additive_terms(node: ast.AST) -> list[ast.AST]:
    """`a + b*c - d` -> [a, b*c, d]: the summands of a pointer expression."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return additive_terms(node.left) + additive_terms(node.right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to"
    ):
        return additive_terms(node.func.value)
    return [node]


def factors(node: ast.AST) -> list[ast.AST]:
    """`(a*b)*c` -> [a, b, c]: the factors of one summand (casts are looked through)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return factors(node.left) + factors(node.right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to"
    ):
        return factors(node.func.value)
    return [node]


def is_literal(node: ast.AST | None, value: object) -> bool:
    return (
        isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value
    )


_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: ast.AST) -> list[ast.AST]:
    """Direct child nodes; a leaner `ast.iter_child_nodes` (the index walks every node)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        # ctx/op/ops hold marker nodes (Load, Add, Lt...) that no rule looks at.
        fields = _FIELDS[type(node)] = tuple(
            f for f in node._fields if f not in ("ctx", "op", "ops")
        )
    out: list[ast.AST] = []
    for f in fields:
        value = getattr(node, f, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def statement_targets(stmt: ast.stmt) -> list[ast.AST]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    return []


def own_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """Nodes of a statement, not descending into nested statements."""
    stack: list[ast.AST] = []
    for name in stmt._fields:
        if name in _BLOCK_FIELDS:
            continue
        value = getattr(stmt, name, None)
        if isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            stack.append(value)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


def all_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included, without visiting expressions."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        for name in _BLOCK_FIELDS:
            block = getattr(stmt, name, None)
            if block:
                for item in reversed(block):
                    if isinstance(
                        item, (ast.excepthandler, getattr(ast, "match_case", ast.excepthandler))
                    ):
                        stack.extend(reversed(item.body))
                    else:
                        stack.append(item)


def child_bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [stmt.body, *[h.body for h in stmt.handlers], stmt.orelse, stmt.finalbody]
    return []


def string_list(node: ast.AST | None) -> list[str | int]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [
            e.value
            for e in node.elts
            if isinstance(e, ast.Constant) and isinstance(e.value, (str, int))
        ]
    return []


def all_params(args: ast.arguments) -> list[ast.arg]:
    return [
        *args.posonlyargs,
        *args.args,
        *([args.vararg] if args.vararg else []),
        *args.kwonlyargs,
    ]
