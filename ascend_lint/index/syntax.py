"""Syntax helpers every index module shares: names, summands and factors of an
expression, statement walks that do not descend into nested statements.

Pure functions of the `ast` nodes; no fact about kernels is computed here.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

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


def property_key(node: ast.AST) -> object | None:
    """The constant key a read of a mapping or an object names: `props["k"]`,
    `props.k`, `props.get("k", d)`, `getattr(props, "k")` -> "k"; None otherwise."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        name, args = call_name(node.func), node.args
        key = (
            args[0]
            if name == "get" and args
            else args[1]
            if name == "getattr" and len(args) >= 2
            else None
        )
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    return None


def names_in(node: ast.AST | None) -> set[str]:
    """Every identifier an expression mentions (a set the caller may change)."""
    return set(frozen_names(node))


def frozen_names(node: ast.AST | None) -> frozenset[str]:
    """`names_in` without the copy, for callers that only read it (remembered on the
    node: the index and the rules ask this of the same expressions many times)."""
    if node is None:
        return frozenset()
    if type(node) is ast.Name:
        return frozenset((node.id,))
    known = getattr(node, _NAMES, None)
    if known is None:
        found: set[str] = set()
        stack = [node]
        while stack:
            n = stack.pop()
            kind = type(n)
            if kind is ast.Name:
                found.add(n.id)
            elif kind is not ast.Constant:
                stack.extend(children(n))
        known = frozenset(found)
        setattr(node, _NAMES, known)
    return known


_NAMES = "_ascend_lint_names"


def remember_names(node: ast.AST, names: frozenset[str]) -> None:
    """Record what `frozen_names(node)` would find, for a node the index builds from
    parts whose names are already known (`x += y` read as `x + y`)."""
    setattr(node, _NAMES, names)


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
# Nodes with no child worth visiting: walks yield them but do not look inside.
LEAVES = frozenset({ast.Name, ast.Constant})
_FIELDS: dict[type, tuple[str, ...]] = {}
# Fields that never hold a node: identifiers (single, or a list of them: the keyword
# names of a class pattern `case P(x=0)`), flags, numbers, and the marker nodes of
# ctx/op/ops (Load, Add, Lt...) that no rule looks at.
_SCALAR_FIELDS = frozenset(
    {"id", "attr", "arg", "name", "module", "level", "asname", "kind", "type_comment"}
    | {"is_async", "simple", "conversion", "ctx", "op", "ops", "kwd_attrs", "rest"}
)
# Node types whose lists may hold None (`{**d}` keys, keyword-only defaults) or strings.
_MIXED_LISTS = frozenset({ast.Dict, ast.arguments, ast.Global, ast.Nonlocal})


def children(node: ast.AST) -> list[ast.AST]:
    """Direct child nodes; a leaner `ast.iter_child_nodes` (the index walks every node)."""
    kind = type(node)
    # The kinds most kernel code is made of, without the generic field loop below
    # (the same children in the same order).
    if kind is ast.Attribute or kind is ast.keyword:
        return [node.value]
    if kind is ast.BinOp:
        return [node.left, node.right]
    if kind is ast.Call:
        return [node.func, *node.args, *node.keywords]
    if kind is ast.Subscript:
        return [node.value, node.slice]
    if kind is ast.Tuple or kind is ast.List:
        return list(node.elts)
    if kind is ast.Name or kind is ast.Constant:
        return []
    if kind is ast.Slice:
        return [part for part in (node.lower, node.upper, node.step) if part is not None]
    if kind is ast.Compare:
        return [node.left, *node.comparators]
    if kind is ast.Assign:
        return [*node.targets, node.value]
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f for f in node._fields if f not in _SCALAR_FIELDS)
    out: list[ast.AST] = []
    if kind in _MIXED_LISTS:
        for f in fields:
            value = getattr(node, f, None)
            if isinstance(value, ast.AST):
                out.append(value)
            elif isinstance(value, list):
                out.extend(v for v in value if isinstance(v, ast.AST))
        return out
    for f in fields:
        value = getattr(node, f, None)
        if value is None:
            continue
        if type(value) is list:
            out.extend(value)
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def statement_targets(stmt: ast.stmt) -> list[ast.AST]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    return []


def show(node: ast.AST) -> str:
    """Source text of an expression for a message (`...` for the index's marker nodes)."""
    try:
        return ast.unparse(node)
    except Exception:
        return "..."


def int_literal(node: ast.AST) -> int | None:
    """`3`, `-1`: the value of an integer literal, negated as often as written."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_literal(node.operand)
        return -inner if inner is not None else None
    return None


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk` (same breadth-first order) without the context and operator marker
    nodes (`Load`, `Add`) and without looking inside names and constants."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        if type(node) not in LEAVES:
            todo.extend(children(node))
        yield node


def mentioned_texts(node: ast.AST) -> Iterator[str]:
    """The names, attribute names and strings written in an expression: what a test
    that looks at a platform or a SoC by its spelling reads."""
    for n in walk(node):
        if isinstance(n, ast.Name):
            yield n.id
        elif isinstance(n, ast.Attribute):
            yield n.attr
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            yield n.value


def own_nodes(stmt: ast.stmt) -> tuple[ast.AST, ...]:
    """Nodes of a statement, not descending into nested statements. The kernel scan and
    several rules each visit every statement: the nodes are gathered once and kept on
    the statement (each node is on exactly one statement's list)."""
    cached = getattr(stmt, "_own_nodes", None)
    if cached is None:
        cached = stmt._own_nodes = _own_nodes(stmt)
    return cached


# Statement type -> its fields that are not blocks (value, test, targets...).
_EXPRESSION_FIELDS: dict[type, tuple[str, ...]] = {}


def statement_roots(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement holds directly (value, test, targets, iter...), not
    its nested blocks: the roots of `own_nodes`."""
    roots: list[ast.AST] = []
    fields = _EXPRESSION_FIELDS.get(type(stmt))
    if fields is None:
        fields = _EXPRESSION_FIELDS[type(stmt)] = tuple(
            f for f in stmt._fields if f not in _BLOCK_FIELDS
        )
    for name in fields:
        value = getattr(stmt, name, None)
        if isinstance(value, list):
            roots.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            roots.append(value)
    return roots


def _own_nodes(stmt: ast.stmt) -> tuple[ast.AST, ...]:
    roots = statement_roots(stmt)
    found: list[ast.AST] = []  # a list, not a generator: every statement is gathered
    # Depth first from the last root, as one stack over all of them would pop them.
    # The names each root mentions are remembered on it on the way (what `frozen_names`
    # would find): the kernel index asks them of assigned values and `if` tests next,
    # and would otherwise walk those subtrees a second time.
    for root in reversed(roots):
        names: set[str] = set()
        stack = [root]
        while stack:
            node = stack.pop()
            found.append(node)
            kind = type(node)
            if kind is ast.Name:
                names.add(node.id)
            elif kind is not ast.Constant:
                stack += children(node)
        if type(root) is not ast.Name:
            setattr(root, _NAMES, frozenset(names))
    return tuple(found)


# Block items that are not statements but hold a body of them: `except` and `case`.
_CLAUSES = (ast.excepthandler, getattr(ast, "match_case", ast.excepthandler))


def all_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included, without visiting expressions: depth first,
    in source order (a body before its handlers, `else` and `finally`)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        blocks = _STATEMENT_BLOCKS.get(type(stmt))
        if blocks is None:
            blocks = _STATEMENT_BLOCKS[type(stmt)] = _block_fields(stmt)
        for name in blocks:
            for item in reversed(getattr(stmt, name)):
                if isinstance(item, _CLAUSES):
                    stack.extend(reversed(item.body))
                else:
                    stack.append(item)


# Statement type -> its fields that hold a block, last first (the order they are pushed
# on a stack to come off in source order); empty for simple statements, most of them.
_STATEMENT_BLOCKS: dict[type, tuple[str, ...]] = {}


def _block_fields(stmt: ast.stmt) -> tuple[str, ...]:
    return tuple(reversed([f for f in stmt._fields if f in _BLOCK_FIELDS]))


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


# Expressions whose evaluation can do nothing but produce a value (Ruff's model for F841:
# a call, a subscript, a comprehension or operator overloading may run user code).
_LITERALS = (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.JoinedStr)


def free_of_effects(expr: ast.AST) -> bool:
    """Whether evaluating `expr` can do nothing but produce a value (no call, subscript,
    comprehension, or operator that user code could overload)."""
    for node in walk(expr):
        if isinstance(
            node,
            (
                ast.Call,
                ast.Subscript,
                ast.Await,
                ast.Yield,
                ast.YieldFrom,
                ast.NamedExpr,
                ast.ListComp,
                ast.SetComp,
                ast.DictComp,
                ast.GeneratorExp,
            ),
        ):
            return False
        if isinstance(node, ast.BinOp) and not (_literal(node.left) and _literal(node.right)):
            return False
    return True


def _literal(node: ast.AST) -> bool:
    """A display or constant, or a choice between two (`[] if c else [8]`): an operand
    whose type is known, so an operator on it runs no user code."""
    if isinstance(node, ast.IfExp):
        return _literal(node.body) and _literal(node.orelse)
    return isinstance(node, _LITERALS)


def expr_key(node: ast.AST | None):
    """A hashable key equal for two expressions written the same (positions and context
    aside): what `ast.dump` compares, without its recursive closure, which is a
    reference cycle per call that keeps the lint's tree alive until the cycle collector
    runs."""
    if node is None or isinstance(node, (str, int, float, complex, bool, bytes)):
        return node
    if isinstance(node, list):
        return tuple(expr_key(n) for n in node)
    if isinstance(node, ast.expr_context):
        return None
    if not isinstance(node, ast.AST):
        return repr(node)
    return (type(node).__name__, *(expr_key(getattr(node, f, None)) for f in node._fields))
