"""ASC007 late-int64-cast: `(a * b).to(tl.int64)` multiplies in int32 first, and `.to()`
on a compile-time int (a constexpr, or an int argument Triton specialised) fails to compile.

Whether an operand is already int64, and what kind of int a receiver is, the index
says per path (`index.values`): a name is int64 where it is read only if every
definition that reaches the read makes it int64. The rule matches the cast shapes,
words the messages and builds the fixes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import node_offsets, node_span, node_text, replace_node, text_edit
from ascend_lint.diagnostics import Applicability, Citations, Edit, Fix
from ascend_lint.index import (
    LANGUAGE,
    IntKind,
    JitFunction,
    KernelValues,
    call_name,
    factors,
    is_int64_cast,
    names_in,
)
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


def _nested_products(expr: ast.AST) -> list[ast.BinOp]:
    """Every product reached through `+`, `-`, `*` and unary signs, outermost first."""
    out: list[ast.BinOp] = []
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.UnaryOp):
            todo.append(node.operand)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            if isinstance(node.op, ast.Mult):
                out.append(node)
            todo += [node.right, node.left]
    return out


def _products(expr: ast.AST) -> list[ast.BinOp]:
    """Top-level products of a sum (not those inside calls such as `min()`, nor those
    inside another cast: `(a * b).to(tl.int64)` within the sum is that cast's finding)."""
    out = []
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            todo += [node.right, node.left]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            out.append(node)
    return out


class LateInt64Cast(Rule):
    fix_applicability = Applicability.UNSAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aliases = ctx.index.aliases
        tl_name = next((local for local, mod in aliases.modules.items() if mod == LANGUAGE), None)
        value_facts = ctx.index.values
        for fn in ctx.index.kernels:
            runtime = fn.runtime_names
            for call, stmt in fn.calls:
                if not is_int64_cast(call, aliases):
                    continue
                values = value_facts.of(fn)
                order = fn.order_of(stmt)
                method = isinstance(call.func, ast.Attribute) and call.func.attr == "to"
                inner = call.func.value if method else call.args[0]
                products = [
                    p for p in _products(inner) if self._int32_product(p, values, order, runtime)
                ]
                if products:
                    cites = Citations()
                    yield Finding(
                        call,
                        self._product_message(
                            products[0], fn, values, order, method, runtime, cites
                        ),
                        related=tuple(cites.nodes),
                        fix=self._cast_operands_fix(
                            ctx, call, stmt, inner, values, order, runtime, tl_name
                        ),
                    )
                    continue
                if not method:
                    continue
                kind = value_facts.kind(inner, fn, order)
                message = self._receiver_message(inner, values, order, kind)
                if message is not None:
                    yield Finding(call, message, fix=self._tl_cast_fix(ctx, call, inner, tl_name))

    # -- the product shape ----------------------------------------------------------------
    @staticmethod
    def _int32_product(
        product: ast.BinOp, values: KernelValues, order: int, runtime: set[str]
    ) -> bool:
        """An int32 multiply with a runtime operand. Its width is judged where the cast
        reads it, per reaching definition: a name cast to int64 on one path only is
        still int32 on the other. Where the width is not known (a load, a helper's
        result), a product one of whose definitions may be int64 counts as int64."""
        if any(isinstance(f, ast.Call) and call_name(f.func) != "cdiv" for f in factors(product)):
            return False  # a call's result type is its own (a load, a min()); cdiv keeps int32
        width = values.width(product, order)
        if width is True or (width is None and values.may_be_int64(product, order)):
            return False  # already a 64-bit multiply
        return bool(names_in(product) & runtime)

    def _product_message(
        self,
        product: ast.BinOp,
        fn: JitFunction,
        values: KernelValues,
        order: int,
        method: bool,
        runtime: set[str],
        cites: Citations,
    ) -> str:
        described = []
        for factor in factors(product):
            if isinstance(factor, ast.Name):
                what = _describe(factor.id, fn, values, order, cites)
                described.append(f"`{factor.id}` ({what})" if what else f"`{factor.id}`")
        operands = f": {', '.join(described)}" if described else ""
        first = ast.unparse(self._widen(product, values, order, runtime)[0])
        text = (
            f"`{ast.unparse(product)}` is an int32 multiply{operands}; it can wrap past 2**31 "
            f"before {'`.to(tl.int64)`' if method else 'the cast'} widens it"
        )
        path = _one_path_note(product, values, order, cites)
        if path:
            text += f"; {path}"
        return text + f"; cast an operand first: `tl.cast({first}, tl.int64) * ...`"

    # -- `.to()` on one value -------------------------------------------------------------
    @staticmethod
    def _receiver_message(
        inner: ast.AST, values: KernelValues, order: int, int_kind: IntKind
    ) -> str | None:
        if values.is_int64(inner, order):
            return None  # already int64 on every path: the cast changes nothing
        text = ast.unparse(inner)
        if values.is_program_id(inner, order):
            return (
                f"`.to(tl.int64)` on `{text}`, a program id: a program id is a runtime int32 "
                "tensor, so this compiles and widens it before any multiply; write int64 index "
                f"casts as `tl.cast({text}, tl.int64)`, the one spelling that works on tensors "
                "and compile-time ints alike"
            )
        kind, where = int_kind.kind, _where(int_kind)
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

    def _cast_operands_fix(
        self,
        ctx: RuleContext,
        call: ast.Call,
        stmt: ast.stmt,
        inner: ast.AST,
        values: KernelValues,
        order: int,
        runtime: set[str],
        tl_name: str | None,
    ) -> Fix | None:
        """`(a * b + c).to(tl.int64)` -> `(tl.cast(a, tl.int64) * b + c)`, and
        `tl.cast(a * (b * c), tl.int64)` -> `(a * (tl.cast(b, tl.int64) * c))`: every
        int32 multiply inside moves to int64, nested ones and those of a sum inside a
        product included, so re-linting finds none left. The arithmetic changes results
        exactly where the int32 version wrapped (unsafe)."""
        if tl_name is None:
            return None
        casts = self._widen(inner, values, order, runtime)
        if not casts or any(leaf is inner for leaf in casts):
            return None  # nothing inside to widen: casting the whole would change nothing
        source = ctx.source
        edits = [
            replace_node(
                source, leaf, f"{tl_name}.cast({node_text(source, leaf)}, {tl_name}.int64)"
            )
            for leaf in casts
        ]
        # Drop the late cast around the receiver, keeping what is inside it (comments too).
        start, end = node_offsets(source, inner)
        call_start, call_end = node_offsets(source, call)
        text = source.text
        # Parentheses are kept unless the cast is a one-line statement's whole value
        # (`bos = (i_b * T).to(tl.int64)` -> `bos = tl.cast(i_b, tl.int64) * T`).
        bare = getattr(stmt, "value", None) is call and "\n" not in text[call_start:call_end]
        if isinstance(call.func, ast.Attribute) and call.func.attr == "to":
            # `( ... ).to(tl.int64)`: from the `.` on
            dot = node_offsets(source, call.func)[1] - len(call.func.attr) - 1
            while dot > end and text[dot] in " \t\\\r\n":
                dot -= 1
            if text[dot] != ".":
                return None
            if bare and text[call_start:start].strip() == "(" and text[end:dot].strip() == ")":
                edits.append(text_edit(source, call_start, start, ""))
                edits.append(text_edit(source, end, call_end, ""))
            else:
                edits.append(text_edit(source, dot, call_end, ""))
        else:  # `tl.cast( ... , tl.int64)` -> `( ... )`
            edits.append(text_edit(source, call_start, start, "" if bare else "("))
            edits.append(text_edit(source, end, call_end, "" if bare else ")"))
        edits.sort(key=lambda e: e.start)
        return Fix(
            Applicability.UNSAFE, "Cast an operand to int64 before multiplying", tuple(edits)
        )

    def _widen(
        self, node: ast.AST, values: KernelValues, order: int, runtime: set[str]
    ) -> list[ast.AST]:
        """The operands to cast so that every int32 multiply in `node` (through `+`,
        `-` and `*`) runs in int64 and `node` is int64: inside a product, each side
        that holds such a multiply is widened itself (then the product is int64);
        a product of plain operands casts one that is not a literal."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            return self._widen(node.operand, values, order, runtime)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            sides = [
                side
                for side in (node.left, node.right)
                if any(
                    self._int32_product(p, values, order, runtime) for p in _nested_products(side)
                )
            ]
            if sides:
                return [
                    leaf for side in sides for leaf in self._widen(side, values, order, runtime)
                ]
            if isinstance(node.op, ast.Mult):
                left_literal = isinstance(node.left, ast.Constant)
                return [node.right if left_literal else node.left]
        return [node]

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
        # the Example of ASC007.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def state_kernel(h, o, T, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    bos = (i_b * T).to(tl.int64)  # ASC007: `i_b * T` wraps in int32 first
    h_base = h + (i_t * HV + i_h).to(tl.int64) * K * V  # ASC007
    i_tg = i_t.to(tl.int64)  # ASC007: compiles, but spelled `tl.cast` (a program id)
    n = T.to(tl.int64)  # ASC007: fails to compile when T == 1 (specialised)
    tl.store(o + bos + i_tg, tl.load(h_base) + n)


@triton.jit
def varlen_kernel(
    x, cu_seqlens, T, n_tasks, H: tl.constexpr, IS_VARLEN: tl.constexpr, NUM_CORES: tl.constexpr
):
    for task in range(tl.program_id(0), n_tasks, NUM_CORES):
        i_n, i_h = task // H, task % H  # a runtime task index, like a program id
        if IS_VARLEN:
            bos = tl.load(cu_seqlens + i_n).to(tl.int64)
        else:
            bos = i_n * T  # int32 on this path
        p = x + (bos * H + i_h).to(tl.int64)  # ASC007: `bos * H` is int32 when not IS_VARLEN
        q = x + (i_n * T).to(tl.int64)  # ASC007: `i_n * T` wraps in int32 first
        tl.store(p, tl.load(q))
""",
            rows=[10, 11, 12, 13, 27, 28],
        ),
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
        ),
        # nested products, a sum inside a product, the `tl.cast` spelling: every int32
        # multiply moves to int64, so nothing is left for the next lint to report
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def k(h, T, N, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    p = h + (i_t * (T * N)).to(tl.int64)
    q = h + ((i_t * H + i_h) * V * K).to(tl.int64)
    r = h + tl.cast((i_t * N + i_h) * T, tl.int64)
    tl.store(p + q + r, 1)
""",
            rows=[9, 10, 11],
        ),
        # casts inside a cast: each product is its own cast's finding, once; the outer
        # cast has no product of its own (it was reported again and, fixed by casting the
        # whole sum, wrapped it once more every round)
        Invalid(
            """
import triton
import triton.language as tl


@triton.jit
def k(x, C, D, BLOCK_C: tl.constexpr):
    pid_n = tl.program_id(1)
    offset_c = tl.arange(0, BLOCK_C)
    ptrs = x + (
        (pid_n * C * D).to(tl.int64)
        + (offset_c * D).to(tl.int64)
    ).to(tl.int64)
    tl.store(ptrs, 1)
""",
            rows=[11, 12],
        ),
    ]


def _where(kind: IntKind) -> str:
    """Where an int kind comes from, in a few words ("" when there is nothing to say)."""
    if kind.source == "static_range":
        return "a `tl.static_range` loop variable (a compile-time int)"
    if kind.source == "expression":
        return "a compile-time int (constexprs, `tl.static_range` variables)"
    if kind.source == "constexpr":
        return "a `tl.constexpr`"
    if kind.source == "unlaunched":
        return f"an int argument of `{kind.function}` (if it is launched as a kernel)"
    if kind.source == "helper":
        where = (
            f"a parameter of helper `{kind.function}` to which `{kind.caller}` passes "
            f"`{ast.unparse(kind.arg)}`"
        )
        if kind.kind == "constexpr":
            return where + ", a compile-time int"
        return where + ", an int argument"
    return ""


def _describe(
    name: str, fn: JitFunction, values: KernelValues, order: int, cites: Citations
) -> str:
    """What a factor of an int32 product is, in a few words."""
    reach = values.reaching(name, order)
    if reach and all(b.order < 0 for b in reach):
        if name in fn.constexpr_params:
            return "a constexpr"
        return "an int kernel argument"
    if reach and all(values.loop_of(b) is not None for b in reach):
        if all(values.is_static_loop(b) for b in reach):
            return "a `tl.static_range` variable"
        return "a loop variable"
    if values.is_program_id(ast.Name(name, ast.Load()), order):
        return "a program id"
    sources = values.sources(name, order)
    loop_var = next((n for n, _at in sources if n in fn.loop_variables), None)
    if loop_var is not None:
        return f"a runtime value derived from loop variable `{loop_var}`"
    if any(values.is_program_id(ast.Name(n, ast.Load()), at) for n, at in sources):
        return "derived from a program id"
    if len(reach) == 1 and reach[0].order >= 0 and values.binding_width(reach[0]) is False:
        return f"int32, set on {cites(fn.statements[reach[0].order])}"
    return ""


def _one_path_note(product: ast.BinOp, values: KernelValues, order: int, cites: Citations) -> str:
    """For a name that is int64 on some paths and int32 on others (the product's own
    operands first, then what their int32 bindings are computed from): where it is int32."""
    todo = [(name, order) for name in sorted(names_in(product))]
    seen: set[tuple[str, int]] = set()
    while todo and len(seen) < 32:
        name, at = todo.pop(0)
        if (name, at) in seen:
            continue
        seen.add((name, at))
        reach = values.reaching(name, at)
        found = [values.binding_width(b) for b in reach]
        narrow = [b for b, w in zip(reach, found) if w is False]
        if True in found and narrow:
            b = narrow[0]
            where = (
                f"where it is set on {cites(values.fn.statements[b.order])}"
                if b.order >= 0
                else "as the kernel argument"
            )
            return f"`{name}` is int64 on some paths only: {where} it is int32"
        for b in narrow:
            if b.value is not None:
                todo += [(n, b.order) for n in sorted(names_in(b.value))]
    return ""
