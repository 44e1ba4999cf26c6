"""Launches and bindings, the data: host functions (their assignments, `kw['K'] = v`
items, `ctx.attr = v` stores and returns, each with the if-guards around it), the
`CallBinding` of a launch or a kernel-to-helper call, and how a call's arguments bind
to the callee's parameters.

Binding follows positional and keyword arguments, `**dict` splats (literals, `dict(...)`,
`kw['KEY'] = v`) and one level of launch helper (`_launch(kernel, kernel_kwargs=dict(...))`).
Which launches and helper calls there are is found by the core facts (`core`); what a
host value holds is `host`.

Depends on: `kernels` (the callee's parameters) and `syntax` only; no facts object.
Costs: one pass over each host function's statements (`scan_host`), one binding per call.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field

from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.syntax import MAX_HELPER_DEPTH


@dataclass
class CallBinding:
    """A call to a kernel or helper, its arguments bound to the callee's parameters."""

    call: ast.Call
    callee: JitFunction
    args: dict[str, list[ast.AST]]  # parameter -> argument expressions (several sources possible)
    host: HostFunction | None  # where the launch happens (None for kernel-to-helper calls)
    caller: JitFunction | None = None  # the calling kernel, for kernel-to-helper calls


@dataclass
class HostFunction:
    """A plain Python function (or the module body) that may launch kernels."""

    node: ast.AST
    name: str
    params: list[str]
    assignments: dict[str, list[ast.AST]] = field(default_factory=dict)
    key_assignments: dict[str, list[tuple[str, ast.AST, ast.AST]]] = field(default_factory=dict)
    # ^ dict variable -> [(key, value, the whole statement)] for `kw['KEY'] = value`
    guards: dict[int, tuple[tuple[ast.expr, bool], ...]] = field(default_factory=dict)
    # ^ id(node) -> enclosing if-tests (test, taken) for assignments and returns
    returns: list[ast.Return] = field(default_factory=list)
    # `ctx.M = value`, `self.n_rows = value`: (object name, attribute) -> values, read back
    # where another method of the object (an autograd `backward`, `__call__`) launches
    attribute_assignments: dict[tuple[str, str], list[ast.AST]] = field(default_factory=dict)


def scan_host(
    host: HostFunction, body: list[ast.stmt], guards: tuple[tuple[ast.expr, bool], ...]
) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                _host_targets(host, t, stmt.value, guards)
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and isinstance(t.slice, ast.Constant)
                    and isinstance(t.slice.value, str)
                ):
                    host.key_assignments.setdefault(t.value.id, []).append(
                        (t.slice.value, stmt.value, stmt)
                    )
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            _host_targets(host, stmt.target, stmt.value, guards)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            host.returns.append(stmt)
            host.guards[id(stmt)] = guards
        if isinstance(stmt, ast.If):
            scan_host(host, stmt.body, (*guards, (stmt.test, True)))
            scan_host(host, stmt.orelse, (*guards, (stmt.test, False)))
            # An early return in the body guards what follows it.
            if stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                guards = (*guards, (stmt.test, False))
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.AsyncWith, ast.AsyncFor)):
            if isinstance(stmt, ast.For):
                # `for mode, n, table in launches:` over a literal list: each element binds
                for element in _literal_elements(host, stmt.iter):
                    _host_targets(host, stmt.target, element, guards)
            scan_host(host, stmt.body, guards)
            scan_host(host, getattr(stmt, "orelse", []), guards)
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, *[h.body for h in stmt.handlers], stmt.orelse, stmt.finalbody):
                scan_host(host, part, guards)


def _literal_elements(host: HostFunction, iterable: ast.AST) -> list[ast.AST]:
    """The elements of a list or tuple display, or of the displays a local was assigned."""
    if isinstance(iterable, (ast.List, ast.Tuple)):
        return list(iterable.elts)
    if isinstance(iterable, ast.Name):
        return [
            e
            for value in host.assignments.get(iterable.id, ())
            if isinstance(value, (ast.List, ast.Tuple))
            for e in value.elts
        ]
    return []


def _host_targets(host: HostFunction, target: ast.AST, value: ast.AST, guards: tuple) -> None:
    if isinstance(target, ast.Name):
        host.assignments.setdefault(target.id, []).append(value)
        host.guards[id(value)] = guards
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        key = (target.value.id, target.attr)
        host.attribute_assignments.setdefault(key, []).append(value)
        host.guards[id(value)] = guards
    elif isinstance(target, (ast.Tuple, ast.List)):
        value = _expand_starred_shape(value, len(target.elts))
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            for elt, v in zip(target.elts, value.elts):
                _host_targets(host, elt, v, guards)
        else:
            starred = [i for i, elt in enumerate(target.elts) if isinstance(elt, ast.Starred)]
            width = None if starred else len(target.elts)
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    # Remember "element i of this value" for tuple-returning helpers;
                    # after a starred name, counted from the end (`B, *_, D = x.shape`).
                    at = i - len(target.elts) if starred and i > starred[0] else i
                    marker = TupleElement(value, at, width, elt.id)
                    host.assignments.setdefault(elt.id, []).append(marker)
                    host.guards[id(marker)] = guards


def _expand_starred_shape(value: ast.AST, width: int) -> ast.AST:
    """`B, T, H, K, V = *k.shape, v.shape[-1]`: the starred shape stands for as many
    dimensions as the names left for it, each an element of `k.shape` of that rank."""
    if not isinstance(value, (ast.Tuple, ast.List)):
        return value
    starred = [i for i, e in enumerate(value.elts) if isinstance(e, ast.Starred)]
    if len(starred) != 1 or width < len(value.elts) - 1:
        return value
    at = starred[0]
    inner = value.elts[at].value
    if not (isinstance(inner, ast.Attribute) and inner.attr == "shape"):
        return value
    rank = width - (len(value.elts) - 1)
    spread = [TupleElement(inner, i, rank) for i in range(rank)]
    return ast.Tuple([*value.elts[:at], *spread, *value.elts[at + 1 :]], ast.Load())


class TupleElement(ast.expr):
    """Element `index` of the `width` names unpacked from `value` (`a, b = helper(...)`,
    `B, T, H = x.shape`). Around a starred target the width is None and elements after
    it have negative indices."""

    _fields = ("value",)

    def __init__(self, value: ast.AST, index: int, width: int | None, name: str = ""):
        super().__init__()
        self.value = value
        self.index = index
        self.width = width
        self.name = name  # the name it is unpacked into: the evidence its name gives


def argument_for(call: ast.Call, param: str, position: int) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(positional) == len(call.args) and position < len(positional):
        return positional[position]
    return None


def _dict_items(
    expr: ast.AST, host: HostFunction | None, depth: int = 0
) -> list[tuple[str, ast.AST]]:
    """(key, value) pairs of a dict the host builds: literals, `dict(...)`, variables
    filled with `kw['K'] = v`, and dicts splatted into other dicts."""
    if depth > MAX_HELPER_DEPTH:
        return []
    items: list[tuple[str, ast.AST]] = []
    if isinstance(expr, ast.Dict):
        for k, v in zip(expr.keys, expr.values):
            if k is None:
                items += _dict_items(v, host, depth + 1)
            elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                items.append((k.value, v))
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict":
        for a in expr.args:
            items += _dict_items(a, host, depth + 1)
        for kw in expr.keywords:
            if kw.arg is None:
                items += _dict_items(kw.value, host, depth + 1)
            else:
                items.append((kw.arg, kw.value))
    elif isinstance(expr, ast.Name) and host is not None:
        for value in host.assignments.get(expr.id, []):
            items += _dict_items(value, host, depth + 1)
        for key, value, _stmt in host.key_assignments.get(expr.id, []):
            items.append((key, value))
    return items


def bind_arguments(
    call: ast.Call,
    callee: JitFunction,
    via: tuple | None,
    host: HostFunction | None,
) -> dict[str, list[ast.AST]]:
    bound: dict[str, list[ast.AST]] = defaultdict(list)
    params = callee.params
    for pos, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            break  # later positions are unknown
        if pos < len(params):
            bound[params[pos]].append(a)
    for kw in call.keywords:
        if kw.arg is not None:
            bound[kw.arg].append(kw.value)
            continue
        splat = kw.value
        items = _dict_items(splat, host)
        if via is not None and isinstance(splat, ast.Name):
            caller_call, caller_host, helper_host = via
            if splat.id in helper_host.params:
                arg = argument_for(caller_call, splat.id, helper_host.params.index(splat.id))
                if arg is not None:
                    items += _dict_items(arg, caller_host)
        for key, value in items:
            bound[key].append(value)
    return dict(bound)
