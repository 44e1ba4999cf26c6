"""Host values: what a host expression can hold where it reaches a launch, and what the
host passes to kernels besides (launch options in dicts, SIMT-only compile mode, module
constants, every value given to a flag).

Knows: for an expression in a host function, the expressions it can hold, followed
through local assignments, tuple unpacking, the callers of a launch helper and the
returns of module-level helpers, each with the if-guards around it.

Depends on: the core facts only (host functions, host calls and dicts, calls by name,
launches for the compile mode). `strides`, `quantities`, `layout`, `platform` and
`gates` receive this object.

Costs: nothing at construction; `host_values` is memoised per (expression, host
function), depth-bounded, with cycles cut; `simt_only_kernels` is one pass over the
launches and the kernels' decorators, kept; `option_dicts` and `flag_values` walk the
host calls and dicts each time they are asked (once per module by the rules).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator

from ascend_lint.index.core import CoreFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import HostFunction, TupleElement, argument_for
from ascend_lint.index.syntax import MAX_HELPER_DEPTH, call_name, walk

# torch methods that return a view of the same storage (all of it): a fact about one
# is a fact about the other (its guards, its storage)
VIEW_METHODS = frozenset(
    {
        "view",
        "reshape",
        "view_as",
        "reshape_as",
        "flatten",
        "contiguous",
        "unsqueeze",
        "squeeze",
        "transpose",
        "permute",
        "t",
        "detach",
        "expand",
        "movedim",
        "unflatten",
    }
)


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


class HostFacts:
    """What host code passes to kernels: values, options, flags (see the module doc)."""

    def __init__(self, core: CoreFacts):
        self._core = core
        self._hosts = core.hosts
        self._visible_function = core.visible_function
        self._calls_to = core.calls_to
        self._host_values_cache: dict[tuple[int, int], list] = {}
        self._simt_only_cache: set[int] | None = None

    def option_dicts(
        self, only: frozenset[str] | None = None
    ) -> Iterator[tuple[str, ast.AST, ast.AST]]:
        """Launch options set in dicts that reach a call (`**kw`, `kernel_kwargs=dict(...)`):
        yields (key, key-or-keyword node, the container node); with `only`, just the
        options of those keys."""
        if only is not None and not self._may_set(only):
            return
        for key, node, container in self._option_dicts():
            if only is None or key in only:
                yield key, node, container

    def _may_set(self, keys: frozenset[str]) -> bool:
        """Whether some dict in host code sets one of `keys`: every option `option_dicts`
        finds is the key of a dict display, a keyword of a `dict(...)` call, or a
        `kw['key'] = ...` of a host function. Asking this first spares a look at every
        argument of every host call in the many modules that set no such key."""
        for host in self._hosts:
            for items in host.key_assignments.values():
                if any(key in keys for key, _value, _stmt in items):
                    return True
        for node, _host in self._core.host_dicts:
            for k in node.keys:
                if isinstance(k, ast.Constant) and k.value in keys:
                    return True
        for call, _host in self._core.calls_by_name.get("dict", ()):
            if any(kw.arg in keys for kw in call.keywords):
                return True
        return False

    def _option_dicts(self) -> Iterator[tuple[str, ast.AST, ast.AST]]:
        passed: dict[int, set[str]] = defaultdict(set)  # host -> dict variables passed on
        containers: list[tuple[ast.AST, HostFunction]] = []
        for call, host in self._core.host_calls:
            for value in (*call.args, *(k.value for k in call.keywords)):
                if isinstance(value, ast.Starred):
                    value = value.value
                if isinstance(value, ast.Name):
                    passed[id(host)].add(value.id)
                elif _is_dict_builder(value):
                    containers.append((value, host))
        for node, host in self._core.host_dicts:
            for k, v in zip(node.keys, node.values):
                if k is None and isinstance(v, ast.Name):
                    passed[id(host)].add(v.id)
        for host in self._hosts:
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
            for binding in self._core.launches:
                if is_simt_only(binding.call) or any(
                    _selects_simt_only(key, value)
                    for key in ("compile_mode", "force_simt_only")
                    for value in binding.args.get(key, [])
                ):
                    found.add(id(binding.callee.node))
            for k in self._core.kernels:
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
        values = self._hosts[0].assignments.get(name, [])
        if len(values) != 1 or self._hosts[0].guards.get(id(values[0])):
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
            for call, caller in self._calls_to(host):
                arg = argument_for(call, expr.id, position)
                if arg is not None:
                    out += self.host_values(arg, caller, depth + 1)
            return out or [(expr, ())]
        if isinstance(expr, ast.Call) and not isinstance(expr.func, ast.Attribute):
            helper = self._visible_function(call_name(expr.func) or "", host)
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
                self._visible_function(call_name(call.func) or "", host)
                if isinstance(call, ast.Call)
                else None
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
        for host in self._hosts:
            for items in host.key_assignments.values():
                out += [
                    v
                    for key, value, _ in items
                    if key == flag
                    for v in self.host_values(value, host)
                ]
        for call, host in self._core.host_calls:
            for kw in call.keywords:
                if kw.arg == flag:
                    out += self.host_values(kw.value, host)
        for node, host in self._core.host_dicts:
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == flag:
                    out += self.host_values(v, host)
        return out
