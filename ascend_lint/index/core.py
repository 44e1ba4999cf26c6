"""The core of the kernel index: what one module defines and which calls reach what.

Knows: the module's `@triton.jit` kernels and helpers (scanned), its host functions
(the module body included), every call and dict display of host code with the host
function that holds it, every `kernel[grid](...)` launch and kernel-to-helper call
bound to the callee's parameters, the `triton.Config(...)` calls, and the queries
every other kind of fact builds on: which kernel a callee expression names, the calls
to a host function, the calls in a kernel to a triton function, the bindings by
callee, argument and name, the statement blocks of a kernel, the tile behind each
`tl.dot` lhs (`dot_lhs_uses`) and the tiles callers pass to a helper's parameter
(`tiles_passed_to`).

Depends on: nothing else of the index but the per-kernel scan (`kernels`), the import
aliases and the host scan and argument binding of `launches`. Every other facts
object (`host`, `strides`, `quantities`, `layout`, `sequences`, `platform`, `gates`)
receives this one.

Costs: `CoreFacts.scan(tree)` walks the module once for kernels and host functions,
once over host code for calls and dict displays, and binds every launch and helper
call; the per-kernel call resolution, the binding maps and the statement parents are
computed on first use and kept.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascend_lint.index.aliases import LANGUAGE, TRITON, Aliases
from ascend_lint.index.kernels import JitFunction, KernelScanner, as_jit, make_jit
from ascend_lint.index.launches import (
    CallBinding,
    HostFunction,
    TupleElement,
    argument_for,
    bind_arguments,
    scan_host,
)
from ascend_lint.index.syntax import (
    LEAVES,
    MAX_HELPER_DEPTH,
    all_params,
    call_name,
    child_bodies,
    children,
)


@dataclass
class _CallMaps:
    """Launch and helper bindings by callee, by argument node and by argument name, and
    where each launch argument is set outside its call: built once per module."""

    helper_by_call: dict[int, CallBinding] = field(default_factory=dict)
    helpers_by_callee: dict[int, list[CallBinding]] = field(default_factory=dict)
    launches_by_callee: dict[int, list[CallBinding]] = field(default_factory=dict)
    launches_by_argument: dict[int, list[tuple[CallBinding, str]]] = field(default_factory=dict)
    launches_by_name: dict[str, list[tuple[CallBinding, str]]] = field(default_factory=dict)
    places: dict[int, tuple] = field(default_factory=dict)


@dataclass
class CoreFacts:
    tree: ast.Module
    aliases: Aliases
    kernels: list[JitFunction]
    hosts: list[HostFunction]
    launches: list[CallBinding]
    helper_calls: list[CallBinding]  # kernel -> @triton.jit helper
    configs: list[ast.Call]  # triton.Config(...)
    launch_calls: list[tuple[ast.Call, HostFunction]]  # every `X[grid](...)`, resolved or not
    by_name: dict[str, list[JitFunction]]
    # Host functions by name: the ones a bare call can mean are `visible_functions`.
    hosts_named: dict[str, list[HostFunction]]
    # Functions of the module's own scope (not in a function or class): seen everywhere.
    module_scope: frozenset[int]  # id(node)
    host_calls: list[tuple[ast.Call, HostFunction]] = field(default_factory=list)  # outside kernels
    host_dicts: list[tuple[ast.Dict, HostFunction]] = field(default_factory=list)
    calls_by_name: dict[str, list[tuple[ast.Call, HostFunction]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    _calls_by_qual: dict[int, dict[str, list]] = field(default_factory=dict)
    _parents_cache: dict[int, dict[int, ast.AST]] = field(default_factory=dict)
    _call_maps_cache: _CallMaps | None = None
    _dot_lhs_cache: dict[int, list[DotLhs]] = field(default_factory=dict)

    # -- construction --------------------------------------------------------------
    @classmethod
    def scan(cls, tree: ast.Module) -> CoreFacts:
        aliases = Aliases.collect(tree)
        kernels: list[JitFunction] = []
        module_host = HostFunction(tree, "<module>", [])
        scan_host(module_host, tree.body, ())
        hosts: list[HostFunction] = [module_host]
        defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        jit_assignments: list[ast.Assign] = []
        module_scope: set[int] = set()

        # Depth first in source order over an explicit stack of statement lists. (A
        # nested function that calls itself is a reference cycle: it kept each file's
        # tree and index alive until the cycle collector ran, which then walked them.)
        # Each list of statements comes with its class (if any) and whether it is in the
        # module's own scope (not inside a function or class body).
        pending: list[tuple[Iterator[ast.stmt], str | None, bool]] = [(iter(tree.body), None, True)]
        while pending:
            statements, owner, in_module_scope = pending[-1]
            stmt = next(statements, None)
            if stmt is None:
                pending.pop()
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.setdefault(stmt.name, stmt)
                jit = as_jit(stmt, owner, aliases)
                if jit is not None:
                    kernels.append(jit)
                    continue
                host = HostFunction(stmt, stmt.name, [a.arg for a in all_params(stmt.args)])
                scan_host(host, stmt.body, ())
                hosts.append(host)
                if in_module_scope:
                    module_scope.add(id(stmt))
                pending.append((iter(stmt.body), owner, False))
            elif isinstance(stmt, ast.ClassDef):
                pending.append((iter(stmt.body), stmt.name, False))
            else:
                if (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Call)
                    and aliases.resolve(stmt.value.func) == f"{TRITON}.jit"
                ):
                    jit_assignments.append(stmt)
                for child_body in reversed(child_bodies(stmt)):
                    pending.append((iter(child_body), owner, in_module_scope))

        # `kernel = triton.jit(fn)`: the kernel is known by the assigned name too.
        by_id = {id(k.node): k for k in kernels}
        extra_names: list[tuple[str, JitFunction]] = []
        for stmt in jit_assignments:
            args = stmt.value.args
            if args and isinstance(args[0], ast.Name) and args[0].id in defs:
                fdef = defs[args[0].id]
                if id(fdef) not in by_id:
                    by_id[id(fdef)] = make_jit(fdef, None, aliases, stmt.value)
                    kernels.append(by_id[id(fdef)])
                    hosts = [h for h in hosts if h.node is not fdef]
                names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
                extra_names += [(name, by_id[id(fdef)]) for name in names]

        by_name: dict[str, list[JitFunction]] = defaultdict(list)
        for k in kernels:
            by_name[k.name].append(k)
        for name, k in extra_names:
            if k not in by_name[name]:
                by_name[name].append(k)
        jit_names = frozenset(by_name)
        for k in kernels:
            k.jit_names = jit_names
            KernelScanner(k, aliases).scan()

        core = cls(
            tree=tree,
            aliases=aliases,
            kernels=kernels,
            hosts=hosts,
            launches=[],
            helper_calls=[],
            configs=[],
            launch_calls=[],
            by_name=dict(by_name),
            hosts_named=_by_name(hosts[1:]),
            module_scope=frozenset(module_scope),
        )
        core._collect_host_nodes()
        core._find_calls()
        return core

    def _collect_host_nodes(self) -> None:
        """One walk over everything outside kernel bodies: calls and dict displays, each
        with the host function that holds it. Decorators and defaults belong to the
        scope around a function, where Python evaluates them."""
        owners: dict[int, HostFunction | JitFunction] = {id(h.node): h for h in self.hosts}
        owners.update({id(k.node): k for k in self.kernels})
        stack: list[tuple[ast.AST, HostFunction]] = [(s, self.hosts[0]) for s in self.tree.body]
        while stack:
            node, host = stack.pop()
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                outer = [
                    *getattr(node, "decorator_list", []),
                    *node.args.defaults,
                    *node.args.kw_defaults,
                ]
                stack.extend((n, host) for n in outer if n is not None)
                owner = owners.get(id(node), host)  # a lambda runs in its definer's scope
                if isinstance(owner, HostFunction):  # a kernel's body is not host code
                    body = node.body if isinstance(node.body, list) else [node.body]
                    stack.extend((n, owner) for n in body)
                continue
            if kind is ast.Call:
                self.host_calls.append((node, host))
            elif kind is ast.Dict:
                self.host_dicts.append((node, host))
            for child in children(node):
                if type(child) not in LEAVES:
                    stack.append((child, host))
        self.host_calls.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
        for call, host in self.host_calls:
            name = call_name(call.func)
            if name:
                self.calls_by_name[name].append((call, host))

    def _find_calls(self) -> None:
        config_names = {
            f"{TRITON}.Config",
            f"{TRITON}.runtime.Config",
            f"{TRITON}.runtime.autotuner.Config",
        }
        for call, host in self.host_calls:
            if isinstance(call.func, ast.Subscript):
                self.launch_calls.append((call, host))
                for callee, via in self._launch_targets(call.func.value, host):
                    self.launches.append(
                        CallBinding(call, callee, bind_arguments(call, callee, via, host), host)
                    )
            elif self.aliases.resolve(call.func) in config_names:
                self.configs.append(call)
        for k in self.kernels:
            for call, _stmt in k.calls:
                if call_name(call.func) not in self.by_name:
                    continue  # not named like any kernel: `resolve_callee` finds none
                for callee in self.resolve_callee(call.func):
                    binding = CallBinding(
                        call, callee, bind_arguments(call, callee, None, None), None, k
                    )
                    self.helper_calls.append(binding)

    # -- callees -----------------------------------------------------------------------
    def resolve_callee(self, func: ast.AST) -> list[JitFunction]:
        """`k`, `self.k`, `Cls.k`, `module.k` -> the @triton.jit function of that name.

        A name defined twice means its last definition, as at run time (launches run
        after the module is imported); `Cls.k` prefers a kernel defined in class `Cls`.
        """
        if isinstance(func, ast.Name):
            found = self.by_name.get(func.id, [])
            top_level = [k for k in found if k.owner is None]
            return (top_level or found)[-1:]
        if isinstance(func, ast.Attribute) and not self.aliases.resolve(func):
            found = self.by_name.get(func.attr, [])
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            in_class = [k for k in found if k.owner is not None and k.owner == owner]
            return (in_class or found)[-1:]
        return []

    def _launch_targets(
        self, kernel_expr: ast.AST, host: HostFunction
    ) -> list[tuple[JitFunction, tuple | None]]:
        """Kernels a launch can run. `via` is (outer call, host) when the kernel object
        arrived as an argument of a launch helper, so the helper's callers bind the rest."""
        direct = self._kernels_of(kernel_expr, host, depth=0)
        if direct:
            return [(k, None) for k in direct]
        if isinstance(kernel_expr, ast.Name) and kernel_expr.id in host.params:
            pos = host.params.index(kernel_expr.id)
            found = []
            for caller_call, caller_host in self.calls_to(host):
                arg = argument_for(caller_call, kernel_expr.id, pos)
                if arg is None:
                    continue
                for k in self._kernels_of(arg, caller_host, depth=0):
                    found.append((k, (caller_call, caller_host, host)))
            return found
        return []

    def _kernels_of(self, expr: ast.AST, host: HostFunction, depth: int) -> list[JitFunction]:
        if depth > MAX_HELPER_DEPTH:
            return []
        if isinstance(expr, ast.IfExp):
            return self._kernels_of(expr.body, host, depth + 1) + self._kernels_of(
                expr.orelse, host, depth + 1
            )
        found = self.resolve_callee(expr)
        if found:
            return found
        if isinstance(expr, ast.Name):
            out: list[JitFunction] = []
            for value in host.assignments.get(expr.id, []):
                if not isinstance(value, TupleElement):
                    out += self._kernels_of(value, host, depth + 1)
            return out
        return []

    def visible_functions(self, name: str, host: HostFunction | None) -> list[HostFunction]:
        """The host functions a bare `name(...)` in `host` can call, as Python scopes
        names: those defined inside `host` (a `def grid(meta)` in each launcher), else
        the module's own. A function nested in another one is not seen outside it."""
        named = self.hosts_named.get(name, ())
        if host is not None and host is not self.hosts[0]:
            first, last = host.node.lineno, host.node.end_lineno or host.node.lineno
            inside = [h for h in named if h is not host and first < h.node.lineno <= last]
            if inside:
                return inside
        return [h for h in named if id(h.node) in self.module_scope]

    def visible_function(self, name: str, host: HostFunction | None) -> HostFunction | None:
        """The function a bare `name(...)` in `host` calls (the last definition)."""
        found = self.visible_functions(name, host)
        return found[-1] if found else None

    def calls_to(self, host: HostFunction) -> list[tuple[ast.Call, HostFunction]]:
        """The plain calls (not launches) of host code that call `host` by its name."""
        calls = self.calls_by_name.get(host.name, [])
        return [
            (c, caller)
            for c, caller in calls
            if not isinstance(c.func, ast.Subscript)
            and host in self.visible_functions(host.name, caller)
        ]

    # -- calls in kernels ----------------------------------------------------------------
    def arange_extents(self, fn: JitFunction) -> set[str]:
        """Constexpr parameters `fn` uses as the extent of a `tl.arange(0, P)`: an axis
        the kernel holds whole in one block, which only a power of two can be."""
        found = {
            call.args[1].id
            for call, _stmt in self.calls_in(fn, f"{LANGUAGE}.arange")
            if len(call.args) == 2 and isinstance(call.args[1], ast.Name)
        }
        return found & fn.constexpr_params

    def calls_in(self, fn: JitFunction, qual: str) -> list[tuple[ast.Call, ast.stmt]]:
        """The calls in `fn` to the triton function `qual` (`triton.language.load`), with
        the statement that holds each; every call is resolved once per kernel."""
        by_qual = self._calls_by_qual.get(id(fn))
        if by_qual is None:
            by_qual = defaultdict(list)
            for call, stmt in fn.calls:
                resolved = self.aliases.resolve(call.func)
                if resolved is not None:
                    by_qual[resolved].append((call, stmt))
            self._calls_by_qual[id(fn)] = by_qual
        return by_qual.get(qual, [])

    def assigned_from(self, fn: JitFunction, qual: str) -> set[str]:
        """Locals assigned by a statement that calls the triton function `qual`
        (`o = tl.arange(0, B) + s`, `b = tl.load(p)`, `n = tl.num_programs(0)`)."""
        stmts = {id(stmt) for _, stmt in self.calls_in(fn, qual)}
        if not stmts:
            return set()
        return {
            name
            for name, defs in fn.definitions.items()
            if any(id(fn.statements[order]) in stmts for order, _ in defs)
        }

    def parents(self, fn: JitFunction) -> dict[int, ast.AST]:
        """id(statement) -> the statement (or the kernel's def) whose block holds it."""
        cached = self._parents_cache.get(id(fn))
        if cached is None:
            cached = {}
            for node in (fn.node, *fn.statements):
                for name in ("body", "orelse", "finalbody", "handlers"):
                    block = getattr(node, name, None)
                    if isinstance(block, list):
                        for child in block:
                            cached[id(child)] = node
            self._parents_cache[id(fn)] = cached
        return cached

    # -- bindings by callee, argument and name -------------------------------------------
    def _call_maps(self) -> _CallMaps:
        if self._call_maps_cache is None:
            maps = _CallMaps()
            for b in self.helper_calls:
                maps.helper_by_call[id(b.call)] = b
                maps.helpers_by_callee.setdefault(id(b.callee), []).append(b)
            for b in self.launches:
                maps.launches_by_callee.setdefault(id(b.callee), []).append(b)
                for param, exprs in b.args.items():
                    for e in exprs:
                        maps.launches_by_argument.setdefault(id(e), []).append((b, param))
                        if isinstance(e, ast.Name):
                            maps.launches_by_name.setdefault(e.id, []).append((b, param))
            for node, host in self.host_dicts:
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant):
                        maps.places.setdefault(id(value), ("dict", (node, key), host))
            for call, host in self.host_calls:
                if isinstance(call.func, ast.Name) and call.func.id == "dict":
                    for k in call.keywords:
                        if k.arg:
                            maps.places.setdefault(id(k.value), ("call", call, host))
            for host in self.hosts:
                for var, items in host.key_assignments.items():
                    for _key, value, stmt in items:
                        maps.places.setdefault(id(value), ("item", (var, stmt), host))
            self._call_maps_cache = maps
        return self._call_maps_cache

    def helper_binding(self, call: ast.Call) -> CallBinding | None:
        """The binding of a kernel-to-helper call."""
        return self._call_maps().helper_by_call.get(id(call))

    def helper_calls_to(self, fn: JitFunction) -> list[CallBinding]:
        return self._call_maps().helpers_by_callee.get(id(fn), [])

    def launches_of(self, fn: JitFunction) -> list[CallBinding]:
        return self._call_maps().launches_by_callee.get(id(fn), [])

    def launches_binding(self, expr: ast.AST) -> list[tuple[CallBinding, str]]:
        """(launch, parameter) for every launch that binds this very expression."""
        return self._call_maps().launches_by_argument.get(id(expr), [])

    def launches_binding_name(self, name: str) -> list[tuple[CallBinding, str]]:
        """(launch, parameter) for every launch that binds a host name spelled `name`."""
        return self._call_maps().launches_by_name.get(name, [])

    def argument_place(self, expr: ast.AST):
        """Where the host builds a launch argument outside the launch call, with its host:
        ("dict", (display, key), host), ("call", `dict(...)` call, host) or
        ("item", (variable, `kw['KEY'] = value` statement), host); None if elsewhere."""
        return self._call_maps().places.get(id(expr))

    # -- matmul lhs tiles ----------------------------------------------------------------
    def dot_lhs_uses(self, fn: JitFunction) -> list[DotLhs]:
        """Each `tl.dot(tile, ...)` of `fn` with the tile behind its lhs (through `.to()`,
        `tl.trans`, `.T`). A dot whose rhs is the same tile reads one operand and is
        left out."""
        found = self._dot_lhs_cache.get(id(fn))
        if found is not None:
            return found
        found = []
        for call, stmt in self.calls_in(fn, _DOT):
            tile = dot_operand_tile(call.args[0], self.aliases) if call.args else None
            rhs = call.args[1] if len(call.args) > 1 else None
            if tile is not None and (rhs is None or dot_operand_tile(rhs, self.aliases) != tile):
                found.append(DotLhs(call, stmt, tile))
        self._dot_lhs_cache[id(fn)] = found
        return found

    def tiles_passed_to(self, fn: JitFunction, param: str, depth: int = 0) -> list[TilePassed]:
        """The tiles callers hand to parameter `param` of the `@triton.jit` helper `fn`
        (`_apply(b_A, ...)`, also through `.to()` / `tl.trans`), each with the call and
        its statement; where a caller passes on a parameter of its own, its callers'
        tiles instead (up to `MAX_HELPER_DEPTH` calls deep)."""
        found: list[TilePassed] = []
        for binding in self.helper_calls_to(fn):
            caller = binding.caller
            if caller is None:
                continue
            stmt = next((s for c, s in caller.calls if c is binding.call), None)
            if stmt is None:
                continue
            for arg in binding.args.get(param, []):
                tile = dot_operand_tile(arg, self.aliases)
                if tile is None:
                    continue
                reach = caller.reaching(tile, caller.order_of(stmt))
                if reach and all(d.order < 0 for d in reach) and tile in caller.params:
                    if depth < MAX_HELPER_DEPTH:
                        found += self.tiles_passed_to(caller, tile, depth + 1)
                    continue
                found.append(TilePassed(caller, binding.call, stmt, tile))
        return found


def _by_name(hosts: list[HostFunction]) -> dict[str, list[HostFunction]]:
    named: dict[str, list[HostFunction]] = defaultdict(list)
    for h in hosts:
        named[h.name].append(h)
    return dict(named)


_DOT = f"{LANGUAGE}.dot"


@dataclass(frozen=True)
class DotLhs:
    """A `tl.dot` (`call`, in `stmt`) and the tile behind its lhs."""

    call: ast.Call
    stmt: ast.stmt
    tile: str


@dataclass(frozen=True)
class TilePassed:
    """A tile `caller` hands to a helper's parameter by `call`, in `stmt`."""

    caller: JitFunction
    call: ast.Call
    stmt: ast.stmt
    tile: str


def dot_operand_tile(expr: ast.AST, aliases: Aliases) -> str | None:
    """The tile behind a dot operand: `b_A`, `b_A.to(dt)`, `tl.trans(b_do.to(dt))`,
    `b_A.T` -> the name. Anything else (`b_A + 0.0`, a load) is a fresh value."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr == "to"
        ):
            expr = expr.func.value
        elif (
            isinstance(expr, ast.Call)
            and aliases.resolve(expr.func) == f"{LANGUAGE}.trans"
            and expr.args
        ):
            expr = expr.args[0]
        elif isinstance(expr, ast.Attribute) and expr.attr == "T":
            expr = expr.value
        else:
            return None
