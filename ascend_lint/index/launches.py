"""Launches and bindings: host functions, every `kernel[grid](...)` launch and every
kernel-to-helper call, with the arguments bound to the callee's parameters.

Binding follows positional and keyword arguments, `**dict` splats (literals, `dict(...)`,
`kw['KEY'] = v`), one level of launch helper (`_launch(kernel, kernel_kwargs=dict(...))`),
and host values through local assignments and helper returns, each with the if-guards
around it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.syntax import MAX_HELPER_DEPTH, call_name, walk


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
                    marker = TupleElement(value, at, width)
                    host.assignments.setdefault(elt.id, []).append(marker)
                    host.guards[id(marker)] = guards


class TupleElement(ast.expr):
    """Element `index` of the `width` names unpacked from `value` (`a, b = helper(...)`,
    `B, T, H = x.shape`). Around a starred target the width is None and elements after
    it have negative indices."""

    _fields = ("value",)

    def __init__(self, value: ast.AST, index: int, width: int | None):
        super().__init__()
        self.value = value
        self.index = index
        self.width = width


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


def is_simt_only(node: ast.AST) -> bool:
    """Whether a launch call, `triton.Config(...)` or options dict selects Ascend's
    SIMT-only compile mode (`compile_mode="simt_only"`, `force_simt_only=True`), where
    GPU-style settings (num_warps, cache hints) reach the backend."""
    pairs: list[tuple[str | None, ast.AST]] = []
    if isinstance(node, ast.Call):
        pairs = [(k.arg, k.value) for k in node.keywords]
    elif isinstance(node, ast.Dict):
        pairs = [
            (k.value if isinstance(k, ast.Constant) else None, v)
            for k, v in zip(node.keys, node.values)
        ]
    return any(_selects_simt_only(key, value) for key, value in pairs)


def _selects_simt_only(key: str | None, value: ast.AST) -> bool:
    if key == "compile_mode":
        return isinstance(value, ast.Constant) and value.value == "simt_only"
    if key == "force_simt_only":
        return not (isinstance(value, ast.Constant) and value.value is False)
    return False


def _is_dict_builder(node: ast.AST) -> bool:
    return isinstance(node, ast.Dict) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict"
    )


class LaunchQueries:
    """What the host side passes to kernels: the queries of `KernelIndex` over launches."""

    def option_dicts(self) -> Iterator[tuple[str, ast.AST, ast.AST]]:
        """Launch options set in dicts that reach a call (`**kw`, `kernel_kwargs=dict(...)`):
        yields (key, key-or-keyword node, the container node)."""
        passed: dict[int, set[str]] = defaultdict(set)  # host -> dict variables passed on
        containers: list[tuple[ast.AST, HostFunction]] = []
        for call, host in self.host_calls:
            for value in (*call.args, *(k.value for k in call.keywords)):
                if isinstance(value, ast.Starred):
                    value = value.value
                if isinstance(value, ast.Name):
                    passed[id(host)].add(value.id)
                elif _is_dict_builder(value):
                    containers.append((value, host))
        for node, host in self.host_dicts:
            for k, v in zip(node.keys, node.values):
                if k is None and isinstance(v, ast.Name):
                    passed[id(host)].add(v.id)
        for host in self.hosts:
            for name in sorted(passed.get(id(host), ())):
                containers += [
                    (v, host) for v in host.assignments.get(name, []) if _is_dict_builder(v)
                ]
                for key, _value, stmt in host.key_assignments.get(name, []):
                    yield key, stmt, stmt
        seen: set[int] = set()
        for container, _host in containers:
            for inner in walk(container):
                if id(inner) in seen or not _is_dict_builder(inner):
                    continue
                seen.add(id(inner))
                if isinstance(inner, ast.Dict):
                    for k in inner.keys:
                        if isinstance(k, ast.Constant) and isinstance(k.value, str):
                            yield k.value, k, inner
                else:
                    for kw in inner.keywords:
                        if kw.arg:
                            yield kw.arg, kw, inner

    def simt_only_kernels(self) -> set[int]:
        """`id(kernel.node)` of kernels compiled in SIMT-only mode: a launch binds
        `compile_mode="simt_only"` / `force_simt_only` (directly or through a splatted
        dict), or a `triton.Config` of the kernel's own decorators selects it."""
        if self._simt_only_cache is None:
            found: set[int] = set()
            for binding in self.launches:
                if is_simt_only(binding.call) or any(
                    _selects_simt_only(key, value)
                    for key in ("compile_mode", "force_simt_only")
                    for value in binding.args.get(key, [])
                ):
                    found.add(id(binding.callee.node))
            for k in self.kernels:
                for dec in k.node.decorator_list:
                    if any(
                        isinstance(n, (ast.Call, ast.Dict)) and is_simt_only(n) for n in walk(dec)
                    ):
                        found.add(id(k.node))
            self._simt_only_cache = found
        return self._simt_only_cache

    def constant_in_kernel(self, fn: JitFunction, node: ast.AST) -> ast.Constant | None:
        """`node` as a literal: itself, or the module constant a kernel reads by a name
        that is neither a parameter nor a local (`input_precision=PREC`)."""
        if (
            isinstance(node, ast.Name)
            and node.id not in fn.params
            and node.id not in fn.assignments
        ):
            node = self.module_constant(node.id) or node
        return node if isinstance(node, ast.Constant) else None

    def module_constant(self, name: str) -> ast.AST | None:
        """The value of a module-level name assigned exactly once (`PREC = "tf32"`),
        as kernels read it when they are compiled; None when assigned several times,
        under a condition, or not at all."""
        values = self.hosts[0].assignments.get(name, [])
        if len(values) != 1 or self.hosts[0].guards.get(id(values[0])):
            return None
        return values[0]

    def host_values(
        self, expr: ast.AST, host: HostFunction | None, depth: int = 0
    ) -> list[tuple[ast.AST, tuple]]:
        """The expressions a host-side name can hold, with the if-guards around them.

        Follows local assignments and tuple-unpacking of module-level helper returns.
        """
        if depth > MAX_HELPER_DEPTH or host is None:
            return [(expr, ())]
        key = (id(expr), id(host))
        cached = self._host_values_cache.get(key)
        if cached is None:
            self._host_values_cache[key] = [(expr, ())]  # a cycle reads the expression itself
            cached = self._host_values_cache[key] = self._host_values(expr, host, depth)
        return cached

    def _host_values(
        self, expr: ast.AST, host: HostFunction, depth: int
    ) -> list[tuple[ast.AST, tuple]]:
        if isinstance(expr, ast.Name) and expr.id in host.assignments:
            out: list[tuple[ast.AST, tuple]] = []
            for value in host.assignments[expr.id]:
                guards = host.guards.get(id(value), ())
                for v, g in self.host_values(value, host, depth + 1):
                    out.append((v, guards + g))
            return out
        if isinstance(expr, ast.Name) and expr.id in host.params:
            # A launch helper's parameter: what its callers in this module pass.
            position = host.params.index(expr.id)
            out = []
            for call, caller in self.calls_to(host.name):
                arg = argument_for(call, expr.id, position)
                if arg is not None:
                    out += self.host_values(arg, caller, depth + 1)
            return out or [(expr, ())]
        if isinstance(expr, ast.Call) and not isinstance(expr.func, ast.Attribute):
            helper = self.host_by_name.get(call_name(expr.func) or "")
            if helper is not None and helper is not host and helper.returns:
                out = []
                for ret in helper.returns:
                    guards = helper.guards.get(id(ret), ())
                    for v, g in self.host_values(ret.value, helper, depth + 1):
                        out.append((v, guards + g))
                return out
        if isinstance(expr, TupleElement):
            call = expr.value
            helper = (
                self.host_by_name.get(call_name(call.func)) if isinstance(call, ast.Call) else None
            )
            if helper is None:
                return [(expr, ())]
            out = []
            for ret in helper.returns:
                guards = helper.guards.get(id(ret), ())
                if isinstance(ret.value, ast.Tuple) and len(ret.value.elts) > expr.index:
                    for v, g in self.host_values(ret.value.elts[expr.index], helper, depth + 1):
                        out.append((v, guards + g))
            return out or [(expr, ())]
        return [(expr, ())]

    def flag_values(self, flag: str) -> list[tuple[ast.AST, tuple]]:
        """Every value the host passes for a kernel parameter named `flag`, anywhere in the
        module (keyword arguments, dict entries, `kw['FLAG'] = ...`), resolved through
        local variables and helper returns, with their if-guards."""
        out: list[tuple[ast.AST, tuple]] = []
        for host in self.hosts:
            for items in host.key_assignments.values():
                out += [
                    v
                    for key, value, _ in items
                    if key == flag
                    for v in self.host_values(value, host)
                ]
        for call, host in self.host_calls:
            for kw in call.keywords:
                if kw.arg == flag:
                    out += self.host_values(kw.value, host)
        for node, host in self.host_dicts:
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == flag:
                    out += self.host_values(v, host)
        return out
