"""Values inside a kernel: every question about what a value is, answered in one place.

`KernelValues` (one per kernel, `kernel_values(fn, aliases)`) is the query object; each answer
is given where a statement reads the value, along the definitions that reach it
(`reaching`, from the compile-time analysis of `constexpr`):

* the definitions of a name that reach a statement, and the one every path runs
  (`reaching`, `only_definition`);
* integer width, three-valued (True int64, False int32 or narrower, None not known):
  a literal past 2**31, an int64 cast or annotation is int64; program ids, `tl.arange`,
  narrow casts, int arguments and `static_range` variables are int32; arithmetic,
  `min`/`max`/`cdiv`/`where` take the widest operand. A name is int64 where it is read
  (`is_int64`) only if every definition that reaches the read makes it int64; it may be
  int64 (`may_be_int64`) if one does. `x = 0` / `1` / `-1` (the single-sequence path)
  is no evidence either way;
* program ids (`is_program_id`): a `tl.program_id(...)` call, or a name every reaching
  definition of which is one, plus or minus an offset, through casts;
* compile-time ints (`is_compile_time_int`): arithmetic of constexprs and
  `static_range` variables, which Triton evaluates as Python ints;
* pointers and block pointers (names computed from pointer parameters by `+`/`-`, and
  names set from `make_block_ptr`/`advance`) and loop-derived names: flow-insensitive
  sets, a pointer stays a pointer whatever the path.

Also here, for every module of the index: what a call is (`is_program_id_call`,
`is_program_count_call`, `is_int64_cast`, `cast_target`), `strip_casts` and
`pointer_root`.

`ValueFacts` (one per module, `index.values`) adds what needs the module: what kind of
int a value is when the kernel runs (`kind`: compile-time, specialisable argument or
runtime tensor; a helper's parameter is what its callers pass, up to three calls deep).

Depends on: the kernel scan (`kernels`) and its reaching definitions (`constexpr`);
`ValueFacts` also on the core's helper calls and launches. Every facts module may ask it.

Costs: nothing until asked; each definition's width is computed once per kernel (a
definition rebuilt from itself counts as not known meanwhile); the flow-insensitive
sets are one worklist pass per kernel on first use.
"""

from __future__ import annotations

import ast
import weakref
from collections import deque
from dataclasses import dataclass

from ascend_lint.index.aliases import LANGUAGE, TRITON, Aliases
from ascend_lint.index.constexpr import Definition
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.syntax import (
    MAX_FIXPOINT_ROUNDS,
    all_params,
    call_name,
    dotted,
    frozen_names,
    walk,
)

_INT64 = f"{LANGUAGE}.int64"
_NARROW_INTS = frozenset(
    f"{LANGUAGE}.{t}" for t in ("int1", "int8", "int16", "int32", "uint8", "uint16", "uint32")
)
_INT32_CALLS = frozenset(f"{LANGUAGE}.{f}" for f in ("num_programs", "arange"))
# Calls whose integer result takes the widest type of the arguments listed.
_PROMOTING_CALLS = frozenset(
    {f"{LANGUAGE}.{f}" for f in ("minimum", "maximum", "cdiv", "abs")} | {f"{TRITON}.cdiv"}
)
_BUILTIN_PROMOTING = frozenset({"min", "max", "abs"})
_WHERE = f"{LANGUAGE}.where"
_STATIC_RANGE = f"{LANGUAGE}.static_range"
_RANGES = frozenset({"range", f"{LANGUAGE}.range"})
_INT_OPS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.FloorDiv,
    ast.Mod,
    ast.LShift,
    ast.RShift,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
)
_POINTER_OPS = {
    f"{LANGUAGE}.{op}"
    for op in (
        "load",
        "store",
        "make_block_ptr",
        "atomic_add",
        "atomic_max",
        "atomic_min",
        "atomic_xchg",
        "atomic_cas",
    )
}
_BLOCK_POINTER_OPS = {f"{LANGUAGE}.make_block_ptr", f"{LANGUAGE}.advance"}


# -- what a call is ------------------------------------------------------------------------
def _is_triton_call(call: ast.AST, aliases: Aliases, member: str) -> bool:
    """A call of triton's `member` however the module spells it: resolved through the
    imports (`tl.program_id`, an extension module of triton's), or, where the receiver
    is no import the index knows (`ext.program_id` of a module bound at run time), by
    the member's name."""
    if not isinstance(call, ast.Call):
        return False
    qual = aliases.resolve(call.func)
    if qual is not None:
        return qual.startswith(TRITON) and qual.rsplit(".", 1)[-1] == member
    parts = dotted(call.func)
    if parts and parts[0] in aliases.foreign:
        return False  # `mylib.program_id`: another library's
    return call_name(call.func) == member


def is_program_id_call(call: ast.AST, aliases: Aliases) -> bool:
    """`tl.program_id(axis)`, however spelled."""
    return _is_triton_call(call, aliases, "program_id")


def is_program_count_call(call: ast.AST, aliases: Aliases) -> bool:
    """`tl.num_programs(axis)`, however spelled."""
    return _is_triton_call(call, aliases, "num_programs")


def is_int64_cast(expr: ast.AST, aliases: Aliases) -> bool:
    """`x.to(tl.int64)` or `tl.cast(x, tl.int64)`."""
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Attribute) and expr.func.attr == "to" and expr.args:
        return aliases.resolve(expr.args[0]) == _INT64
    if aliases.resolve(expr.func) == f"{LANGUAGE}.cast" and len(expr.args) >= 2:
        return aliases.resolve(expr.args[1]) == _INT64
    return False


def cast_target(call: ast.Call, aliases: Aliases) -> str | None:
    """The dtype of `x.to(dt)` / `tl.cast(x, dt)` (not a bitcast), qualified."""
    if any(kw.arg == "bitcast" for kw in call.keywords):
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        return aliases.resolve(call.args[0])
    if aliases.resolve(call.func) == f"{LANGUAGE}.cast" and len(call.args) >= 2:
        return aliases.resolve(call.args[1])
    return None


def strip_casts(expr: ast.AST, aliases: Aliases) -> ast.AST:
    """`x.to(tl.int64)`, `tl.cast(x, ...)`, `x.to(tl.int32)` -> x: what a value is made
    of, whatever its width."""
    while isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
            expr = expr.func.value
        elif aliases.resolve(expr.func) == f"{LANGUAGE}.cast" and expr.args:
            expr = expr.args[0]
        else:
            break
    return expr


def pointer_root(expr: ast.AST) -> str | None:
    """The name a pointer expression starts from: `q + (bos * H + i_h) * K` -> 'q'."""
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        expr = expr.left
    return expr.id if isinstance(expr, ast.Name) else None


def pointer_names(fn: JitFunction, roots: set[str]) -> set[str]:
    """`roots` plus every local computed from them (`g_base = g + ...`, `p_g = ...`),
    loop variables of ranges over them (`for pos in range(start, end)`) included."""
    tainted = set(roots)
    deps = fn.dependencies()
    for _ in range(MAX_FIXPOINT_ROUNDS):
        grown = {name for name, reads in deps.items() if name not in tainted and reads & tainted}
        if not grown:
            break
        tainted |= grown
    return tainted


def arithmetic_width(widths: list[bool | None]) -> bool | None:
    """Integer arithmetic is int64 when one operand is, int32 when all are."""
    if any(w is True for w in widths):
        return True
    if widths and all(w is False for w in widths):
        return False
    return None


def every_path_width(widths: list[bool | None]) -> bool | None:
    """A value that depends on the path: int64 only when it is int64 on every path."""
    if not widths:
        return None
    if any(w is False for w in widths):
        return False
    if all(w is True for w in widths):
        return True
    return None


# -- one kernel ----------------------------------------------------------------------------
def kernel_values(fn: JitFunction, aliases: Aliases) -> KernelValues:
    """The value model of `fn`: what every value is where it is read (built once)."""
    model = fn.models.get(__name__)
    if model is None:
        model = fn.models[__name__] = KernelValues(fn, aliases)
    return model


class KernelValues:
    """What every value of one kernel is where a statement reads it (see the module doc)."""

    def __init__(self, fn: JitFunction, aliases: Aliases):
        # The kernel holds this object: a strong reference back would be a cycle that
        # keeps both (and the module's tree) alive until the cycle collector runs.
        self._fn = weakref.ref(fn)
        self.aliases = aliases
        # The rules ask this of every name they follow: the kernel's reaching
        # definitions, without the calls through the kernel in between (the compile-time
        # model holds no reference to the kernel, so this makes no cycle).
        self.reaching = fn.compile_time.reaching
        self._binding_width: dict[int, bool | None] = {}
        self._binding_may: dict[int, bool] = {}
        self._binding_pid: dict[int, bool] = {}
        self._sets: tuple[set[str], set[str], set[str]] | None = None
        self._paths: PathExpansion | None = None

    @property
    def fn(self) -> JitFunction:
        fn = self._fn()
        assert fn is not None, "the kernel's value model outlived the kernel"
        return fn

    # -- definitions ---------------------------------------------------------------------
    def only_definition(self, name: str, order: int) -> Definition | None:
        """The one definition of `name` every path to statement `order` brings, or None
        (several reach it, or it is a parameter or loop target with no value)."""
        reach = self.reaching(name, order)
        if len(reach) == 1 and reach[0].value is not None:
            return reach[0]
        return None

    def sources(self, name: str, order: int, limit: int = 64) -> list[tuple[str, int]]:
        """The names the value of `name` at statement `order` is computed from, each with
        the statement that reads it, along the reaching definitions, nearest first
        (breadth-first; `limit` pairs at most)."""
        found: list[tuple[str, int]] = []
        seen = {(name, order)}
        todo = deque([(name, order)])
        while todo and len(found) < limit:
            current, at = todo.popleft()
            for b in self.reaching(current, at):
                if b.value is None or b.order < 0:
                    continue
                for read in sorted(frozen_names(b.value)):
                    pair = (read, b.order)
                    if pair not in seen:
                        seen.add(pair)
                        found.append(pair)
                        todo.append(pair)
        return found

    def loop_of(self, binding: Definition) -> ast.For | None:
        """The `for` whose target `binding` is, or None."""
        order = self.fn.compile_time.loop_of(binding)
        if order is None:
            return None
        loop = self.fn.statements[order]
        return loop if isinstance(loop, ast.For) else None

    def is_static_loop(self, binding: Definition) -> bool:
        """Is `binding` the target of a `tl.static_range` loop?"""
        loop = self.loop_of(binding)
        return (
            loop is not None
            and isinstance(loop.iter, ast.Call)
            and self.aliases.resolve(loop.iter.func) == _STATIC_RANGE
        )

    # -- widths --------------------------------------------------------------------------
    def is_int64(self, expr: ast.AST, order: int) -> bool:
        """Is `expr` int64 on every path reaching statement `order`?"""
        return self.width(expr, order) is True

    def may_be_int64(self, expr: ast.AST, order: int) -> bool:
        """Can `expr` be int64 where statement `order` reads it: is one of the
        definitions that reach a name it reads int64 (or built from one that is)?"""
        if self.width(expr, order) is True:
            return True
        for node in walk(expr):
            if isinstance(node, ast.Name):
                if any(self._binding_may_be_int64(b) for b in self.reaching(node.id, order)):
                    return True
            elif isinstance(node, ast.Call) and is_int64_cast(node, self.aliases):
                return True
        return False

    def _binding_may_be_int64(self, binding: Definition) -> bool:
        key = id(binding)
        known = self._binding_may.get(key)
        if known is not None:
            return known
        self._binding_may[key] = False  # rebuilt from itself: no evidence meanwhile
        found = self.binding_width(binding) is True
        if not found and binding.value is not None and binding.order >= 0:
            found = self.may_be_int64(binding.value, binding.order)
        self._binding_may[key] = found
        return found

    def name_width(self, name: str, order: int) -> bool | None:
        return every_path_width([self.binding_width(b) for b in self.reaching(name, order)])

    def binding_width(self, binding: Definition) -> bool | None:
        """The width of the value one definition gives its name."""
        key = id(binding)
        if key in self._binding_width:
            return self._binding_width[key]
        self._binding_width[key] = None  # a value rebuilt from itself: not known meanwhile
        loop = self.loop_of(binding)
        if binding.order < 0:
            width = self._parameter_width(binding.name)
        elif isinstance(binding.value, ast.Constant) and binding.value.value in (0, 1, -1):
            # `i_n = 0` on a single-sequence path: a product with it cannot wrap, so it
            # is no evidence of an int32 multiply (nor of an int64 one)
            width = None
        elif binding.value is not None:
            width = self.width(binding.value, binding.order)
        elif loop is not None:
            width = self._loop_target_width(loop, binding.order)
        else:
            width = None
        self._binding_width[key] = width
        return width

    def _parameter_width(self, name: str) -> bool | None:
        arg = next(a for a in all_params(self.fn.node.args) if a.arg == name)
        ann = arg.annotation
        if ann is not None:
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                return True if ann.value.endswith("int64") else None
            qual = self.aliases.resolve(ann)
            if qual == _INT64:
                return True
            if qual in _NARROW_INTS or name in self.fn.constexpr_params:
                return False
            return None
        # An int argument is passed as int32 (wider only for values past 2**31).
        return False

    def _loop_target_width(self, loop: ast.For, order: int) -> bool | None:
        it = loop.iter
        if not isinstance(it, ast.Call):
            return None
        qual = self.aliases.resolve(it.func) or call_name(it.func)
        if qual == _STATIC_RANGE:
            return False  # a Python int, int32 in arithmetic with tensors
        if qual in _RANGES or (isinstance(it.func, ast.Name) and it.func.id == "range"):
            return arithmetic_width([self.width(a, order) for a in it.args])
        return None

    def width(self, expr: ast.AST, order: int) -> bool | None:
        """The width of `expr` where statement `order` evaluates it."""
        if isinstance(expr, ast.Name):
            return self.name_width(expr.id, order)
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, int) and not isinstance(expr.value, bool):
                return abs(expr.value) >= 2**31
            return None
        if isinstance(expr, ast.BinOp):
            if not isinstance(expr.op, _INT_OPS):
                return None
            return arithmetic_width([self.width(expr.left, order), self.width(expr.right, order)])
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self.width(expr.operand, order)
        if isinstance(expr, ast.IfExp):
            return every_path_width([self.width(expr.body, order), self.width(expr.orelse, order)])
        if isinstance(expr, ast.Call):
            return self._call_width(expr, order)
        return None

    def _call_width(self, call: ast.Call, order: int) -> bool | None:
        if is_int64_cast(call, self.aliases):
            return True
        target = cast_target(call, self.aliases)
        if target is not None:
            return False if target in _NARROW_INTS else None
        if is_program_id_call(call, self.aliases):
            return False
        qual = self.aliases.resolve(call.func)
        if qual in _INT32_CALLS:
            return False
        if qual in _PROMOTING_CALLS or (
            qual is None and isinstance(call.func, ast.Name) and call.func.id in _BUILTIN_PROMOTING
        ):
            return arithmetic_width([self.width(a, order) for a in call.args])
        if qual == _WHERE and len(call.args) == 3:
            return arithmetic_width([self.width(a, order) for a in call.args[1:]])
        return None  # a load, a helper: its own type

    # -- what a value is -----------------------------------------------------------------
    def is_program_id(self, expr: ast.AST, order: int) -> bool:
        """`tl.program_id(...)` (through casts), or a name every reaching definition of
        which is one, plus or minus an offset (`i_t = tl.program_id(1) + NT_OFFSET`)."""
        expr = strip_casts(expr, self.aliases)
        if isinstance(expr, ast.Call):
            return is_program_id_call(expr, self.aliases)
        if not isinstance(expr, ast.Name):
            return False
        reach = self.reaching(expr.id, order)
        return bool(reach) and all(self._binding_is_program_id(b) for b in reach)

    def _binding_is_program_id(self, binding: Definition) -> bool:
        key = id(binding)
        known = self._binding_pid.get(key)
        if known is not None:
            return known
        self._binding_pid[key] = False  # `pid = pid + 1` in a loop: not an id meanwhile
        found = binding.value is not None and self._offset_program_id(
            binding.value, max(binding.order, 0)
        )
        self._binding_pid[key] = found
        return found

    def _offset_program_id(self, expr: ast.AST, order: int) -> bool:
        expr = strip_casts(expr, self.aliases)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            left = self._offset_program_id(expr.left, order)
            right = isinstance(expr.op, ast.Add) and self._offset_program_id(expr.right, order)
            return left or right
        return self.is_program_id(expr, order)

    def is_compile_time_int(self, expr: ast.AST, order: int) -> bool:
        """Arithmetic of constexpr parameters, `tl.static_range` variables and int literals,
        naming at least one of the former: Triton evaluates it as a Python int. (A local
        assigned from such a value is a tensor: assignments convert.)"""
        seen_name = False
        for node in walk(expr):
            if isinstance(node, ast.Name):
                reach = self.reaching(node.id, order)
                if not reach:
                    return False
                for b in reach:
                    constexpr = b.order < 0 and b.name in self.fn.constexpr_params
                    if not (constexpr or self.is_static_loop(b)):
                        return False
                seen_name = True
            elif isinstance(node, ast.Constant):
                if not isinstance(node.value, int):
                    return False
            elif not isinstance(
                node, (ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.expr_context)
            ):
                return False
        return seen_name

    # -- per compile-time path -----------------------------------------------------------
    def on_paths(
        self, expr: ast.AST, order: int, keep: frozenset[str] = frozenset()
    ) -> list[ValuePath] | None:
        """What `expr` is where statement `order` reads it, on each combination of the
        `if` sides its definitions sit under: a sum of products of atoms (parameters,
        loads, program ids, loop targets, literals; names in `keep` stay names), locals
        replaced by the definition that reaches the read on that path. None when the
        expansion grows past its bounds (see `PathExpansion`)."""
        if self._paths is None:
            self._paths = PathExpansion(self)
        return self._paths.expand(expr, order, keep)

    # -- flow-insensitive sets -----------------------------------------------------------
    @property
    def pointers(self) -> set[str]:
        """Pointer parameters and locals computed from them by `+` / `-` (not block
        pointers)."""
        return self._computed_sets()[0]

    @property
    def block_pointers(self) -> set[str]:
        """Names set from `tl.make_block_ptr` / `tl.advance`."""
        return self._computed_sets()[1]

    @property
    def loop_derived(self) -> set[str]:
        """Runtime loop variables and values computed from them."""
        return self._computed_sets()[2]

    def _computed_sets(self) -> tuple[set[str], set[str], set[str]]:
        if self._sets is None:
            self._sets = self._compute_sets()
        return self._sets

    def _compute_sets(self) -> tuple[set[str], set[str], set[str]]:
        fn, aliases = self.fn, self.aliases
        pointers: set[str] = set()
        for call, _ in fn.calls:
            if aliases.resolve(call.func) in _POINTER_OPS and call.args:
                root = pointer_root(call.args[0])
                if root is not None:
                    pointers.add(root)
        loop_derived = set(fn.loop_variables)
        mentions = fn.dependencies()
        block_pointers = {
            name
            for name, values in fn.assignments.items()
            if any(
                isinstance(v, ast.Call) and aliases.resolve(v.func) in _BLOCK_POINTER_OPS
                for v in values
            )
        }
        spread: set[str] = set()  # pointers whose own roots are already added as pointers
        # A worklist: each fact of a name depends only on the facts of the names its
        # values read, so a name is judged again only when one of those (or itself, for
        # the pointer spread) joins a set. The sets only grow and every test is monotone.
        readers: dict[str, list[str]] = {}
        for name in fn.assignments:
            for read in mentions.get(name, ()):
                readers.setdefault(read, []).append(name)
        todo = deque(fn.assignments)
        queued = set(todo)
        while todo:
            name = todo.popleft()
            queued.discard(name)
            values = fn.assignments[name]
            grown: list[str] = []
            if name not in loop_derived and mentions.get(name, frozenset()) & loop_derived:
                loop_derived.add(name)
                grown.append(name)
            if name not in pointers and any(pointer_root(v) in pointers for v in values):
                pointers.add(name)
                grown.append(name)
            if name in pointers and name not in spread:
                # `q_ptr = q + offset` with q_ptr a pointer: q is one too
                spread.add(name)
                for value in values:
                    root = pointer_root(value)
                    if root is not None and root not in pointers:
                        pointers.add(root)
                        grown.append(root)
            for changed in grown:
                for reader in (changed, *readers.get(changed, ())):
                    if reader not in queued and reader in fn.assignments:
                        queued.add(reader)
                        todo.append(reader)
        return pointers - block_pointers, block_pointers, loop_derived


# -- values per path (the sum-of-products form of a value, one per combination of the
# `if` sides its definitions sit under) ------------------------------------------------
@dataclass(frozen=True)
class PathProduct:
    """One summand of a value on one path: its factors (atoms, casts stripped) and the
    definitions that were followed to reach them, outermost first."""

    factors: tuple[ast.AST, ...]
    through: tuple[Definition, ...] = ()

    def names(self) -> list[str]:
        return [f.id for f in self.factors if isinstance(f, ast.Name)]


@dataclass(frozen=True)
class ValuePath:
    """A value on one path: the `if` sides the path takes (`(test, taken)`, a test keyed
    by its text when it is compile-time, so that two `if IS_VARLEN:` agree) and the
    value as a sum of products."""

    decisions: frozenset[tuple[object, bool]]
    products: tuple[PathProduct, ...]


class _Unbounded(Exception):
    """The expansion outgrew its bounds."""


class PathExpansion:
    """`KernelValues.on_paths`, memoised per kernel.

    A name is replaced by each definition that reaches the read (`reaching`) on a path:
    the `if` sides its definitions sit under are enumerated (at most `MAX_TESTS` at a
    time), and on each combination a definition is dropped when a later one that runs
    on that combination (in no loop the read is outside of) overwrites it before the
    read. Products distribute over sums. Bounds: `MAX_PATHS` paths, `MAX_PRODUCTS`
    summands per path, `MAX_DEPTH` names deep; a name rebuilt from itself stays a name.
    """

    MAX_PATHS = 16
    MAX_PRODUCTS = 64
    MAX_DEPTH = 10
    MAX_TESTS = 4

    def __init__(self, values: KernelValues):
        self._values = weakref.ref(values)
        self._keys: dict[int, tuple[object, bool]] = {}  # id(Branch) -> (test key, taken)
        # (id(expr), order, keep) -> (expr, paths): the expression is held so that its id
        # is not reused by another while the entry lives
        self._memo: dict[tuple, tuple[ast.AST, list[ValuePath] | None]] = {}

    def expand(self, expr: ast.AST, order: int, keep: frozenset[str]) -> list[ValuePath] | None:
        key = (id(expr), order, keep)
        known = self._memo.get(key)
        if known is not None and known[0] is expr:
            return known[1]
        values = self._values()
        assert values is not None
        fn = values.fn
        start = frozenset(
            self._branch_key(fn, b) for b in fn.context(fn.statements[order]).branches
        )
        try:
            found = self._expand(values, expr, order, start, keep, 0, frozenset())
            paths: dict[frozenset, list[PathProduct]] = {}
            for decisions, products in found:
                paths.setdefault(decisions, []).extend(products)
            result: list[ValuePath] | None = [ValuePath(d, tuple(p)) for d, p in paths.items()]
        except _Unbounded:
            result = None
        self._memo[key] = (expr, result)
        return result

    def _branch_key(self, fn: JitFunction, branch) -> tuple[object, bool]:
        known = self._keys.get(id(branch))
        if known is not None:
            return known
        test, taken = branch.test, branch.taken
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, taken = test.operand, not taken
        if fn.compile_time.is_runtime(branch.test, branch.node):
            key: tuple[object, bool] = (("runtime", id(branch.node)), branch.taken)
        else:
            key = (ast.unparse(test), taken)  # (`ast.dump` builds a reference cycle per call)
        self._keys[id(branch)] = key
        return key

    def _expand(
        self,
        values: KernelValues,
        expr: ast.AST,
        order: int,
        decisions: frozenset,
        keep: frozenset[str],
        depth: int,
        stack: frozenset,
    ) -> list[tuple[frozenset, list[PathProduct]]]:
        expr = strip_casts(expr, values.aliases)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult)):
            out = []
            for left_decisions, left in self._expand(
                values, expr.left, order, decisions, keep, depth, stack
            ):
                for both, right in self._expand(
                    values, expr.right, order, left_decisions, keep, depth, stack
                ):
                    if isinstance(expr.op, ast.Mult):
                        if len(left) * len(right) > self.MAX_PRODUCTS:
                            raise _Unbounded
                        combined = [
                            PathProduct(a.factors + b.factors, a.through + b.through)
                            for a in left
                            for b in right
                        ]
                    else:
                        combined = left + right
                        if len(combined) > self.MAX_PRODUCTS:
                            raise _Unbounded
                    out.append((both, combined))
            if len(out) > self.MAX_PATHS:
                raise _Unbounded
            return out
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.UAdd, ast.USub)):
            return self._expand(values, expr.operand, order, decisions, keep, depth, stack)
        atom = [(decisions, [PathProduct((expr,))])]
        if not isinstance(expr, ast.Name) or expr.id in keep or (expr.id, order) in stack:
            return atom
        if depth >= self.MAX_DEPTH:
            raise _Unbounded
        out = []
        inner = stack | {(expr.id, order)}
        for path, binding in self._alternatives(values, expr.id, order, decisions):
            if binding.value is None or binding.order < 0:
                out.append((path, [PathProduct((expr,))]))
                continue
            for deeper, products in self._expand(
                values, binding.value, binding.order, path, keep, depth + 1, inner
            ):
                out.append(
                    (deeper, [PathProduct(p.factors, (binding, *p.through)) for p in products])
                )
        if len(out) > self.MAX_PATHS:
            raise _Unbounded
        return out or atom

    def _alternatives(
        self, values: KernelValues, name: str, order: int, decisions: frozenset
    ) -> list[tuple[frozenset, Definition]]:
        """The definitions of `name` that reach statement `order` on the paths that
        agree with `decisions`, each with the `if` sides its path takes."""
        fn = values.fn
        reach = values.reaching(name, order)
        if len(reach) == 1:
            return [(decisions, reach[0])]
        decided = dict(decisions)
        sides = {
            id(d): dict(
                self._branch_key(fn, b) for b in fn.context(fn.statements[d.order]).branches
            )
            if d.order >= 0
            else {}
            for d in reach
        }
        open_tests = sorted({t for s in sides.values() for t in s if t not in decided}, key=repr)
        if len(open_tests) > self.MAX_TESTS:
            return [(decisions, d) for d in reach if _agrees(sides[id(d)], decided)]
        read_loops = {id(lp.node) for lp in fn.context(fn.statements[order]).loops}
        groups: dict[tuple[int, ...], tuple[list[dict], list[Definition]]] = {}
        for choice in range(2 ** len(open_tests)):
            taken = {t: bool(choice >> i & 1) for i, t in enumerate(open_tests)}
            path = {**decided, **taken}
            live = [d for d in reach if _agrees(sides[id(d)], path)]
            live = [
                d
                for d in live
                if not any(
                    d.order < later.order < order
                    and all(
                        id(lp.node) in read_loops
                        for lp in fn.context(fn.statements[later.order]).loops
                    )
                    for later in live
                )
            ]
            if not live:
                continue
            group = groups.setdefault(tuple(id(d) for d in live), ([], live))
            group[0].append(taken)
        out = []
        for choices, live in groups.values():
            common = {t: v for t, v in choices[0].items() if all(c[t] == v for c in choices)}
            agreed = decisions | frozenset(common.items())  # one type per name (`path` is a dict)
            out += [(agreed, d) for d in live]
        return out


def _agrees(sides: dict, path: dict) -> bool:
    return all(path.get(test, taken) == taken for test, taken in sides.items())


# -- the module ----------------------------------------------------------------------------
@dataclass(frozen=True)
class IntKind:
    """What an int value is when the kernel runs.

    kind: "constexpr" (a compile-time int), "argument" (an int argument Triton may
    specialise) or None (a runtime tensor). source: how that is known: "static_range"
    (a `tl.static_range` variable), "expression" (arithmetic of compile-time ints),
    "constexpr" (a `tl.constexpr` parameter), "unlaunched" (an argument of a kernel
    nothing in the module launches or calls), "helper" (a helper's parameter, through
    what `caller` passes as `arg`), or "" (nothing more to say)."""

    kind: str | None
    source: str = ""
    function: str = ""
    caller: str = ""
    arg: ast.AST | None = None


_RUNTIME = IntKind(None)
_ARGUMENT = IntKind("argument")


class ValueFacts:
    """The value model of every kernel of a module, and what needs the whole module."""

    def __init__(self, core: CoreFacts):
        self.core = core
        self.aliases = core.aliases
        self._statements: dict[int, ast.stmt] = {}

    def of(self, fn: JitFunction) -> KernelValues:
        return kernel_values(fn, self.aliases)

    def kind(self, expr: ast.AST, fn: JitFunction, order: int, depth: int = 0) -> IntKind:
        """What `expr` is where statement `order` of `fn` reads it."""
        values = self.of(fn)
        if isinstance(expr, ast.Name):
            reach = values.reaching(expr.id, order)
            if len(reach) == 1 and reach[0].order < 0:
                return self._parameter(expr.id, fn, depth)
        if values.is_compile_time_int(expr, order):
            if isinstance(expr, ast.Name):
                return IntKind("constexpr", "static_range")
            return IntKind("constexpr", "expression")
        return _RUNTIME

    def _parameter(self, name: str, fn: JitFunction, depth: int) -> IntKind:
        if name in fn.constexpr_params:
            return IntKind("constexpr", "constexpr")
        if name in fn.do_not_specialize or name in self.of(fn).pointers:
            return _RUNTIME
        calls = self.core.helper_calls_to(fn)
        launched = bool(self.core.launches_of(fn))
        if not calls and not launched:
            return IntKind("argument", "unlaunched", fn.name)
        if launched or depth >= 3:
            return _ARGUMENT
        # a @triton.jit helper: its parameter holds what each caller passes
        found = _RUNTIME
        for binding in calls:
            caller = binding.caller
            stmt = self._statement(binding.call, caller) if caller is not None else None
            if caller is None or stmt is None:
                return _ARGUMENT
            for arg in binding.args.get(name, []):
                kind = self.kind(arg, caller, caller.order_of(stmt), depth + 1).kind
                if kind is None:
                    continue
                here = IntKind(kind, "helper", fn.name, caller.name, arg)
                if kind == "constexpr":
                    return here
                found = here
        return found

    def _statement(self, call: ast.Call, caller: JitFunction) -> ast.stmt | None:
        if id(call) not in self._statements:
            for c, stmt in caller.calls:
                self._statements.setdefault(id(c), stmt)
        return self._statements.get(id(call))
