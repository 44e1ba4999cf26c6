"""Kernels: every `@triton.jit` function and, inside it, what is known at compile time.

For each kernel: its parameters, which are `tl.constexpr` and which are listed in
`do_not_specialize`; every statement in source order with the loops and branches around
it; the assignments to every local; and which names are runtime values (they can differ
between program instances or launches) and which are compile-time constants. One pass
over each kernel body, then a bounded fixpoint over its assignments. The definitions
of a name that reach a statement are asked with `fn.reaching(name, order)`; every other
question about a value, of the kernel's value model (`kernel_values(fn, aliases)`, `values`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ascend_lint.index.aliases import LANGUAGE, TRITON, Aliases
from ascend_lint.index.constexpr import CompileTime, Definition
from ascend_lint.index.context import OUTSIDE_ANY_BLOCK, Branch, Context, Loop
from ascend_lint.index.syntax import (
    all_params,
    frozen_names,
    names_in,
    own_nodes,
    remember_names,
    statement_targets,
    string_list,
)

_STATIC_LOOP = f"{LANGUAGE}.static_range"
# triton.language's scalar types, by the names kernels spell them with
DTYPE_NAMES = frozenset(
    {"int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    | {"float16", "bfloat16", "float32", "float64", "float8e4nv", "float8e5", "float8e4b15"}
    | {"float8e4b8", "float8e5b16"}
)
# Attributes that read a tensor's metadata, not its data: `x` in `x.dtype` is not a read.
_METADATA_ATTRIBUTES = frozenset({"dtype", "shape", "type"})
# ------------------------------------------------------------------------ jit functions


@dataclass
class JitFunction:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    name: str
    params: list[str]
    constexpr_params: set[str]
    do_not_specialize: set[str]
    owner: str | None  # enclosing class, for `Cls.kernel[grid](...)`
    runtime_names: set[str] = field(default_factory=set)
    contexts: dict[int, Context] = field(default_factory=dict)  # id(stmt) -> Context
    statements: list[ast.stmt] = field(default_factory=list)  # in source order, nested included
    # id(loop node) -> (first, last) index in `statements` of its body
    loop_spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    assignments: dict[str, list[ast.AST]] = field(default_factory=dict)
    jit_names: frozenset[str] = frozenset()  # every @triton.jit name of the module
    # each call in the body, with the statement that holds it
    calls: list[tuple[ast.Call, ast.stmt]] = field(default_factory=list)
    # each comparison and each subtraction in the body (for sequence spans and bounds)
    compares: list[ast.Compare] = field(default_factory=list)
    subtractions: list[ast.BinOp] = field(default_factory=list)
    divisions: list[tuple[ast.BinOp, ast.stmt]] = field(default_factory=list)  # `//`, `%`
    loop_variables: set[str] = field(default_factory=set)  # targets of range / tl.range loops
    # each boolean operator (`and` / `or` node) in the body
    bool_ops: list[ast.BoolOp] = field(default_factory=list)
    # each name or attribute spelled like a triton dtype (`tl.float32`, `float64`); the
    # aliases say which really are triton's
    dtype_mentions: list[ast.Attribute | ast.Name] = field(default_factory=list)
    # name -> [(index in `statements` of the assigning statement, value)], in source order
    definitions: dict[str, list[tuple[int, ast.AST]]] = field(default_factory=dict)
    # name -> [(index in `statements` of the `for`, static_range?)] for loop targets
    loop_targets: dict[str, list[tuple[int, bool]]] = field(default_factory=dict)
    compile_time: CompileTime = field(init=False, repr=False)
    # models later modules build over this kernel, each once, keyed by the module
    # (`values.kernel_values`, `sequences.kernel_sequences`)
    models: dict[str, object] = field(default_factory=dict, repr=False)
    _dependencies: dict[str, frozenset[str]] | None = None
    _statement_order: dict[int, int] | None = None
    _statement_names: list[tuple[frozenset[str], frozenset[str]]] = field(default_factory=list)

    def is_runtime(self, expr: ast.AST, aliases: Aliases, at: ast.stmt | None = None) -> bool:
        """True if `expr` can differ between program instances or launches where the
        statement `at` reads it (see `constexpr`); without `at`, anywhere in the kernel."""
        return self.compile_time.is_runtime(expr, at)

    def runtime_names_in(
        self, expr: ast.AST, aliases: Aliases, at: ast.stmt | None = None
    ) -> list[str]:
        return self.compile_time.runtime_names_in(expr, at)

    def reaching(self, name: str, order: int) -> tuple[Definition, ...]:
        """The bindings of `name` that some path brings to statement `order` (see
        `CompileTime.reaching`)."""
        return self.compile_time.reaching(name, order)

    def dependencies(self) -> dict[str, frozenset[str]]:
        """For each local: every name any of its assignments (or, for a loop variable, the
        loop's `range`) reads; computed once, for the data-flow closures over it."""
        if self._dependencies is None:
            deps: dict[str, set[str]] = {}
            for name, values in self.assignments.items():
                deps.setdefault(name, set()).update(*(frozen_names(v) for v in values))
            for name, loops in self.loop_targets.items():
                for order, _static in loops:
                    deps.setdefault(name, set()).update(frozen_names(self.statements[order].iter))
            self._dependencies = {n: frozenset(d) for n, d in deps.items()}
        return self._dependencies

    def statement_names(self) -> list[tuple[frozenset[str], frozenset[str]]]:
        """For each statement (as in `statements`): the names whose data it reads and the
        names it assigns. `x.dtype`/`x.shape` are metadata, not reads; `x += y` reads x.
        Gathered by the scan, in the same walk that finds the calls."""
        return self._statement_names

    def order_of(self, stmt: ast.stmt) -> int:
        return self.statement_order()[id(stmt)]

    def statement_order(self) -> dict[int, int]:
        """id(stmt) -> its index in `statements` (built once, shared with `compile_time`)."""
        if self._statement_order is None:
            self._statement_order = {id(s): i for i, s in enumerate(self.statements)}
        return self._statement_order

    def context(self, stmt: ast.stmt) -> Context:
        found = self.contexts.get(id(stmt))
        return found if found is not None else OUTSIDE_ANY_BLOCK


def decorator_qual(dec: ast.expr, aliases: Aliases) -> tuple[str | None, ast.Call | None]:
    call = dec if isinstance(dec, ast.Call) else None
    target = dec.func if call else dec
    return aliases.resolve(target), call


def _is_constexpr_annotation(ann: ast.AST | None, aliases: Aliases) -> bool:
    if ann is None:
        return False
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.split(".")[-1] == "constexpr"
    return aliases.resolve(ann) == f"{LANGUAGE}.constexpr" or (
        isinstance(ann, ast.Attribute) and ann.attr == "constexpr"
    )


class KernelScanner:
    """One pass over a kernel body: contexts, assignments, loop variables."""

    def __init__(self, fn: JitFunction, aliases: Aliases):
        self.fn = fn
        self.aliases = aliases

    def scan(self) -> None:
        fn = self.fn
        self._block(fn.node.body, (), ())
        fn.compile_time = CompileTime(fn, self.aliases)
        fn.runtime_names = fn.compile_time.runtime_names

    def _assign(self, name: str, value: ast.AST | None, loops: tuple[Loop, ...]) -> None:
        value = value if value is not None else ast.Constant(None)
        self.fn.assignments.setdefault(name, []).append(value)
        self.fn.definitions.setdefault(name, []).append((len(self.fn.statements) - 1, value))

    def _targets(self, target: ast.AST, value: ast.AST | None, loops: tuple[Loop, ...]) -> None:
        if isinstance(target, ast.Name):
            self._assign(target.id, value, loops)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = (
                value.elts
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                else None
            )
            for i, elt in enumerate(target.elts):
                self._targets(elt, values[i] if values else value, loops)
        elif isinstance(target, ast.Starred):
            self._targets(target.value, None, loops)

    def _block(
        self, body: list[ast.stmt], loops: tuple[Loop, ...], branches: tuple[Branch, ...]
    ) -> None:
        fn = self.fn
        context = Context(loops, branches)  # the same for every statement of the block
        for stmt in body:
            fn.statements.append(stmt)
            fn.contexts[id(stmt)] = context
            reads: set[str] = set()
            metadata: set[int] = set()  # `x` in `x.dtype`: not a read of its data
            # Every node of every kernel statement comes through here: exact type tests,
            # the commonest kinds first (names are almost half of them).
            for node in own_nodes(stmt):
                kind = type(node)
                if kind is ast.Name:
                    if type(node.ctx) is ast.Load and (not metadata or id(node) not in metadata):
                        reads.add(node.id)
                    if node.id in DTYPE_NAMES:
                        fn.dtype_mentions.append(node)
                elif kind is ast.BinOp:
                    op = type(node.op)
                    if op is ast.Sub:
                        fn.subtractions.append(node)
                    elif op is ast.FloorDiv or op is ast.Mod:
                        fn.divisions.append((node, stmt))
                elif kind is ast.Attribute:
                    if node.attr in _METADATA_ATTRIBUTES:
                        metadata.add(id(node.value))
                    elif node.attr in DTYPE_NAMES:
                        fn.dtype_mentions.append(node)
                elif kind is ast.Constant:
                    continue
                elif kind is ast.Call:
                    fn.calls.append((node, stmt))
                elif kind is ast.Compare:
                    fn.compares.append(node)
                elif kind is ast.BoolOp:
                    fn.bool_ops.append(node)
                elif kind is ast.NamedExpr and isinstance(node.target, ast.Name):
                    self._assign(node.target.id, node.value, loops)
            writes = frozenset().union(*[frozen_names(t) for t in statement_targets(stmt)])
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                reads.add(stmt.target.id)
            fn._statement_names.append((frozenset(reads), writes))
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    self._targets(t, stmt.value, loops)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._targets(stmt.target, stmt.value, loops)
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                combined = ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op, stmt.value)
                remember_names(combined, frozen_names(stmt.value) | {stmt.target.id})
                self._assign(stmt.target.id, combined, loops)
            elif isinstance(stmt, ast.For):
                static = (
                    self.aliases.resolve(stmt.iter.func) == _STATIC_LOOP
                    if isinstance(stmt.iter, ast.Call)
                    else False
                )
                loop = Loop(stmt, static)
                order = len(self.fn.statements) - 1
                for name in names_in(stmt.target):
                    # static_range bounds are compile-time by construction
                    self.fn.loop_targets.setdefault(name, []).append((order, static))
                    if static:
                        self.fn.assignments.setdefault(name, []).append(stmt.iter)
                    else:
                        self.fn.loop_variables.add(name)
                self._loop_body(stmt, (*loops, loop), branches)
                self._block(stmt.orelse, loops, branches)
            elif isinstance(stmt, ast.While):
                self._loop_body(stmt, (*loops, Loop(stmt, False)), branches)
                self._block(stmt.orelse, loops, branches)
            elif isinstance(stmt, ast.If):
                # Constexpr-ness of the test is only known after classification; record
                # every branch and let `constexpr_branches` filter.
                self._block(stmt.body, loops, (*branches, Branch(stmt.test, stmt, True)))
                self._block(stmt.orelse, loops, (*branches, Branch(stmt.test, stmt, False)))
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                self._block(stmt.body, loops, branches)
            elif isinstance(stmt, ast.Try):
                for part in (
                    stmt.body,
                    *[h.body for h in stmt.handlers],
                    stmt.orelse,
                    stmt.finalbody,
                ):
                    self._block(part, loops, branches)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue

    def _loop_body(
        self, stmt: ast.For | ast.While, loops: tuple[Loop, ...], branches: tuple[Branch, ...]
    ) -> None:
        # The body's statements (nested ones included) are the next ones in source order.
        first = len(self.fn.statements)
        self._block(stmt.body, loops, branches)
        self.fn.loop_spans[id(stmt)] = (first, len(self.fn.statements) - 1)


def as_jit(node, owner, aliases: Aliases) -> JitFunction | None:
    jit_call = None
    is_jit = False
    for dec in node.decorator_list:
        qual, call = decorator_qual(dec, aliases)
        if qual in (f"{TRITON}.jit", f"{TRITON}.runtime.jit", f"{TRITON}.runtime.jit.jit"):
            is_jit = True
            jit_call = call
    if not is_jit:
        return None
    return make_jit(node, owner, aliases, jit_call)


def make_jit(node, owner, aliases: Aliases, jit_call: ast.Call | None) -> JitFunction:
    params = all_params(node.args)
    names = [a.arg for a in params]
    constexpr = {a.arg for a in params if _is_constexpr_annotation(a.annotation, aliases)}
    dns: set[str] = set()
    if jit_call is not None:
        for kw in jit_call.keywords:
            if kw.arg in ("do_not_specialize", "do_not_specialize_on_alignment"):
                for item in string_list(kw.value):
                    if isinstance(item, int) and 0 <= item < len(names):
                        dns.add(names[item])
                    elif isinstance(item, str):
                        dns.add(item)
    return JitFunction(node, node.name, names, constexpr, dns, owner)
