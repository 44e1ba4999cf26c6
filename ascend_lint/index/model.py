"""The kernel index: one object per module holding every fact the rules ask about.

`KernelIndex.build(tree)` walks the module once for kernels and host functions, once
over host code for calls and dict displays, and binds every launch and helper call.
The queries live with the facts they are about (`LaunchQueries`, `LayoutQueries`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascend_lint.index.aliases import LANGUAGE, TRITON, Aliases
from ascend_lint.index.gates import GateQueries
from ascend_lint.index.kernels import JitFunction, KernelScanner, as_jit, make_jit
from ascend_lint.index.launches import (
    CallBinding,
    HostFunction,
    LaunchQueries,
    bind_arguments,
    scan_host,
)
from ascend_lint.index.layout import LayoutQueries
from ascend_lint.index.platform import PlatformQueries
from ascend_lint.index.quantities import QuantityQueries
from ascend_lint.index.sequences import SequenceQueries
from ascend_lint.index.strides import Stride, StrideQueries
from ascend_lint.index.syntax import LEAVES, all_params, call_name, child_bodies, children, names_in


@dataclass
class KernelIndex(
    LaunchQueries,
    LayoutQueries,
    PlatformQueries,
    QuantityQueries,
    SequenceQueries,
    StrideQueries,
    GateQueries,
):
    tree: ast.Module
    aliases: Aliases
    kernels: list[JitFunction]
    hosts: list[HostFunction]
    launches: list[CallBinding]
    helper_calls: list[CallBinding]  # kernel -> @triton.jit helper
    configs: list[ast.Call]  # triton.Config(...)
    launch_calls: list[tuple[ast.Call, HostFunction]]  # every `X[grid](...)`, resolved or not
    by_name: dict[str, list[JitFunction]]
    host_by_name: dict[str, HostFunction]
    host_calls: list[tuple[ast.Call, HostFunction]] = field(default_factory=list)  # outside kernels
    host_dicts: list[tuple[ast.Dict, HostFunction]] = field(default_factory=list)
    _calls_by_name: dict[str, list[tuple[ast.Call, HostFunction]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    _transposed_cache: dict[int, set[str]] | None = None
    _stride_cache: dict[tuple[int, str], Stride] = field(default_factory=dict)
    _divisor_cache: dict[int, set[str]] = field(default_factory=dict)
    _sequences_done: set[int] = field(default_factory=set)
    _calls_by_qual: dict[int, dict[str, list]] = field(default_factory=dict)
    _host_values_cache: dict[tuple[int, int], list] = field(default_factory=dict)
    _contig_cache: dict[int, dict[str, tuple[str, set[str]]]] = field(default_factory=dict)
    _quantity_cache: dict[tuple[int, int, str], object] = field(default_factory=dict)
    _task_loop_cache: dict[int, bool] = field(default_factory=dict)
    _min_rank_cache: dict[int, dict[str, int]] = field(default_factory=dict)
    _parents_cache: dict[int, dict[int, ast.AST]] = field(default_factory=dict)
    _gate_cache: dict[tuple[int, str], object] = field(default_factory=dict)
    _gate_pointer_cache: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    _call_maps_cache: object | None = None  # gates._CallMaps
    _derived_cache: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    _vector_cache: dict[int, set[str]] = field(default_factory=dict)
    _vector_locals_cache: dict[int, set[str]] = field(default_factory=dict)
    _row_counts_cache: dict[int, dict[str, str]] = field(default_factory=dict)
    _none_tests_cache: dict[int, frozenset[str]] = field(default_factory=dict)
    _readers_cache: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    _platform_spans_cache: list | None = None
    _torch_names_cache: frozenset[str] | None = None
    _device_lookups_cache: list | None = None
    _cuda_imports_cache: list | None = None
    _imports_cache: list | None = None
    _platform_hosts_cache: dict[int, bool] = field(default_factory=dict)
    _simt_only_cache: set[int] | None = None
    _platform_flags_cache: dict[int, frozenset[str]] = field(default_factory=dict)

    # -- construction --------------------------------------------------------------
    @classmethod
    def build(cls, tree: ast.Module) -> KernelIndex:
        aliases = Aliases.collect(tree)
        kernels: list[JitFunction] = []
        module_host = HostFunction(tree, "<module>", [])
        scan_host(module_host, tree.body, ())
        hosts: list[HostFunction] = [module_host]
        defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        jit_assignments: list[ast.Assign] = []

        # Depth first in source order over an explicit stack of statement lists. (A
        # nested function that calls itself is a reference cycle: it kept each file's
        # tree and index alive until the cycle collector ran, which then walked them.)
        pending: list[tuple[Iterator[ast.stmt], str | None]] = [(iter(tree.body), None)]
        while pending:
            statements, owner = pending[-1]
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
                pending.append((iter(stmt.body), owner))
            elif isinstance(stmt, ast.ClassDef):
                pending.append((iter(stmt.body), stmt.name))
            else:
                if (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Call)
                    and aliases.resolve(stmt.value.func) == f"{TRITON}.jit"
                ):
                    jit_assignments.append(stmt)
                for child_body in reversed(child_bodies(stmt)):
                    pending.append((iter(child_body), owner))

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

        index = cls(
            tree=tree,
            aliases=aliases,
            kernels=kernels,
            hosts=hosts,
            launches=[],
            helper_calls=[],
            configs=[],
            launch_calls=[],
            by_name=dict(by_name),
            host_by_name={h.name: h for h in hosts},
        )
        index._collect_host_nodes()
        index._find_calls()
        return index

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
                self._calls_by_name[name].append((call, host))

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
                        CallBinding(
                            call, callee, bind_arguments(call, callee, via, host, self), host
                        )
                    )
            elif self.aliases.resolve(call.func) in config_names:
                self.configs.append(call)
        for k in self.kernels:
            for call, _stmt in k.calls:
                if call_name(call.func) not in self.by_name:
                    continue  # not named like any kernel: `resolve_callee` finds none
                for callee in self.resolve_callee(call.func):
                    binding = CallBinding(
                        call, callee, bind_arguments(call, callee, None, None, self), None, k
                    )
                    self.helper_calls.append(binding)

    # -- queries ----------------------------------------------------------------------
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

    def vector_names(self, fn: JitFunction) -> set[str]:
        """Locals assigned an expression with a `tl.arange` in it, and the parameters a
        caller binds to an expression computed from one (`_gather(p, o_t)` makes `o_t`
        of `_gather` a vector): where 1-D index vectors enter a function."""
        cached = self._vector_cache.get(id(fn))
        if cached is not None:
            return cached
        self._vector_cache[id(fn)] = names = self.assigned_from(fn, f"{LANGUAGE}.arange")
        for binding in self.helper_calls_to(fn):
            caller = binding.caller
            if caller is None:
                continue
            vectors = self.vector_locals(caller)  # what the caller's vectors flow into
            for param, exprs in binding.args.items():
                if any(names_in(e) & vectors for e in exprs):
                    names.add(param)
        return names
