"""Host-side names: which value a name read in host code stands for, by Python's scoping.

Knows, per module: for every function (and the module body) the names it binds, each
with every (value, statement) that binds it there: an assignment's expression, the
qualified name an import stands for, or "not followed" for any other binding (a
parameter, a loop target, `with ... as`, `+=`, unpacking, `def`, a lambda's or a
comprehension's variable); the `global` / `nonlocal` declarations; and, for a name read
in a function, the scope Python resolves it in (the innermost enclosing function that
binds it, else the module; class bodies are skipped). Every binding of the name in that
scope counts, wherever it is.

Depends on: the host functions of the core (`core.hosts`, the module body first).
`platform` builds on it (torch's CUDA names, CUDA device names):

    core ──> scopes ──> platform

Costs: nothing until asked; each function's bindings are scanned once, on the first
name read in it or in a function nested in it, and the chain of enclosing scopes of a
host function is computed once.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ascend_lint.index.core import CoreFacts
from ascend_lint.index.syntax import all_params, children, walk


@dataclass(frozen=True)
class Imported:
    """A name bound by an import: the qualified name it stands for."""

    qual: str


@dataclass
class Scope:
    """The names one function (or the module) binds, each with every (value, statement)
    that binds it in that scope. Nested functions and class bodies are scopes of their
    own; what a lambda or comprehension binds is counted here, as not followed."""

    host: object  # the HostFunction of this scope
    # name -> [(value, where)]: the assigned expression, the imported module or member,
    # or None for a binding whose value is not followed (a parameter, a loop target,
    # `with ... as`, `+=`, unpacking, `def`, a lambda's or a comprehension's variable)
    bindings: dict[str, list[tuple[ast.expr | Imported | None, ast.AST]]] = field(
        default_factory=dict
    )
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    @classmethod
    def scan(cls, host) -> Scope:
        node = host.node
        scope = cls(host)
        body = node.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in all_params(node.args):
                scope._bind(arg.arg, None, node)
        stack: list[ast.AST] = list(reversed(body))
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                scope._bind(item.name, None, item)
                outer = list(item.decorator_list)
                if kind is not ast.ClassDef:
                    outer += [d for d in (*item.args.defaults, *item.args.kw_defaults) if d]
                stack.extend(outer)  # evaluated here; a walrus in one binds here
            elif kind is ast.Lambda:
                for arg in all_params(item.args):
                    scope._bind(arg.arg, None, item)
                stack.append(item.body)
            elif kind is ast.Assign:
                for target in item.targets:
                    scope._assign(target, item.value, item)
                stack.append(item.value)
            elif kind is ast.AnnAssign:
                scope._assign(item.target, item.value, item)
                if item.value is not None:
                    stack.append(item.value)
            elif kind is ast.Import:
                for alias in item.names:
                    if alias.asname:
                        scope._bind(alias.asname, Imported(alias.name), item)
                    else:  # `import torch.cuda` binds `torch`
                        scope._bind(alias.name.split(".")[0], None, item)
            elif kind is ast.ImportFrom:
                for alias in item.names:
                    local = alias.asname or alias.name
                    known = item.module and not item.level and alias.name != "*"
                    value = Imported(f"{item.module}.{alias.name}") if known else None
                    scope._bind(local, value, item)
            elif kind is ast.Global:
                scope.declared_global.update(item.names)
            elif kind is ast.Nonlocal:
                scope.declared_nonlocal.update(item.names)
            elif kind is ast.Name:
                if not isinstance(item.ctx, ast.Load):  # loop, `with`, `+=`, `del`, walrus
                    scope._bind(item.id, None, item)
            else:
                name = getattr(item, "name", None)  # `except E as name`, `case P(x) as name`
                if isinstance(name, str) and not isinstance(item, ast.alias):
                    scope._bind(name, None, item)
                rest = getattr(item, "rest", None)  # `case {**rest}`
                if isinstance(rest, str):
                    scope._bind(rest, None, item)
                stack.extend(reversed(children(item)))
        return scope

    def _bind(self, name: str, value: ast.expr | Imported | None, where: ast.AST) -> None:
        self.bindings.setdefault(name, []).append((value, where))

    def _assign(self, target: ast.AST, value: ast.expr | None, stmt: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, value, stmt)
        elif isinstance(target, (ast.Tuple, ast.List)):
            same_shape = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
                target.elts
            )
            for i, elt in enumerate(target.elts):
                if same_shape and not isinstance(elt, ast.Starred):
                    self._assign(elt, value.elts[i], stmt)
                else:
                    for name in walk(elt):
                        if isinstance(name, ast.Name):
                            self._bind(name.id, None, stmt)
        # `x.attr = ...` and `x[i] = ...` bind no name


class HostNames:
    """What a name read in host code stands for, by Python's scoping: the innermost
    enclosing function that binds it, else the module. Every binding of the name in that
    scope counts, wherever it is (a later `DEVICE = get_device()` makes `DEVICE` unknown)."""

    def __init__(self, core: CoreFacts) -> None:
        self.core = core
        self.module = Scope.scan(core.hosts[0])
        self._scopes: dict[int, Scope] = {id(core.hosts[0]): self.module}
        self._chains: dict[int, list[Scope]] = {}
        self._global_writes: set[str] | None = None

    def _scope(self, host) -> Scope:
        scope = self._scopes.get(id(host))
        if scope is None:
            scope = self._scopes[id(host)] = Scope.scan(host)
        return scope

    def _chain(self, host) -> list[Scope]:
        """The function scopes around `host`, innermost first, then the module (class
        bodies are skipped, as Python skips them)."""
        chain = self._chains.get(id(host))
        if chain is None:
            around = []
            if host is not self.core.hosts[0]:
                start, end = _span(host.node)
                for other in self.core.hosts[1:]:
                    s, e = _span(other.node)
                    if s <= start and end <= e:
                        around.append((s, other))
            around.sort(key=lambda item: item[0], reverse=True)
            chain = [self._scope(h) for _s, h in around]
            chain.append(self.module)
            self._chains[id(host)] = chain
        return chain

    def bindings(
        self, name: str, host
    ) -> tuple[Scope, list[tuple[ast.expr | Imported | None, ast.AST]]] | None:
        """The scope that binds `name` where `host` reads it, with every binding there;
        None for a name bound nowhere in the module (a builtin, a star import) or one
        that a function rebinds with `nonlocal` / `global`."""
        for scope in self._chain(host):
            if scope is self.module or name in scope.declared_global:
                break
            if name in scope.declared_nonlocal:
                return None
            if name in scope.bindings:
                return scope, scope.bindings[name]
        if self._global_writes is None:
            self._global_writes = set()
            for other in self.core.hosts[1:]:
                self._global_writes |= self._scope(other).declared_global
        if name in self._global_writes or name not in self.module.bindings:
            return None
        return self.module, self.module.bindings[name]


def _span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (node.lineno, node.col_offset), (
        node.end_lineno or node.lineno,
        node.end_col_offset or 0,
    )
