"""Integer widths inside a kernel, per path: whether a value is int64 or int32 where a
statement reads it, and what kind of int it is there (a compile-time int, an int
argument Triton may specialise, or a runtime tensor).

Knows, per kernel (`WidthFacts.of(fn)`, a `KernelWidths`):

* the width of an integer expression at a statement, three-valued (True int64, False
  int32 or narrower, None not known): a literal past 2**31, an int64 cast or annotation
  is int64; program ids, `tl.arange`, narrow casts, int arguments and `static_range`
  variables are int32; arithmetic, `min`/`max`/`cdiv`/`where` take the widest operand;
* a name is int64 where it is read only if every binding that reaches the read makes it
  int64 (both sides of an `if`, constexpr tests included: each specialisation compiles);
  `x = 0` / `1` / `-1` (the single-sequence path) is no evidence either way;
* whether a name holds a program id on every path, and whether an expression is
  arithmetic of constexprs and `static_range` variables (a Python int when compiled).

Knows, per module (`WidthFacts.kind`): what the receiver of a `.to()` is when the kernel
runs; a helper's parameter is what its callers pass (up to three calls deep).

Depends on: the core (helper calls and launches bound to their callees), the per-kernel
reaching definitions of `constexpr` (`fn.reaching`) and the program ids and pointers of
`values`. Nothing else of the index depends on it; rules reach it as `index.widths`.

Costs: nothing until asked; each binding's width is computed once per kernel (a binding
rebuilt from itself counts as not known meanwhile) and the reaching definitions are
cached by the kernel's `CompileTime`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ascend_lint.index.aliases import LANGUAGE, TRITON, Aliases
from ascend_lint.index.syntax import all_params, call_name
from ascend_lint.index.values import from_program_id, is_int64_cast

if TYPE_CHECKING:
    from ascend_lint.index.constexpr import Definition
    from ascend_lint.index.core import CoreFacts
    from ascend_lint.index.kernels import JitFunction

_INT64 = f"{LANGUAGE}.int64"
_NARROW_INTS = frozenset(
    f"{LANGUAGE}.{t}" for t in ("int1", "int8", "int16", "int32", "uint8", "uint16", "uint32")
)
# Calls whose value is an int32 tensor.
_INT32_CALLS = frozenset(f"{LANGUAGE}.{f}" for f in ("program_id", "num_programs", "arange"))
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


def cast_target(call: ast.Call, aliases: Aliases) -> str | None:
    """The dtype of `x.to(dt)` / `tl.cast(x, dt)` (not a bitcast), qualified."""
    if any(kw.arg == "bitcast" for kw in call.keywords):
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        return aliases.resolve(call.args[0])
    if aliases.resolve(call.func) == f"{LANGUAGE}.cast" and len(call.args) >= 2:
        return aliases.resolve(call.args[1])
    return None


class KernelWidths:
    """int64 or int32, per read, in one kernel (see the module doc)."""

    def __init__(self, fn: JitFunction, aliases: Aliases):
        self.fn = fn
        self.aliases = aliases
        self._binding_width: dict[int, bool | None] = {}

    # -- reaching definitions ------------------------------------------------------------
    def reaching(self, name: str, order: int) -> tuple[Definition, ...]:
        return self.fn.reaching(name, order)

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

    # -- widths ---------------------------------------------------------------------------
    def is_int64(self, expr: ast.AST, order: int) -> bool:
        """Is `expr` int64 on every path reaching statement `order`?"""
        return self.at(expr, order) is True

    def name(self, name: str, order: int) -> bool | None:
        return every_path_width([self.binding(b) for b in self.reaching(name, order)])

    def binding(self, binding: Definition) -> bool | None:
        """The width of the value one binding gives its name."""
        key = id(binding)
        if key in self._binding_width:
            return self._binding_width[key]
        self._binding_width[key] = None  # a value rebuilt from itself: not known meanwhile
        loop = self.loop_of(binding)
        if binding.order < 0:
            width = self._parameter(binding.name)
        elif isinstance(binding.value, ast.Constant) and binding.value.value in (0, 1, -1):
            # `i_n = 0` on a single-sequence path: a product with it cannot wrap, so it
            # is no evidence of an int32 multiply (nor of an int64 one)
            width = None
        elif binding.value is not None:
            width = self.at(binding.value, binding.order)
        elif loop is not None:
            width = self._loop_target(loop, binding.order)
        else:
            width = None
        self._binding_width[key] = width
        return width

    def _parameter(self, name: str) -> bool | None:
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

    def _loop_target(self, loop: ast.For, order: int) -> bool | None:
        it = loop.iter
        if not isinstance(it, ast.Call):
            return None
        qual = self.aliases.resolve(it.func) or call_name(it.func)
        if qual == _STATIC_RANGE:
            return False  # a Python int, int32 in arithmetic with tensors
        if qual in _RANGES or (isinstance(it.func, ast.Name) and it.func.id == "range"):
            return arithmetic_width([self.at(a, order) for a in it.args])
        return None

    def at(self, expr: ast.AST, order: int) -> bool | None:
        """The width of `expr` where statement `order` evaluates it."""
        if isinstance(expr, ast.Name):
            return self.name(expr.id, order)
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, int) and not isinstance(expr.value, bool):
                return abs(expr.value) >= 2**31
            return None
        if isinstance(expr, ast.BinOp):
            if not isinstance(expr.op, _INT_OPS):
                return None
            return arithmetic_width([self.at(expr.left, order), self.at(expr.right, order)])
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self.at(expr.operand, order)
        if isinstance(expr, ast.IfExp):
            return every_path_width([self.at(expr.body, order), self.at(expr.orelse, order)])
        if isinstance(expr, ast.Call):
            return self._call(expr, order)
        return None

    def _call(self, call: ast.Call, order: int) -> bool | None:
        if is_int64_cast(call, self.aliases):
            return True
        target = cast_target(call, self.aliases)
        if target is not None:
            return False if target in _NARROW_INTS else None
        qual = self.aliases.resolve(call.func)
        if qual in _INT32_CALLS:
            return False
        if qual in _PROMOTING_CALLS or (
            qual is None and isinstance(call.func, ast.Name) and call.func.id in _BUILTIN_PROMOTING
        ):
            return arithmetic_width([self.at(a, order) for a in call.args])
        if qual == _WHERE and len(call.args) == 3:
            return arithmetic_width([self.at(a, order) for a in call.args[1:]])
        return None  # a load, a helper: its own type

    # -- what a value is --------------------------------------------------------------------
    def is_program_id(self, expr: ast.AST, order: int) -> bool:
        """`tl.program_id(...)`, or a name every reaching binding of which is one (plus or
        minus an offset: `i_t = tl.program_id(1) + NT_OFFSET`)."""
        if isinstance(expr, ast.Call):
            return self.aliases.resolve(expr.func) == f"{LANGUAGE}.program_id"
        if not isinstance(expr, ast.Name):
            return False
        return self.from_program_id_on_every_path(expr.id, order)

    def from_program_id_on_every_path(self, name: str, order: int) -> bool:
        reach = self.reaching(name, order)
        program_ids = self.fn.facts(self.aliases).program_ids
        return bool(reach) and all(
            b.value is not None and from_program_id(b.value, program_ids, self.aliases)
            for b in reach
        )

    def is_compile_time_int(self, expr: ast.AST, order: int) -> bool:
        """Arithmetic of constexpr parameters, `tl.static_range` variables and int literals,
        naming at least one of the former: Triton evaluates it as a Python int. (A local
        assigned from such a value is a tensor: assignments convert.)"""
        seen_name = False
        for node in ast.walk(expr):
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


class WidthFacts:
    """Integer widths and int kinds of every kernel of a module (see the module doc)."""

    def __init__(self, core: CoreFacts):
        self.core = core
        self.aliases = core.aliases
        self._widths: dict[int, KernelWidths] = {}
        self._statements: dict[int, ast.stmt] = {}

    def of(self, fn: JitFunction) -> KernelWidths:
        found = self._widths.get(id(fn))
        if found is None:
            found = self._widths[id(fn)] = KernelWidths(fn, self.aliases)
        return found

    def kind(self, expr: ast.AST, fn: JitFunction, order: int, depth: int = 0) -> IntKind:
        """What `expr` is where statement `order` of `fn` reads it."""
        widths = self.of(fn)
        if isinstance(expr, ast.Name):
            reach = widths.reaching(expr.id, order)
            if len(reach) == 1 and reach[0].order < 0:
                return self._parameter(expr.id, fn, depth)
        if widths.is_compile_time_int(expr, order):
            if isinstance(expr, ast.Name):
                return IntKind("constexpr", "static_range")
            return IntKind("constexpr", "expression")
        return _RUNTIME

    def _parameter(self, name: str, fn: JitFunction, depth: int) -> IntKind:
        if name in fn.constexpr_params:
            return IntKind("constexpr", "constexpr")
        if name in fn.do_not_specialize or name in fn.facts(self.aliases).pointers:
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
