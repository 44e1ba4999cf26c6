"""ASC017 unsupported-dtype: float64 and fp8 dtypes in a kernel.

A dtype is found wherever a kernel uses it: spelled out (`tl.float64`, an imported
`float8e4nv`), through a local or a module constant that holds it (`FP8 = tl.float8e4nv`),
through a constexpr parameter that every visible launch binds to one, and through
bitcasts (`.to(tl.float8e4nv, bitcast=True)` builds an fp8 value just as a conversion does).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascend_lint.index import LANGUAGE, JitFunction, KernelIndex, own_nodes
from ascend_lint.index.syntax import all_params, mentioned_texts, walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

# triton.language's float64 and fp8 dtypes (and their short aliases).
UNSUPPORTED = frozenset(
    f"{LANGUAGE}.{name}"
    for name in (
        "float64",
        "float8e4nv",
        "float8e5",
        "float8e4b15",
        "float8e4b8",
        "float8e5b16",
    )
)


_CONSTEXPR = f"{LANGUAGE}.constexpr"
_CAST = f"{LANGUAGE}.cast"
_MAX_DEPTH = 4  # module constants naming other module constants
# Names and strings of the one Ascend SoC whose triton-ascend build accepts fp8 and fp64:
# `IS_910_95`, `is_a5`, `"Ascend910_95"`, `ascend950`.
_CAPABLE_SOC = re.compile(r"910_?95|ascend_?950|(?:^|[^a-z0-9])(?:a5|950)(?:[^a-z0-9]|$)")


def _is_bitcast(call: ast.Call) -> bool:
    return any(
        kw.arg == "bitcast" and not (isinstance(kw.value, ast.Constant) and not kw.value.value)
        for kw in call.keywords
    )


class UnsupportedDtype(Rule):
    code = "ASC017"
    name = "unsupported-dtype"
    summary = "`tl.float64` or an fp8 dtype in a kernel: rejected by triton-ascend except on 910_95"
    reference = "reference_kernels/core_grid.py::rms_norm_fwd_kernel"

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        # Every path the rule follows ends at a dtype spelled in this module (through
        # locals, module constants and launch bindings), so a module that never spells
        # one has nothing to report.
        text = ctx.source.text
        if "float64" not in text and "float8" not in text:
            return
        index = ctx.index
        for fn in index.kernels:
            yield from self._kernel(index, fn)

    def _kernel(self, index: KernelIndex, fn: JitFunction) -> Iterator[Finding]:
        resolve = index.aliases.resolve
        # A comparison with a dtype (`x.dtype == tl.float64`, `== tl.constexpr(...)`)
        # dispatches at compile time and creates no value of that type.
        exempt: set[int] = set()
        for node in fn.compares:
            for operand in (node.left, *node.comparators):
                exempt.add(id(operand))
                if isinstance(operand, ast.Call) and resolve(operand.func) == _CONSTEXPR:
                    exempt.update(id(a) for a in operand.args)
        # The dtype argument of every bitcast (`x.to(dt, bitcast=True)`,
        # `tl.cast(x, dt, bitcast=True)`) and of every `tl.cast` conversion.
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
        dtype_locals = _dtype_locals(fn, index)
        deferred = {id(node) for _name, nodes in dtype_locals.values() for node in nodes}

        found: list[tuple[ast.AST, str, str]] = []  # (node, dtype, how it is reached)
        for node in fn.dtype_mentions:
            qual = resolve(node)
            if qual in UNSUPPORTED and id(node) not in exempt and id(node) not in deferred:
                found.append((node, qual, ""))
        for arg in all_params(fn.node.args):
            if arg.annotation is not None:
                found += [
                    (n, resolve(n), "") for n in walk(arg.annotation) if resolve(n) in UNSUPPORTED
                ]
        held = dict(dtype_locals)
        held.update(_module_dtypes(fn, index, set(dtype_locals)))
        held.update(_launch_dtypes(fn, index))
        if held:
            for stmt in fn.statements:
                for node in own_nodes(stmt):
                    if (
                        type(node) is ast.Name
                        and type(node.ctx) is ast.Load
                        and node.id in held
                        and id(node) not in exempt
                    ):
                        qual, how = held[node.id][0], _how(node.id, held[node.id])
                        found.append((node, qual, how))
        if not found:
            return
        statement_of = {id(n): stmt for stmt in fn.statements for n in own_nodes(stmt)}
        seen: set[int] = set()
        for node, qual, how in sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset)):
            if id(node) in seen:
                continue
            seen.add(id(node))
            stmt = statement_of.get(id(node))
            if stmt is not None and _on_capable_soc(fn, stmt):
                continue  # the 910_95 side of a compile-time SoC test
            yield Finding(node, self._message(qual, how, kinds.get(id(node), "")))

    @staticmethod
    def _message(qual: str, how: str, kind: str) -> str:
        name = qual.rsplit(".", 1)[1]
        via = f" ({how})" if how else ""
        if name != "float64":
            if kind == "cast":
                error = "`[fp8, fp64] is unsupported on Ascend`"
            elif kind == "bitcast":
                error = "`unexpected type fp8.`, even with `bitcast=True`"
            else:
                error = "`unexpected type fp8.`"
            return (
                f"`{name}`{via}: triton-ascend rejects fp8 types on A2/A3 (ValueError {error}); "
                "keep fp8 data as uint8 bits and compute in bf16/fp16/float32"
            )
        if kind == "bitcast":
            return (
                f"`{name}`{via}: a bitcast to float64 makes an fp64 value; triton-ascend's "
                "front end accepts the bitcast, but A2/A3 have no fp64 arithmetic, loads or "
                "stores; keep the bits in int64"
            )
        if kind == "cast":
            return (
                f"`{name}`{via}: `tl.cast` to or from float64 raises `[fp8, fp64] is "
                "unsupported on Ascend` in triton-ascend on A2/A3; use float32 (or bf16/fp16)"
            )
        return (
            f"`{name}`{via} is not supported by triton-ascend on A2/A3 (no fp64 arithmetic, "
            "loads or stores; its cast raises `[fp8, fp64] is unsupported on Ascend`); use "
            "float32 (or bf16/fp16)"
        )

    VALID = [
        """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK)).to(tl.float32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    if x.dtype.element_ty == tl.float64:
        v = v * 2
    if o.dtype.element_ty == tl.constexpr(tl.float8e5):
        v = v + 1
    tl.store(o + tl.arange(0, BLOCK), acc + v)

def host(x):
    # float64 on the host is fine: reference results in double precision
    return x.to(torch.float64).sum()
""",
        # bitcasts between same-width integer types, a dtype constant used only in a
        # comparison, dtype names in strings
        """
import triton
import triton.language as tl

FP8 = tl.float8e4nv
BITS = tl.uint8

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK))
    u = v.to(tl.uint8, bitcast=True).to(tl.int8, bitcast=True)
    w = tl.cast(u, BITS, bitcast=True)
    if x.dtype.element_ty == FP8:
        w = w + 1
    tl.static_assert(o.dtype.element_ty != tl.float64, "tl.float64 output")
    tl.store(o + tl.arange(0, BLOCK), w)
""",
        # native fp8 only on the 910_95 side of a compile-time SoC test
        """
import triton
import triton.language as tl

@triton.jit
def k(x, o, BLOCK: tl.constexpr, IS_910_95: tl.constexpr):
    bits = tl.load(x + tl.arange(0, BLOCK))
    if IS_910_95:
        v = bits.to(tl.float8e4nv, bitcast=True).to(tl.float32)
    else:
        v = (bits & 0x7F).to(tl.float32)
    tl.store(o + tl.arange(0, BLOCK), v)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl
from triton.language import float8e4nv

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK)).to(tl.float64)
    acc = tl.zeros([BLOCK], dtype=tl.float64)
    q = (acc + v).to(float8e4nv)
    tl.store(o + tl.arange(0, BLOCK), q)
""",
            rows=[8, 9, 10],
        ),
        # fp8 reached by bitcasts: a chain, `tl.cast(..., bitcast=True)`, a module constant
        Invalid(
            """
import triton
import triton.language as tl

FP8 = tl.float8e4nv

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    v = tl.load(x + tl.arange(0, BLOCK))
    a = v.to(tl.uint8, bitcast=True).to(tl.float8e4nv, bitcast=True)
    b = tl.cast(v, tl.float8e5, bitcast=True)
    c = v.to(FP8, bitcast=True)
    tl.store(o + tl.arange(0, BLOCK), a.to(tl.uint8, bitcast=True))
""",
            rows=[10, 11, 12],
        ),
        # a dtype held in a local and in a constexpr the launch binds
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, o, N, BLOCK: tl.constexpr, ACC: tl.constexpr):
    dt = tl.float64
    acc = tl.zeros([BLOCK], dtype=dt)
    z = tl.full([BLOCK], 0, dtype=ACC)
    tl.store(o + tl.arange(0, BLOCK), (acc + z).to(tl.float32))

def launch(x, o, n):
    k[(1,)](x, o, n, BLOCK=128, ACC=tl.float64)
""",
            rows=[8, 9],
        ),
        # the other side of the SoC test compiles on A2/A3
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, o, BLOCK: tl.constexpr, IS_A5: tl.constexpr):
    bits = tl.load(x + tl.arange(0, BLOCK))
    if not IS_A5:
        v = bits.to(tl.float8e5, bitcast=True).to(tl.float32)
    else:
        v = bits.to(tl.float32)
    tl.store(o + tl.arange(0, BLOCK), v)
""",
            rows=[9],
        ),
    ]


def _dtype_value(expr: ast.AST | None, index: KernelIndex, depth: int = 0) -> str | None:
    """The unsupported dtype an expression names on every path: `tl.float64`,
    `tl.constexpr(tl.float64)`, a module constant holding one, or a conditional whose
    every branch is one (the first branch's dtype)."""
    if expr is None or depth > _MAX_DEPTH:
        return None
    qual = index.aliases.resolve(expr)
    if qual in UNSUPPORTED:
        return qual
    if isinstance(expr, ast.Call) and index.aliases.resolve(expr.func) == _CONSTEXPR and expr.args:
        return _dtype_value(expr.args[0], index, depth + 1)
    if isinstance(expr, ast.IfExp):
        body = _dtype_value(expr.body, index, depth + 1)
        other = _dtype_value(expr.orelse, index, depth + 1)
        return body if body and other else None
    if isinstance(expr, ast.Name) and qual is None:
        return _dtype_value(index.host.module_constant(expr.id), index, depth + 1)
    return None


def _dtype_mentions(expr: ast.AST, index: KernelIndex) -> list[ast.AST]:
    """The dtype nodes inside a local's value that name an unsupported dtype on some path
    (`tl.float64 if HIGH else tl.float32`: a constexpr test compiles both sides)."""
    resolve = index.aliases.resolve
    if resolve(expr) in UNSUPPORTED:
        return [expr]
    if isinstance(expr, ast.Call) and resolve(expr.func) == _CONSTEXPR and expr.args:
        return _dtype_mentions(expr.args[0], index)
    if isinstance(expr, ast.IfExp):
        return _dtype_mentions(expr.body, index) + _dtype_mentions(expr.orelse, index)
    return []


def _dtype_locals(fn: JitFunction, index: KernelIndex) -> dict[str, tuple[str, list[ast.AST]]]:
    """Locals assigned an unsupported dtype (`dt = tl.float64`): name -> (the dtype, the
    dtype nodes of those assignments). The finding moves from the assignment to the
    lines that use the local: an alias used only in a comparison converts nothing."""
    held: dict[str, tuple[str, list[ast.AST]]] = {}
    for name, values in fn.assignments.items():
        if name in fn.params:
            continue
        nodes = [n for v in values for n in _dtype_mentions(v, index)]
        if nodes:
            held[name] = (index.aliases.resolve(nodes[0]) or "", nodes)
    return held


def _module_dtypes(
    fn: JitFunction, index: KernelIndex, local: set[str]
) -> dict[str, tuple[str, list[ast.AST]]]:
    """Module constants holding an unsupported dtype that the kernel reads by name."""
    held: dict[str, tuple[str, list[ast.AST]]] = {}
    for stmt_reads, _writes in fn.statement_names():
        for name in stmt_reads:
            if name in held or name in local or name in fn.params or name in fn.assignments:
                continue
            value = index.host.module_constant(name)
            if value is None or name in index.aliases.modules or name in index.aliases.members:
                continue  # an import, not a constant
            qual = _dtype_value(value, index)
            if qual is not None:
                held[name] = (qual, [])
    return held


def _launch_dtypes(fn: JitFunction, index: KernelIndex) -> dict[str, tuple[str, list[ast.AST]]]:
    """Constexpr parameters that a launch in this module binds to an unsupported dtype
    (`k[grid](..., ACC=tl.float64)`): param -> (the dtype, [the launch call])."""
    held: dict[str, tuple[str, list[ast.AST]]] = {}
    for binding in index.launches_of(fn):
        for param, exprs in binding.args.items():
            if param not in fn.constexpr_params or param in held:
                continue
            for expr in exprs:
                qual = _dtype_value(expr, index)
                if qual is not None:
                    held[param] = (qual, [binding.call])
                    break
    return held


def _how(name: str, held: tuple[str, list[ast.AST]]) -> str:
    _qual, nodes = held
    if nodes and isinstance(nodes[0], ast.Call):
        return f"passed as `{name}` by the launch on line {nodes[0].lineno}"
    if nodes:
        return f"held in `{name}`, set on line {nodes[0].lineno}"
    return f"the module constant `{name}`"


def _soc_test(test: ast.AST) -> bool | None:
    """True when a branch test holds only on the 910_95 (A5), False when it holds only
    elsewhere (`not IS_A5`), None when it says nothing about the SoC."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _soc_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return True if any(_soc_test(v) is True for v in test.values) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], (ast.Eq, ast.In)):
            return True if any(_names_soc(n) for n in (test.left, *test.comparators)) else None
        if isinstance(test.ops[0], (ast.NotEq, ast.NotIn)):
            return False if any(_names_soc(n) for n in (test.left, *test.comparators)) else None
        return None
    if isinstance(test, (ast.Name, ast.Attribute, ast.Call)) and _names_soc(test):
        return True
    return None


def _names_soc(node: ast.AST) -> bool:
    return any(_CAPABLE_SOC.search(text.lower()) for text in mentioned_texts(node))


def _on_capable_soc(fn: JitFunction, stmt: ast.stmt) -> bool:
    """Whether a kernel statement runs only where the SoC is the 910_95."""
    for branch in fn.context(stmt).branches:
        holds = _soc_test(branch.test)
        if holds is not None and holds == branch.taken:
            return True
    return False
