"""Dtypes in a kernel: every place a kernel uses a triton dtype, how the dtype reaches
that place, and what the use does.

A dtype reaches a kernel spelled out (`tl.float64`, an imported `float8e4nv`), through a
local that holds it (`dt = tl.float64`; also one side of `tl.float64 if HIGH else
tl.float32`: a constexpr test compiles both), through a module constant
(`FP8 = tl.float8e4nv`, through constants naming constants and conditionals whose every
side is one), and through a constexpr parameter that a launch in the module binds to
one (`k[grid](..., ACC=tl.float64)`). For a local the use is where it is read, not its
assignment: an alias read only in a comparison converts nothing.

A use is a conversion (`x.to(dt)`), a `tl.cast`, a bitcast (`bitcast=True` builds a
value of the type just as a conversion does) or any other use (`tl.zeros(..., dtype=dt)`,
a parameter annotation). A dtype in a comparison (`x.dtype == tl.float64`,
`== tl.constexpr(...)`) dispatches at compile time and creates no value: not a use.

Depends on: the core (kernels, their launches) and `host` (module constants). Rules
reach it as `index.dtypes`.

Costs: nothing until asked; per (kernel, set of dtypes asked for), one pass over the
kernel's statements, kept.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.diagnostics import cite
from ascend_lint.index.aliases import LANGUAGE
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.syntax import all_params, own_nodes, walk

_CONSTEXPR = f"{LANGUAGE}.constexpr"
_CAST = f"{LANGUAGE}.cast"
_MAX_DEPTH = 4  # module constants naming other module constants


@dataclass(frozen=True)
class DtypeUse:
    node: ast.AST  # where the kernel uses it
    stmt: ast.stmt | None  # the kernel statement holding it (None: a parameter annotation)
    dtype: str  # qualified: "triton.language.float64"
    how: str  # how it reaches the node, in words ("" when spelled out there)
    kind: str  # "to", "cast", "bitcast" or "" (any other use)
    cited: tuple[ast.AST, ...] = ()  # the places `how` cites (`diagnostics.cite`)


def _is_bitcast(call: ast.Call) -> bool:
    return any(
        kw.arg == "bitcast" and not (isinstance(kw.value, ast.Constant) and not kw.value.value)
        for kw in call.keywords
    )


class DtypeFacts:
    """The dtype uses of every kernel of a module (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts):
        self._core = core
        self._host = host
        self._aliases = core.aliases
        self._cache: dict[tuple[int, frozenset[str]], list[DtypeUse]] = {}

    def uses(self, fn: JitFunction, dtypes: frozenset[str]) -> list[DtypeUse]:
        """Every use in `fn` of a dtype among `dtypes` (qualified names), in source order."""
        key = (id(fn), dtypes)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._uses(fn, dtypes)
        return found

    # -- one kernel ------------------------------------------------------------------------
    def _uses(self, fn: JitFunction, dtypes: frozenset[str]) -> list[DtypeUse]:
        resolve = self._aliases.resolve
        exempt = self._compared(fn)
        kinds = self._conversions(fn)
        held_locally = self._locals(fn, dtypes)
        deferred = {id(node) for _name, nodes in held_locally.values() for node in nodes}
        statement_of: dict[int, ast.stmt] = {}
        for stmt in fn.statements:
            for node in own_nodes(stmt):
                statement_of[id(node)] = stmt

        found: list[tuple[ast.AST, str, str]] = []  # (node, dtype, how it is reached)
        for node in fn.dtype_mentions:
            qual = resolve(node)
            if qual in dtypes and id(node) not in exempt and id(node) not in deferred:
                found.append((node, qual, "", ()))
        for arg in all_params(fn.node.args):
            if arg.annotation is not None:
                found += [
                    (n, resolve(n), "", ()) for n in walk(arg.annotation) if resolve(n) in dtypes
                ]
        held = dict(held_locally)
        held.update(self._module_constants(fn, dtypes, set(held_locally)))
        held.update(self._launch_bindings(fn, dtypes))
        if held:
            for stmt in fn.statements:
                for node in own_nodes(stmt):
                    if (
                        type(node) is ast.Name
                        and type(node.ctx) is ast.Load
                        and node.id in held
                        and id(node) not in exempt
                    ):
                        qual, nodes = held[node.id]
                        found.append((node, qual, _how(node.id, nodes), tuple(nodes[:1])))
        uses: list[DtypeUse] = []
        seen: set[int] = set()
        for node, qual, how, cited in sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset)):
            if id(node) in seen:
                continue
            seen.add(id(node))
            uses.append(
                DtypeUse(
                    node, statement_of.get(id(node)), qual, how, kinds.get(id(node), ""), cited
                )
            )
        return uses

    def _compared(self, fn: JitFunction) -> set[int]:
        """The operands of comparisons (`x.dtype == tl.float64`, `== tl.constexpr(...)`):
        compile-time dispatch, no value of the type."""
        resolve = self._aliases.resolve
        exempt: set[int] = set()
        for node in fn.compares:
            for operand in (node.left, *node.comparators):
                exempt.add(id(operand))
                if isinstance(operand, ast.Call) and resolve(operand.func) == _CONSTEXPR:
                    exempt.update(id(a) for a in operand.args)
        return exempt

    def _conversions(self, fn: JitFunction) -> dict[int, str]:
        """The dtype argument of every `x.to(dt)` and `tl.cast(x, dt)` -> "to", "cast" or
        "bitcast"."""
        resolve = self._aliases.resolve
        kinds: dict[int, str] = {}
        for call, _stmt in fn.calls:
            if isinstance(call.func, ast.Attribute) and call.func.attr == "to":
                dtype, kind = (call.args[0] if call.args else None), "to"
            elif resolve(call.func) == _CAST:
                dtype, kind = (call.args[1] if len(call.args) > 1 else None), "cast"
            else:
                continue
            for kw in call.keywords:
                if kw.arg == "dtype":
                    dtype = kw.value
            if dtype is not None:
                kinds[id(dtype)] = "bitcast" if _is_bitcast(call) else kind
        return kinds

    def _mentions(self, expr: ast.AST, dtypes: frozenset[str]) -> list[ast.AST]:
        """The dtype nodes inside a local's value that name one of `dtypes` on some path."""
        resolve = self._aliases.resolve
        if resolve(expr) in dtypes:
            return [expr]
        if isinstance(expr, ast.Call) and resolve(expr.func) == _CONSTEXPR and expr.args:
            return self._mentions(expr.args[0], dtypes)
        if isinstance(expr, ast.IfExp):
            return self._mentions(expr.body, dtypes) + self._mentions(expr.orelse, dtypes)
        return []

    def _locals(
        self, fn: JitFunction, dtypes: frozenset[str]
    ) -> dict[str, tuple[str, list[ast.AST]]]:
        """Locals assigned one of `dtypes`: name -> (the dtype, the dtype nodes of those
        assignments)."""
        held: dict[str, tuple[str, list[ast.AST]]] = {}
        for name, values in fn.assignments.items():
            if name in fn.params:
                continue
            nodes = [n for v in values for n in self._mentions(v, dtypes)]
            if nodes:
                held[name] = (self._aliases.resolve(nodes[0]) or "", nodes)
        return held

    def value(self, expr: ast.AST | None, dtypes: frozenset[str], depth: int = 0) -> str | None:
        """The dtype among `dtypes` an expression names on every path: spelled out,
        `tl.constexpr(dt)`, a module constant holding one, or a conditional whose every
        side is one (the first side's dtype)."""
        if expr is None or depth > _MAX_DEPTH:
            return None
        qual = self._aliases.resolve(expr)
        if qual in dtypes:
            return qual
        if (
            isinstance(expr, ast.Call)
            and self._aliases.resolve(expr.func) == _CONSTEXPR
            and expr.args
        ):
            return self.value(expr.args[0], dtypes, depth + 1)
        if isinstance(expr, ast.IfExp):
            body = self.value(expr.body, dtypes, depth + 1)
            other = self.value(expr.orelse, dtypes, depth + 1)
            return body if body and other else None
        if isinstance(expr, ast.Name) and qual is None:
            return self.value(self._host.module_constant(expr.id), dtypes, depth + 1)
        return None

    def _module_constants(
        self, fn: JitFunction, dtypes: frozenset[str], local: set[str]
    ) -> dict[str, tuple[str, list[ast.AST]]]:
        """Module constants holding one of `dtypes` that the kernel reads by name."""
        aliases = self._aliases
        held: dict[str, tuple[str, list[ast.AST]]] = {}
        for stmt_reads, _writes in fn.statement_names():
            for name in stmt_reads:
                if name in held or name in local or name in fn.params or name in fn.assignments:
                    continue
                value = self._host.module_constant(name)
                if value is None or name in aliases.modules or name in aliases.members:
                    continue  # an import, not a constant
                qual = self.value(value, dtypes)
                if qual is not None:
                    held[name] = (qual, [])
        return held

    def _launch_bindings(
        self, fn: JitFunction, dtypes: frozenset[str]
    ) -> dict[str, tuple[str, list[ast.AST]]]:
        """Constexpr parameters a launch in this module binds to one of `dtypes`:
        param -> (the dtype, [the launch call])."""
        held: dict[str, tuple[str, list[ast.AST]]] = {}
        for binding in self._core.launches_of(fn):
            for param, exprs in binding.args.items():
                if param not in fn.constexpr_params or param in held:
                    continue
                for expr in exprs:
                    qual = self.value(expr, dtypes)
                    if qual is not None:
                        held[param] = (qual, [binding.call])
                        break
        return held


def _how(name: str, nodes: list[ast.AST]) -> str:
    """How a dtype reaches a use, citing the statement or launch it comes from."""
    if nodes and isinstance(nodes[0], ast.Call):
        return f"passed as `{name}` by the launch on {cite(0)}"
    if nodes:
        return f"held in `{name}`, set on {cite(0)}"
    return f"the module constant `{name}`"
