"""ASC007 late-int64-cast: `(a * b).to(tl.int64)` multiplies in int32 first, and `.to()`
on a compile-time int (a constexpr, or an int argument Triton specialised) fails to compile.

Whether an operand is already int64 is decided per reaching definition: a name is int64
where it is read only if every definition that reaches the read makes it int64 (both
sides of an `if`, constexpr tests included: each specialisation is compiled).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from ascend_lint.codemods import node_span
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import (
    LANGUAGE,
    TRITON,
    Aliases,
    Context,
    JitFunction,
    KernelIndex,
    ValueFacts,
    additive_terms,
    call_name,
    factors,
    from_program_id,
    is_int64_cast,
    names_in,
)
from ascend_lint.index.syntax import all_params
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

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


def _products(expr: ast.AST) -> list[ast.BinOp]:
    """Top-level products of a sum (not those hidden inside calls such as `min()`)."""
    out = []
    for term in additive_terms(expr):
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
            out.append(term)
    return out


# Widths are three-valued: True int64, False int32 (or narrower), None not known.
def _arithmetic(widths: list[bool | None]) -> bool | None:
    """Integer arithmetic is int64 when one operand is, int32 when all are."""
    if any(w is True for w in widths):
        return True
    if widths and all(w is False for w in widths):
        return False
    return None


def _every_path(widths: list[bool | None]) -> bool | None:
    """A value that depends on the path: int64 only when it is int64 on every path."""
    if not widths:
        return None
    if any(w is False for w in widths):
        return False
    if all(w is True for w in widths):
        return True
    return None


@dataclass(eq=False)
class _Binding:
    """One binding of a name in a kernel: the parameter (order -1), an assignment (its
    value) or a loop target (`loop`, value None)."""

    name: str
    order: int  # index of the binding statement in `fn.statements`
    value: ast.AST | None
    loop: ast.For | None = None


class _Widths:
    """int64 or int32, per read: reaching definitions over the kernel's statements (the
    last binding that runs on every path to the read, those after it under branches,
    and, inside a loop, those later in the body carried from the previous iteration)."""

    def __init__(self, fn: JitFunction, aliases: Aliases):
        self.fn = fn
        self.aliases = aliases
        self._bindings: dict[str, list[_Binding]] = {}
        self._reach: dict[tuple[str, int], list[_Binding]] = {}
        self._binding_width: dict[int, bool | None] = {}
        self._contexts: dict[int, Context] = {}

    # -- bindings and reaching definitions ----------------------------------------------
    def bindings(self, name: str) -> list[_Binding]:
        found = self._bindings.get(name)
        if found is None:
            fn = self.fn
            found = [_Binding(name, -1, None)] if name in fn.params else []
            found += [_Binding(name, order, value) for order, value in fn.definitions.get(name, [])]
            for order, _static in fn.loop_targets.get(name, []):
                loop = fn.statements[order]
                found.append(
                    _Binding(name, order, None, loop if isinstance(loop, ast.For) else None)
                )
            found.sort(key=lambda b: b.order)
            self._bindings[name] = found
        return found

    def _context(self, order: int) -> Context:
        ctx = self._contexts.get(order)
        if ctx is None:
            ctx = self._contexts[order] = self.fn.context(self.fn.statements[order])
        return ctx

    def _dominates(self, binding: _Binding, ctx: Context) -> bool:
        if binding.order < 0:
            return True
        own = self._context(binding.order)
        if own is ctx:
            return True
        if len(own.loops) > len(ctx.loops) or len(own.branches) > len(ctx.branches):
            return False
        if any(a.node is not b.node for a, b in zip(own.loops, ctx.loops)):
            return False
        return all(
            a.node is b.node and a.taken == b.taken for a, b in zip(own.branches, ctx.branches)
        )

    def _other_side(self, binding: _Binding, ctx: Context) -> bool:
        """Is `binding` on the other side of an `if` that the read sits in, with no loop
        around both that could carry it over to the read?"""
        if binding.order < 0:
            return False
        for mine in self._context(binding.order).branches:
            for theirs in ctx.branches:
                if mine.node is theirs.node and mine.taken != theirs.taken:
                    at = self.fn.statement_order().get(id(mine.node), -1)
                    return not any(
                        first <= at <= end
                        for first, end in (
                            self.fn.loop_spans.get(id(loop.node), (0, -1)) for loop in ctx.loops
                        )
                    )
        return False

    def reaching(self, name: str, order: int) -> list[_Binding]:
        key = (name, order)
        found = self._reach.get(key)
        if found is not None:
            return found
        everything = self.bindings(name)
        ctx = self._context(order)
        last = None
        reach: list[_Binding] = []
        for binding in everything:
            if binding.order >= order:
                break
            if self._dominates(binding, ctx):
                last, reach = binding, []
            elif not self._other_side(binding, ctx):
                reach.append(binding)
        if last is not None:
            reach.append(last)
        for loop in ctx.loops:
            first, end = self.fn.loop_spans.get(id(loop.node), (order, order))
            if last is not None and last.order >= first:
                continue  # rebound every iteration before the read
            reach += [b for b in everything if order <= b.order <= end and b not in reach]
        self._reach[key] = reach
        return reach

    # -- widths ---------------------------------------------------------------------------
    def name(self, name: str, order: int) -> bool | None:
        reach = self.reaching(name, order)
        return _every_path([self.binding(b) for b in reach])

    def binding(self, binding: _Binding) -> bool | None:
        key = id(binding)
        if key in self._binding_width:
            return self._binding_width[key]
        self._binding_width[key] = None  # a value rebuilt from itself: not known meanwhile
        if binding.order < 0:
            width = self._parameter(binding.name)
        elif isinstance(binding.value, ast.Constant) and binding.value.value in (0, 1, -1):
            # `i_n = 0` on a single-sequence path: a product with it cannot wrap, so it
            # is no evidence of an int32 multiply (nor of an int64 one)
            width = None
        elif binding.value is not None:
            width = self.at(binding.value, binding.order)
        elif binding.loop is not None:
            width = self._loop_target(binding.loop, binding.order)
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
            return _arithmetic([self.at(a, order) for a in it.args])
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
            return _arithmetic([self.at(expr.left, order), self.at(expr.right, order)])
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self.at(expr.operand, order)
        if isinstance(expr, ast.IfExp):
            return _every_path([self.at(expr.body, order), self.at(expr.orelse, order)])
        if isinstance(expr, ast.Call):
            return self._call(expr, order)
        return None

    def _call(self, call: ast.Call, order: int) -> bool | None:
        if is_int64_cast(call, self.aliases):
            return True
        target = _cast_target(call, self.aliases)
        if target is not None:
            return False if target in _NARROW_INTS else None
        qual = self.aliases.resolve(call.func)
        if qual in _INT32_CALLS:
            return False
        if qual in _PROMOTING_CALLS or (
            qual is None and isinstance(call.func, ast.Name) and call.func.id in _BUILTIN_PROMOTING
        ):
            return _arithmetic([self.at(a, order) for a in call.args])
        if qual == _WHERE and len(call.args) == 3:
            return _arithmetic([self.at(a, order) for a in call.args[1:]])
        return None  # a load, a helper: its own type


def _cast_target(call: ast.Call, aliases: Aliases) -> str | None:
    """The dtype of `x.to(dt)` / `tl.cast(x, dt)` (not a bitcast), qualified."""
    if any(kw.arg == "bitcast" for kw in call.keywords):
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        return aliases.resolve(call.args[0])
    if aliases.resolve(call.func) == f"{LANGUAGE}.cast" and len(call.args) >= 2:
        return aliases.resolve(call.args[1])
    return None


class LateInt64Cast(Rule):
    code = "ASC007"
    name = "late-int64-cast"
    summary = (
        "`(a * b).to(tl.int64)` multiplies in int32 before the cast; `.to()` on a "
        "constexpr fails to compile"
    )
    reference = "reference_kernels/chunk_o.py::chunk_fwd_kernel_o"
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        tl_name = next((local for local, mod in aliases.modules.items() if mod == LANGUAGE), None)
        kinds = _Kinds(ctx.index)
        for fn in ctx.index.kernels:
            runtime = fn.runtime_names
            widths: _Widths | None = None
            for call, stmt in fn.calls:
                if not is_int64_cast(call, aliases):
                    continue
                facts = fn.facts(aliases)  # cached; kernels without a cast never compute it
                if widths is None:
                    widths = kinds.widths(fn)
                order = fn.order_of(stmt)
                method = isinstance(call.func, ast.Attribute) and call.func.attr == "to"
                inner = call.func.value if method else call.args[0]
                products = [
                    p
                    for p in _products(inner)
                    if self._int32_product(p, widths, order, facts, runtime)
                ]
                if products:
                    yield Finding(
                        call,
                        self._product_message(products[0], fn, widths, order, facts, method),
                        fix=self._cast_operands_fix(ctx, call, products, tl_name)
                        if method
                        else None,
                    )
                    continue
                if not method:
                    continue
                message = self._receiver_message(inner, fn, order, kinds)
                if message is not None:
                    yield Finding(call, message, fix=self._tl_cast_fix(ctx, call, inner, tl_name))

    # -- the product shape ----------------------------------------------------------------
    @staticmethod
    def _int32_product(
        product: ast.BinOp, widths: _Widths, order: int, facts: ValueFacts, runtime: set[str]
    ) -> bool:
        """An int32 multiply with a runtime operand. Its width is judged where the cast
        reads it, per reaching definition: a name cast to int64 on one path only is
        still int32 on the other. Where the width is not known (a load, a helper's
        result), a name that is int64 anywhere in the kernel counts as int64."""
        if any(isinstance(f, ast.Call) and call_name(f.func) != "cdiv" for f in factors(product)):
            return False  # a call's result type is its own (a load, a min()); cdiv keeps int32
        names = names_in(product)
        width = widths.at(product, order)
        if width is True or (width is None and names & facts.int64):
            return False  # already a 64-bit multiply
        return bool(names & runtime)

    def _product_message(
        self,
        product: ast.BinOp,
        fn: JitFunction,
        widths: _Widths,
        order: int,
        facts: ValueFacts,
        method: bool,
    ) -> str:
        described = []
        for factor in factors(product):
            if isinstance(factor, ast.Name):
                what = _describe(factor.id, fn, widths, order, facts)
                described.append(f"`{factor.id}` ({what})" if what else f"`{factor.id}`")
        operands = f": {', '.join(described)}" if described else ""
        first = ast.unparse(factors(product)[0])
        text = (
            f"`{ast.unparse(product)}` is an int32 multiply{operands}; it can wrap past 2**31 "
            f"before {'`.to(tl.int64)`' if method else 'the cast'} widens it"
        )
        path = _one_path_note(product, widths, order)
        if path:
            text += f"; {path}"
        return text + f"; cast an operand first: `tl.cast({first}, tl.int64) * ...`"

    # -- `.to()` on one value -------------------------------------------------------------
    @staticmethod
    def _receiver_message(inner: ast.AST, fn: JitFunction, order: int, kinds: _Kinds) -> str | None:
        text = ast.unparse(inner)
        widths = kinds.widths(fn)
        if _is_program_id(inner, widths, order, kinds.facts(fn), kinds.aliases):
            return (
                f"`.to(tl.int64)` on `{text}`, a program id: a program id is a runtime int32 "
                "tensor, so this compiles and widens it before any multiply; write int64 index "
                f"casts as `tl.cast({text}, tl.int64)`, the one spelling that works on tensors "
                "and compile-time ints alike"
            )
        kind, where = kinds.kind(inner, fn, order)
        if kind == "constexpr":
            what = where or "a compile-time int"
            return (
                f"`.to(tl.int64)` on `{text}`, {what}: a compile-time value has no `.to()`, so "
                f"this fails to compile; `tl.cast({text}, tl.int64)` works"
            )
        if kind == "argument":
            what = where or "an int kernel argument"
            return (
                f"`.to(tl.int64)` on `{text}`, {what}: Triton specialises an int argument equal "
                "to 1 into a compile-time constant, which has no `.to()`, so this fails to "
                f"compile for that input; `tl.cast({text}, tl.int64)` works in every case"
            )
        return None

    @staticmethod
    def _tl_cast_fix(
        ctx: RuleContext, call: ast.Call, inner: ast.AST, tl_name: str | None
    ) -> Fix | None:
        if tl_name is None:
            return None
        start, end = node_span(ctx.source, call)
        # Same value wherever the original compiled: safe.
        edit = Edit(start, end, f"{tl_name}.cast({ast.unparse(inner)}, {tl_name}.int64)")
        return Fix(Applicability.SAFE, "Use `tl.cast(x, tl.int64)`", (edit,))

    @staticmethod
    def _cast_operands_fix(
        ctx: RuleContext, call: ast.Call, products: list[ast.BinOp], tl_name: str | None
    ) -> Fix | None:
        """`(a * b + c).to(tl.int64)` -> `(tl.cast(a, tl.int64) * b + c)`: the arithmetic moves
        to int64, which changes results exactly where the int32 version wrapped (unsafe)."""
        if tl_name is None:
            return None
        source = ctx.source
        edits = []
        for product in products:
            first = factors(product)[0]
            s, e = node_span(source, first)
            text = ast.unparse(first)
            edits.append(Edit(s, e, f"{tl_name}.cast({text}, {tl_name}.int64)"))
        # Drop `.to(tl.int64)`: from the end of the receiver's closing parenthesis to the call's end.
        _, value_end = node_span(source, call.func.value)
        _, call_end = node_span(source, call)
        line = source.line(value_end.row)
        dot = line.find(".", value_end.column) if value_end.row == call_end.row else -1
        if dot < 0:
            return None
        edits.append(Edit(type(value_end)(value_end.row, dot), call_end, ""))
        return Fix(
            Applicability.UNSAFE, "Cast an operand to int64 before multiplying", tuple(edits)
        )

    VALID = [
        """
import triton
import triton.language as tl

@triton.jit
def k(h, T, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    h_base = h + (tl.cast(i_t, tl.int64) * HV + i_h) * K * V
    i_tg = tl.cast(i_t, tl.int64)
    for i in range(T):
        j = i.to(tl.int64)
        j2 = (i + 2).to(tl.int64)
    s = (i_t + i_h).to(tl.int64)
""",
        # every path casts `bos` to int64 before the late cast reads it
        """
import triton
import triton.language as tl

@triton.jit
def k(x, cu, T, H: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    if IS_VARLEN:
        bos = tl.load(cu + i_n).to(tl.int64)
    else:
        bos = tl.cast(i_n, tl.int64) * T
    p = x + (bos * H + i_h).to(tl.int64)
    for task in range(i_n, T, 4):
        i_b = task // H
        j = i_b.to(tl.int64)
        r = (task + i_h).to(tl.int64)
    tl.store(p + j + r, 1)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(h, T, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    h_base = h + (i_t * HV + i_h).to(tl.int64) * K * V
    bos = (i_t * T).to(tl.int64)
""",
            rows=[8, 9],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, T):
    i_t = tl.program_id(1) + 3
    i_tg = i_t.to(tl.int64)
    n = T.to(tl.int64)
""",
            rows=[8, 9],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def k(x, T):
    i_t = tl.program_id(1) + 3
    i_tg = tl.cast(i_t, tl.int64)
    n = tl.cast(T, tl.int64)
""",
        ),
        # int64 on the varlen path only: on the other `bos` is an int32 product
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, cu, T, H: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    if IS_VARLEN:
        bos = tl.load(cu + i_n).to(tl.int64)
    else:
        bos = i_n * T
    p = x + (bos * H + i_h).to(tl.int64)
    tl.store(p, 1)
""",
            rows=[12],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def k(x, cu, T, H: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    if IS_VARLEN:
        bos = tl.load(cu + i_n).to(tl.int64)
    else:
        bos = i_n * T
    p = x + (tl.cast(bos, tl.int64) * H + i_h)
    tl.store(p, 1)
""",
        ),
        # a task index from a core-grid loop times a length: an int32 multiply
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, T, n_tasks, H: tl.constexpr, NUM_CORES: tl.constexpr):
    for task in range(tl.program_id(0), n_tasks, NUM_CORES):
        i_b, i_h = task // H, task % H
        bos = (i_b * T).to(tl.int64)
        tl.store(x + bos + i_h, 1)
""",
            rows=[9],
        ),
        # constexprs and static_range variables have no `.to()`
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr, NS: tl.constexpr):
    for i_s in tl.static_range(NS):
        o = i_s.to(tl.int64)
        tl.store(x + o, 1)
    n = BT.to(tl.int64)
""",
            rows=[8, 10],
            fixed="""
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr, NS: tl.constexpr):
    for i_s in tl.static_range(NS):
        o = tl.cast(i_s, tl.int64)
        tl.store(x + o, 1)
    n = tl.cast(BT, tl.int64)
""",
        ),
    ]


class _Kinds:
    """What the receiver of a `.to()` is when the kernel runs: a compile-time int
    ("constexpr"), an int argument Triton may specialise ("argument"), or a runtime
    tensor (None). A helper's parameter is what its callers pass."""

    def __init__(self, index: KernelIndex):
        self.index = index
        self.aliases = index.aliases
        self._widths: dict[int, _Widths] = {}
        self._statements: dict[int, ast.stmt] = {}

    def widths(self, fn: JitFunction) -> _Widths:
        found = self._widths.get(id(fn))
        if found is None:
            found = self._widths[id(fn)] = _Widths(fn, self.aliases)
        return found

    def facts(self, fn: JitFunction) -> ValueFacts:
        return fn.facts(self.aliases)

    def kind(
        self, expr: ast.AST, fn: JitFunction, order: int, depth: int = 0
    ) -> tuple[str | None, str]:
        """(kind, a description of where it comes from, or "")."""
        widths = self.widths(fn)
        if isinstance(expr, ast.Name):
            reach = widths.reaching(expr.id, order)
            if len(reach) == 1 and reach[0].order < 0:
                return self._parameter(expr.id, fn, depth)
        if _compile_time_int(expr, fn, widths, order):
            if isinstance(expr, ast.Name):
                return "constexpr", "a `tl.static_range` loop variable (a compile-time int)"
            return "constexpr", "a compile-time int (constexprs, `tl.static_range` variables)"
        return None, ""

    def _parameter(self, name: str, fn: JitFunction, depth: int) -> tuple[str | None, str]:
        if name in fn.constexpr_params:
            return "constexpr", "a `tl.constexpr`"
        if name in fn.do_not_specialize or name in self.facts(fn).pointers:
            return None, ""
        calls = self.index.helper_calls_to(fn)
        launched = bool(self.index.launches_of(fn))
        if not calls and not launched:
            return "argument", f"an int argument of `{fn.name}` (if it is launched as a kernel)"
        if launched or depth >= 3:
            return "argument", ""
        # a @triton.jit helper: its parameter holds what each caller passes
        found: tuple[str | None, str] = (None, "")
        for binding in calls:
            caller = binding.caller
            stmt = self._statement(binding.call, caller) if caller is not None else None
            if caller is None or stmt is None:
                return "argument", ""
            for arg in binding.args.get(name, []):
                kind, _ = self.kind(arg, caller, caller.order_of(stmt), depth + 1)
                if kind is None:
                    continue
                where = (
                    f"a parameter of helper `{fn.name}` to which `{caller.name}` passes "
                    f"`{ast.unparse(arg)}`"
                )
                if kind == "constexpr":
                    return kind, where + ", a compile-time int"
                found = (kind, where + ", an int argument")
        return found

    def _statement(self, call: ast.Call, caller: JitFunction) -> ast.stmt | None:
        if id(call) not in self._statements:
            for c, stmt in caller.calls:
                self._statements.setdefault(id(c), stmt)
        return self._statements.get(id(call))


def _is_program_id(
    inner: ast.AST, widths: _Widths, order: int, facts: ValueFacts, aliases: Aliases
) -> bool:
    """`tl.program_id(...)`, or a name every reaching binding of which is one (plus or
    minus an offset: `i_t = tl.program_id(1) + NT_OFFSET`)."""
    if isinstance(inner, ast.Call):
        return aliases.resolve(inner.func) == f"{LANGUAGE}.program_id"
    if not isinstance(inner, ast.Name):
        return False
    reach = widths.reaching(inner.id, order)
    return bool(reach) and all(
        b.value is not None and from_program_id(b.value, facts.program_ids, aliases) for b in reach
    )


def _compile_time_int(inner: ast.AST, fn: JitFunction, widths: _Widths, order: int) -> bool:
    """Arithmetic of constexpr parameters, `tl.static_range` variables and int literals,
    naming at least one of the former: Triton evaluates it as a Python int. (A local
    assigned from such a value is a tensor: assignments convert.)"""
    seen_name = False
    for node in ast.walk(inner):
        if isinstance(node, ast.Name):
            reach = widths.reaching(node.id, order)
            if not reach:
                return False
            for b in reach:
                static_loop = b.loop is not None and _is_static(b.loop, widths.aliases)
                if not ((b.order < 0 and b.name in fn.constexpr_params) or static_loop):
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


def _is_static(loop: ast.For, aliases: Aliases) -> bool:
    return isinstance(loop.iter, ast.Call) and aliases.resolve(loop.iter.func) == _STATIC_RANGE


def _describe(name: str, fn: JitFunction, widths: _Widths, order: int, facts: ValueFacts) -> str:
    """What a factor of an int32 product is, in a few words."""
    reach = widths.reaching(name, order)
    if reach and all(b.order < 0 for b in reach):
        if name in fn.constexpr_params:
            return "a constexpr"
        return "an int kernel argument"
    if reach and all(b.loop is not None for b in reach):
        if all(_is_static(b.loop, widths.aliases) for b in reach):
            return "a `tl.static_range` variable"
        return "a loop variable"
    if reach and all(
        b.value is not None and from_program_id(b.value, facts.program_ids, widths.aliases)
        for b in reach
    ):
        return "a program id"
    loop_var = _source_among(name, fn, fn.loop_variables)
    if loop_var is not None:
        return f"a runtime value derived from loop variable `{loop_var}`"
    if _source_among(name, fn, facts.program_ids) is not None:
        return "derived from a program id"
    if len(reach) == 1 and reach[0].order >= 0 and widths.binding(reach[0]) is False:
        return f"int32, set on line {fn.statements[reach[0].order].lineno}"
    return ""


def _source_among(name: str, fn: JitFunction, sources: set[str]) -> str | None:
    """The first of `sources` that `name` is computed from (through any assignments)."""
    deps = fn.dependencies()
    seen = {name}
    todo = [name]
    while todo:
        current = todo.pop(0)
        for read in sorted(deps.get(current, ())):
            if read in sources:
                return read
            if read not in seen:
                seen.add(read)
                todo.append(read)
    return None


def _one_path_note(product: ast.BinOp, widths: _Widths, order: int) -> str:
    """For a name that is int64 on some paths and int32 on others (the product's own
    operands first, then what their int32 bindings are computed from): where it is int32."""
    todo = [(name, order) for name in sorted(names_in(product))]
    seen: set[tuple[str, int]] = set()
    while todo and len(seen) < 32:
        name, at = todo.pop(0)
        if (name, at) in seen:
            continue
        seen.add((name, at))
        reach = widths.reaching(name, at)
        found = [widths.binding(b) for b in reach]
        narrow = [b for b, w in zip(reach, found) if w is False]
        if True in found and narrow:
            b = narrow[0]
            where = (
                f"where it is set on line {widths.fn.statements[b.order].lineno}"
                if b.order >= 0
                else "as the kernel argument"
            )
            return f"`{name}` is int64 on some paths only: {where} it is int32"
        for b in narrow:
            if b.value is not None:
                todo += [(n, b.order) for n in sorted(names_in(b.value))]
    return ""
