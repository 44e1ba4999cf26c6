"""Compile-time or runtime: for every value in a kernel, at the statement that reads it.

Triton specialises a kernel on its `tl.constexpr` arguments (and on `None` arguments),
so a condition on them is resolved when the kernel compiles; a condition on anything
else costs a runtime branch. The property belongs to the value a name holds where it
is read, not to the name:

* a value loaded from memory, a program id, a runtime argument or a runtime loop
  variable is runtime, and so is everything computed from it (casts, arithmetic,
  comparisons and method calls included: `tl.load(p).to(tl.int1)` stays runtime);
* `x is None` / `x is not None` is compile-time whatever `x` is: Triton evaluates
  identity tests when it compiles;
* a name is read through the definitions that reach the statement (the last one that
  dominates it, those under branches since then, and in a loop those later in the body,
  carried over from the previous iteration);
* where two or more definitions reach a read and one of them sits under a runtime
  branch that does not enclose the read, the value depends on the path taken: runtime,
  even when every definition is a literal (`rejected = True` under a runtime `if`);
* a value rebuilt from itself in a runtime loop changes every iteration: runtime.

The reaching definitions themselves are public: `reaching(name, order)` gives the
bindings of a name that some path brings to statement `order` (a binding on the other
side of an `if` that encloses the read is left out unless a loop around both carries
it over), for analyses that judge a value per path (`values`).

Cost: one bounded fixpoint per kernel over its definitions and `if` tests; reaching
definitions are computed once per (name, statement) and cached.
"""

from __future__ import annotations

import ast
from collections import defaultdict, deque
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Protocol

from ascend_lint.index.aliases import LANGUAGE, TRITON, Aliases
from ascend_lint.index.context import Context
from ascend_lint.index.syntax import call_name, children, frozen_names, names_in

# triton.language calls whose value is known at compile time when their arguments are.
_COMPILE_TIME_CALLS = {
    f"{LANGUAGE}.constexpr",
    f"{LANGUAGE}.cdiv",
    f"{TRITON}.cdiv",
    f"{TRITON}.next_power_of_2",
    f"{LANGUAGE}.next_power_of_2",
    f"{LANGUAGE}.static_assert",
}
# Attributes of a tensor that are compile-time properties, whatever the tensor.
_STATIC_ATTRIBUTES = {
    "dtype",
    "shape",
    "type",
    "element_ty",
    "numel",
    "value",
    "primitive_bitwidth",
}


class KernelBody(Protocol):
    """What the classification reads of a kernel: its statements in source order, where
    each sits, every binding of every name, and its parameters (`kernels.JitFunction`
    has them all; the kernel scanner builds this classification while it builds one)."""

    params: list[str]
    constexpr_params: set[str]
    do_not_specialize: set[str]
    jit_names: frozenset[str]
    statements: list[ast.stmt]
    contexts: dict[int, Context]
    loop_spans: dict[int, tuple[int, int]]
    definitions: dict[str, list[tuple[int, ast.AST]]]
    loop_targets: dict[str, list[tuple[int, bool]]]

    def statement_order(self) -> dict[int, int]: ...


@dataclass(eq=False)
class Definition:
    """One binding of a name: an assignment, a loop target or the parameter itself."""

    # A kernel has one per assignment: slots make them smaller and quicker to build.
    __slots__ = ("fixed", "name", "order", "runtime", "value")

    name: str
    order: int  # index of the binding statement in `fn.statements`; -1 for a parameter
    value: ast.AST | None  # None: nothing the index can evaluate (parameter, loop target)
    runtime: bool  # known so far; only ever turns from False to True
    fixed: bool  # parameters and loop targets: decided up front, never re-evaluated


class CompileTime:
    """The compile-time/runtime classification of one kernel."""

    def __init__(self, fn: KernelBody, aliases: Aliases):
        # No reference to `fn` is kept: the function holds this object, and a cycle
        # would keep both (and the kernel's tree) alive until the cycle collector runs.
        self.aliases = aliases
        self._jit_names = fn.jit_names
        self._defs: dict[str, list[Definition]] = {}
        self._reach_cache: dict[tuple[str, int], tuple[Definition, ...]] = {}
        self._path_cache: dict[tuple[str, int], tuple[Definition, ...]] = {}
        self._test_runtime: dict[int, bool] = {}  # id(ast.If) -> its test is runtime
        self._loop_span = fn.loop_spans  # id(loop node) -> (first, last) order of its body
        self._order = fn.statement_order()
        self._contexts = [fn.contexts[id(s)] for s in fn.statements]  # by order
        self._collect(fn)
        self._solve(fn)
        self.runtime_names = self._flow_insensitive_names()

    # -- queries --------------------------------------------------------------------
    def is_runtime(self, expr: ast.AST, at: ast.stmt | None = None) -> bool:
        """True if `expr` can differ between program instances or launches where `at`
        reads it (without `at`: if any binding of a name it reads is runtime)."""
        order = self._order.get(id(at), None) if at is not None else None
        return not self._compile_time(expr, order)

    def runtime_names_in(self, expr: ast.AST, at: ast.stmt | None = None) -> list[str]:
        return sorted(n for n in names_in(expr) if self.is_runtime(ast.Name(n, ast.Load()), at))

    def reaching(self, name: str, order: int) -> tuple[Definition, ...]:
        """The bindings of `name` that reach statement `order` along some path: the last
        one that runs on every path to it, those after it that may not (bar those on the
        other side of an `if` around the read, which no enclosing loop carries over),
        and, in a loop, those later in the body, carried from the previous iteration.
        The parameter binding, if any, has order -1."""
        key = (name, order)
        cached = self._path_cache.get(key)
        if cached is not None:
            return cached
        ctx = self._contexts[order]
        found: list[Definition] = []
        for d in self._reaching(name, order):
            if (d.order >= order or not self._other_side(d, ctx)) and not any(
                d is seen for seen in found
            ):
                found.append(d)
        result = tuple(found)
        self._path_cache[key] = result
        return result

    def loop_of(self, d: Definition) -> int | None:
        """The order of the `for` whose target `d` binds, or None (a parameter or an
        assignment)."""
        return d.order if d.fixed and d.order >= 0 else None

    # -- construction ---------------------------------------------------------------
    def _collect(self, fn: KernelBody) -> None:
        bindings = self._defs
        for name in fn.params:
            runtime = name not in fn.constexpr_params or name in fn.do_not_specialize
            bindings.setdefault(name, []).append(Definition(name, -1, None, runtime, True))
        for name, defs in fn.definitions.items():
            bindings.setdefault(name, []).extend(
                [Definition(name, order, value, False, False) for order, value in defs]
            )
        for name, targets in fn.loop_targets.items():
            bindings.setdefault(name, []).extend(
                [Definition(name, order, None, not static, True) for order, static in targets]
            )
        by_order = attrgetter("order")
        for defs in self._defs.values():
            defs.sort(key=by_order)

    def _solve(self, fn: KernelBody) -> None:
        """A worklist over the definitions and `if` tests: each is evaluated once, and
        again only when a name it reads turns runtime (or a branch that one of that
        name's bindings sits under does)."""
        items: list[tuple[Definition | ast.If, ast.AST, int]] = []
        for defs in self._defs.values():
            for d in defs:
                if d.fixed:
                    continue
                if self._iteration_variant(d):
                    d.runtime = True  # `acc = acc + x` in a runtime loop
                else:
                    items.append((d, d.value, d.order))
        items += [(s, s.test, i) for i, s in enumerate(fn.statements) if isinstance(s, ast.If)]
        # In source order first, so that most values are judged after their inputs. (The
        # order only decides how soon the fixpoint is reached, not what it is: every test
        # is monotone, and whatever a change can affect is queued again.)
        items.sort(key=itemgetter(2))
        readers: defaultdict[str, list[int]] = defaultdict(list)
        for k, (_item, expr, _order) in enumerate(items):
            for name in frozen_names(expr):
                readers[name].append(k)
        bound_under: defaultdict[int, set[str]] = defaultdict(set)  # id(ast.If) -> names
        for name, defs in self._defs.items():  # bound inside it
            for d in defs:
                if d.order >= 0:
                    for branch in self._contexts[d.order].branches:
                        bound_under[id(branch.node)].add(name)
        queue = deque(range(len(items)))
        queued = set(queue)
        while queue:
            k = queue.popleft()
            queued.discard(k)
            item, expr, order = items[k]
            if isinstance(item, Definition):
                if item.runtime or self._compile_time(expr, order):
                    continue
                item.runtime = True
                changed = {item.name}
            else:
                if self._test_runtime.get(id(item)) or self._compile_time(expr, order):
                    continue
                self._test_runtime[id(item)] = True
                changed = bound_under.get(id(item), set())
            for name in changed:
                for reader in readers.get(name, ()):
                    if reader not in queued and not self._known_runtime(items[reader][0]):
                        queued.add(reader)
                        queue.append(reader)

    def _known_runtime(self, item: Definition | ast.If) -> bool:
        if isinstance(item, Definition):
            return item.runtime
        return bool(self._test_runtime.get(id(item)))

    def _iteration_variant(self, d: Definition) -> bool:
        """`acc = acc + x` in a runtime loop: a different value every iteration."""
        for loop in self._contexts[d.order].loops:
            if not loop.static:
                return d.name in frozen_names(d.value)
        return False

    def _flow_insensitive_names(self) -> set[str]:
        """Names with a runtime binding, or with several of which one is under a runtime
        branch."""
        names = set()
        for name, defs in self._defs.items():
            several = len(defs) > 1
            for d in defs:
                if d.runtime or (several and self._under_runtime_branch(d, None)):
                    names.add(name)
                    break
        return names

    # -- reaching definitions -------------------------------------------------------
    def _context(self, order: int) -> Context:
        return self._contexts[order]

    def _dominates(self, d: Definition, ctx: Context) -> bool:
        """Does binding `d` run on every path to a statement with context `ctx`?"""
        if d.order < 0:
            return True
        own = self._contexts[d.order]
        if own is ctx:  # the same block (the scan shares one context per block)
            return True
        if len(own.loops) > len(ctx.loops) or len(own.branches) > len(ctx.branches):
            return False
        for own_loop, loop in zip(own.loops, ctx.loops):
            if own_loop.node is not loop.node:
                return False
        for own_branch, branch in zip(own.branches, ctx.branches):
            if own_branch.node is not branch.node or own_branch.taken != branch.taken:
                return False
        return True

    def _reaching(self, name: str, order: int) -> tuple[Definition, ...]:
        key = (name, order)
        cached = self._reach_cache.get(key)
        if cached is not None:
            return cached
        defs = self._defs.get(name, ())
        ctx = self._contexts[order]
        # In one pass over the bindings before `order` (sorted by order): the latest that
        # runs on every path to the read, and those after it that may not run. Bindings
        # of one statement share its context, so none of the latter has `last`'s order.
        last = None
        reach: list[Definition] = []
        for d in defs:
            if d.order >= order:
                break
            if self._dominates(d, ctx):
                last = d
                reach = []
            else:
                reach.append(d)
        if last is not None:
            reach.append(last)
        for loop in ctx.loops:
            first, end = self._loop_span[id(loop.node)]
            if last is not None and last.order >= first:
                continue  # rebound every iteration before the read
            reach += [d for d in defs if order <= d.order <= end]
        result = tuple(reach)
        self._reach_cache[key] = result
        return result

    def _other_side(self, d: Definition, ctx: Context) -> bool:
        """Is `d` on the other side of an `if` that the read sits in, with no loop around
        the read that could carry it over?"""
        if d.order < 0:
            return False
        for mine in self._contexts[d.order].branches:
            for theirs in ctx.branches:
                if mine.node is theirs.node and mine.taken != theirs.taken:
                    at = self._order.get(id(mine.node), -1)
                    return not any(
                        first <= at <= end
                        for first, end in (
                            self._loop_span.get(id(loop.node), (0, -1)) for loop in ctx.loops
                        )
                    )
        return False

    def _under_runtime_branch(self, d: Definition, ctx: Context | None) -> bool:
        """Is `d` inside a runtime `if` that does not also enclose the read?"""
        if d.order < 0:
            return False
        around = ctx.branches if ctx is not None else ()
        for branch in self._contexts[d.order].branches:
            if self._test_runtime.get(id(branch.node)) and not any(
                b.node is branch.node and b.taken == branch.taken for b in around
            ):
                return True
        return False

    def _name_runtime(self, name: str, order: int | None) -> bool:
        if order is None:
            return name in self.runtime_names
        reach = self._reaching(name, order)
        for d in reach:
            if d.runtime:
                return True
        if len(reach) > 1:
            ctx = self._contexts[order]
            for d in reach:
                if self._under_runtime_branch(d, ctx):
                    return True
        return False

    # -- expressions ----------------------------------------------------------------
    def _compile_time(self, expr: ast.AST | None, order: int | None) -> bool:
        # Exact type tests, commonest kinds first: every definition and `if` test of
        # every kernel comes through here. Operands are judged left to right and the
        # first runtime one decides, as `all()` over `children` would.
        kind = type(expr)
        if kind is ast.Name:
            return not self._name_runtime(expr.id, order)
        if kind is ast.Constant or expr is None:
            return True
        if kind is ast.BinOp:
            return self._compile_time(expr.left, order) and self._compile_time(expr.right, order)
        if kind is ast.Call:
            qual = self.aliases.resolve(expr.func)
            if qual and qual.startswith(TRITON) and qual not in _COMPILE_TIME_CALLS:
                return False
            if call_name(expr.func) in self._jit_names:
                return False  # @triton.jit helpers return tensors
            for arg in expr.args:
                if not self._compile_time(arg, order):
                    return False
            for keyword in expr.keywords:
                if not self._compile_time(keyword.value, order):
                    return False
            if type(expr.func) is ast.Attribute and not qual:
                # a method reads its receiver: `x.to(...)`
                return self._compile_time(expr.func.value, order)
            return True
        if kind is ast.Attribute:
            if self.aliases.resolve(expr) or expr.attr in _STATIC_ATTRIBUTES:
                return True
            return self._compile_time(expr.value, order)
        if kind is ast.Compare and all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops):
            return True  # identity tests are evaluated when the kernel compiles
        if kind is ast.Lambda or kind is ast.NamedExpr:
            return False
        for child in children(expr):
            if isinstance(child, ast.expr) and not self._compile_time(child, order):
                return False
        return True
