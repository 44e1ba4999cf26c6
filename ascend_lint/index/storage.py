"""Storage: which launch arguments are one tensor, and what a kernel does through each
pointer parameter, in program order.

* `accesses(fn)`: every load, store and atomic of a kernel with the parameter its pointer
  comes from (through `p = x + offs`, block pointers built from `x + base` and advanced,
  and the `@triton.jit` helpers it calls, whose accesses count at the call), in statement
  order;
* `same_tensor(a, b, host)`: whether two launch arguments are one tensor on some path of
  the launcher (the same name, a view of it: `x.view(-1, D)`, `x.reshape(...)`,
  `x.contiguous()`, `x.t()`...), followed through assignments, conditional expressions
  (`out = x if inplace else torch.empty_like(x)`) and the launcher's callers. A slice
  (`x[:, :d]`) is the same tensor only as the same slice; copies (`x.clone()`,
  `torch.empty_like(x)`) never are.

Depends on: the core (kernels, helper calls), `host` (what a host name holds) and the
kernel value model (`values`). Nothing else depends on this object.

Cost: one pass over each kernel's calls (and its helpers', once each), kept per kernel,
and one walk of the assignments per local a pointer starts from, kept per kernel;
`same_tensor` walks two host expressions through the host value model (memoised there).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.index.aliases import ATOMICS, LANGUAGE
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import VIEW_METHODS, HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import HostFunction, TupleElement
from ascend_lint.index.syntax import MAX_HELPER_DEPTH, expr_key, show
from ascend_lint.index.values import pointer_root

_LOAD = f"{LANGUAGE}.load"
_STORE = f"{LANGUAGE}.store"
_BLOCK_POINTERS = frozenset({f"{LANGUAGE}.make_block_ptr", f"{LANGUAGE}.advance"})


@dataclass(frozen=True)
class Access:
    """A load, store or atomic through a pointer parameter of the launched kernel."""

    param: str
    kind: str  # "load", "store" or "atomic" (reads and writes)
    order: int  # statement order in the launched kernel (a helper's: its call's)
    node: ast.Call  # the access (or, in a helper, the call to the helper)
    stmt: ast.stmt  # the statement of the launched kernel that holds it

    @property
    def writes(self) -> bool:
        return self.kind in ("store", "atomic")

    @property
    def reads(self) -> bool:
        return self.kind in ("load", "atomic")


class StorageFacts:
    """Accesses per pointer parameter, and launch arguments that are one tensor."""

    def __init__(self, core: CoreFacts, host: HostFacts):
        self._core = core
        self._host = host
        self._accesses: dict[int, list[Access]] = {}
        self._bases_cache: dict[tuple[int, int], dict[tuple, ast.AST]] = {}
        # (kernel, local name) -> the pointer parameters it is computed from
        self._roots_cache: dict[tuple[int, str], frozenset[str]] = {}

    # -- the kernel side ----------------------------------------------------------------------
    def accesses(self, fn: JitFunction, depth: int = 0) -> list[Access]:
        """Every access of `fn` (and of its helpers, at the call), in statement order."""
        cached = self._accesses.get(id(fn))
        if cached is not None:
            return cached
        self._accesses[id(fn)] = []  # a helper that calls back: nothing meanwhile
        order_of = fn.statement_order()
        params = set(fn.params)
        found: list[Access] = []
        for call, stmt in fn.calls:
            order = order_of.get(id(stmt), 0)
            qual = self._core.aliases.resolve(call.func)
            kind = (
                "load"
                if qual == _LOAD
                else "store"
                if qual == _STORE
                else "atomic"
                if qual in ATOMICS
                else None
            )
            if kind is not None and call.args:
                for param in self._params_of(fn, call.args[0], params):
                    found.append(Access(param, kind, order, call, stmt))
                continue
            binding = self._core.helper_binding(call)
            if binding is None or binding.callee is fn or depth >= MAX_HELPER_DEPTH:
                continue
            for inner in self.accesses(binding.callee, depth + 1):
                for arg in binding.args.get(inner.param, ()):
                    for param in self._params_of(fn, arg, params):
                        found.append(Access(param, inner.kind, order, call, stmt))
        found.sort(key=lambda a: a.order)
        self._accesses[id(fn)] = found
        return found

    def follows(self, fn: JitFunction, first: Access, then: Access) -> bool:
        """Can `then` run after `first` in one program: later in statement order, and not
        on the other side of an `if` that holds both (a constexpr or runtime branch)?"""
        if then.order <= first.order:
            return False
        parents = self._core.parents(fn)

        def sides(stmt: ast.stmt) -> dict[int, bool]:
            found: dict[int, bool] = {}
            child: ast.AST = stmt
            node = parents.get(id(stmt))
            while node is not None and node is not fn.node:
                if isinstance(node, ast.If):
                    found[id(node)] = any(child is s for s in node.body)
                child = node
                node = parents.get(id(node))
            return found

        mine, theirs = sides(first.stmt), sides(then.stmt)
        return all(theirs[k] == v for k, v in mine.items() if k in theirs)

    def _params_of(self, fn: JitFunction, expr: ast.AST, params: set[str]) -> frozenset[str]:
        """The parameters a pointer (or block pointer) expression is computed from."""
        root = self._root(expr)
        return self._params_of_name(fn, root, params) if root is not None else frozenset()

    def _root(self, expr: ast.AST) -> str | None:
        """The name a pointer expression starts from, through block pointers built or
        advanced from it and pointer casts (which keep its storage)."""
        for _ in range(MAX_HELPER_DEPTH):
            if (
                isinstance(expr, ast.Call)
                and self._core.aliases.resolve(expr.func) in _BLOCK_POINTERS
            ):
                if not expr.args:
                    return None
                expr = expr.args[0]
            elif (
                isinstance(expr, ast.Call)
                and isinstance(expr.func, ast.Attribute)
                and expr.func.attr in ("to", "cast")
            ):
                expr = expr.func.value
            else:
                break
        return pointer_root(expr)

    def _params_of_name(self, fn: JitFunction, root: str, params: set[str]) -> frozenset[str]:
        """The parameters the local (or parameter) `root` is computed from, over every
        assignment of every name it comes from: one walk per name and kernel (a pointer
        advanced in a loop, `p += step`, reaches itself; the walk visits each name once)."""
        key = (id(fn), root)
        cached = self._roots_cache.get(key)
        if cached is not None:
            return cached
        found: set[str] = set()
        seen, stack = {root}, [root]
        while stack:
            name = stack.pop()
            if name in params:
                found.add(name)
            for value in fn.assignments.get(name, ()):
                source = self._root(value)
                if source is not None and source not in seen:
                    seen.add(source)
                    stack.append(source)
        cached = self._roots_cache[key] = frozenset(found)
        return cached

    # -- the launch side ----------------------------------------------------------------------
    def same_tensor(self, a: ast.AST, b: ast.AST, host: HostFunction | None) -> str | None:
        """The tensor `a` and `b` both are on some path, shown; None if never."""
        mine = self._bases(a, host)
        theirs = self._bases(b, host)
        common = next((key for key in mine if key in theirs), None)
        return show(mine[common]) if common is not None else None

    def _bases(self, expr: ast.AST, host: HostFunction | None) -> dict[tuple, ast.AST]:
        """expr_key -> node, for each tensor object `expr` can be (views peeled)."""
        key = (id(expr), id(host))
        cached = self._bases_cache.get(key)
        if cached is None:
            self._bases_cache[key] = {}  # a name assigned from itself: nothing meanwhile
            cached = self._bases_cache[key] = self._compute_bases(expr, host)
        return cached

    def _compute_bases(self, expr: ast.AST, host: HostFunction | None) -> dict[tuple, ast.AST]:
        found: dict[tuple, ast.AST] = {}
        values = self._host.host_values(expr, host) if host is not None else [(expr, ())]
        for value, _guards in values:
            peeled = value
            while (
                isinstance(peeled, ast.Call)
                and isinstance(peeled.func, ast.Attribute)
                and peeled.func.attr in VIEW_METHODS
            ):
                owner = peeled.func.value
                if isinstance(owner, ast.Name) and owner.id in self._core.aliases.foreign:
                    # `torch.transpose(x, 0, 1)`: a function of a module, the tensor first
                    if not peeled.args:
                        break
                    peeled = peeled.args[0]
                else:
                    peeled = owner
            if isinstance(peeled, ast.IfExp):
                found.update(self._bases(peeled.body, host))
                found.update(self._bases(peeled.orelse, host))
                continue
            if (
                peeled is not value
                and isinstance(peeled, ast.Name)
                and host is not None
                and (peeled.id in host.assignments or peeled.id in host.params)
            ):
                found.update(self._bases(peeled, host))
                continue
            if isinstance(peeled, (ast.Constant, TupleElement)) or _makes_new(peeled):
                continue
            found.setdefault(expr_key(peeled), peeled)
        return found


def _makes_new(value: ast.AST) -> bool:
    """A call that returns a new tensor (or no tensor the caller passed)."""
    if not isinstance(value, ast.Call):
        return False
    return not (isinstance(value.func, ast.Attribute) and value.func.attr in VIEW_METHODS)
