"""The kernel index: every fact the rules need about one module, computed once.

Rules never walk the syntax tree to rediscover kernels, aliases, constexpr-ness or
launch bindings; they ask this index. It is built from the standard library's `ast`
(fast, positions included); libcst is used only where source is rewritten (fixes).

What the index knows:
* which local names stand for `triton`, `triton.language` and their members, under
  any import spelling (`import triton as tr`, `from triton import jit`,
  `from triton.language import constexpr`, wrapper modules that re-export `triton`/`tl`);
* every `@triton.jit` function (stacked autotune/heuristics, `do_not_specialize`,
  staticmethods, kernels nested in classes or `if` blocks);
* for each kernel, which names are compile-time constants and which are runtime
  values, and which loops and constexpr branches enclose every statement;
* every launch `kernel[grid](...)` and every kernel-to-helper call, with its
  arguments bound to the callee's parameters (positional, keyword, `**dict`), also
  through one level of launch helper (`_launch(kernel, kernel_kwargs=dict(...))`);
* host layout facts: which launch arguments are `x.transpose(1, 2).contiguous()`
  (inline, through local variables, or returned by a module-level helper).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

TRITON = "triton"
LANGUAGE = "triton.language"

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
_STATIC_LOOP = f"{LANGUAGE}.static_range"

# Bounded analysis: a pathological file must not make the index slow.
_MAX_FIXPOINT_ROUNDS = 50
_MAX_HELPER_DEPTH = 8


def _dotted(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def call_name(node: ast.AST) -> str | None:
    """The bare callee name of a call: `f` for `f(...)`, `k` for `self.k(...)`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def names_in(node: ast.AST | None) -> set[str]:
    """Every identifier an expression mentions."""
    if node is None:
        return set()
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name):
            found.add(n.id)
        else:
            stack.extend(children(n))
    return found


def additive_terms(node: ast.AST) -> list[ast.AST]:
    """`a + b*c - d` -> [a, b*c, d]: the summands of a pointer expression."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return additive_terms(node.left) + additive_terms(node.right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to"
    ):
        return additive_terms(node.func.value)
    return [node]


def factors(node: ast.AST) -> list[ast.AST]:
    """`(a*b)*c` -> [a, b, c]: the factors of one summand (casts are looked through)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return factors(node.left) + factors(node.right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to"
    ):
        return factors(node.func.value)
    return [node]


# Naming conventions of Triton kernels, used where a rule must tell axes apart.
# Head counts multiply the time index in a [B, T, HV] layout ...
_HEAD_COUNT = re.compile(r"^(H|HV|HQ|HK|NH|H_?V|N_?HEADS?|NUM_HEADS|num_heads|n_heads|nheads)$")
# ... and a sequence length multiplies the head index in the transposed [B, HV, T] one.
_LENGTH = re.compile(r"^(T\w*|L|N_CTX|\w*(len|LEN|seq|SEQ)\w*)$")


def is_head_count(name: str) -> bool:
    return bool(_HEAD_COUNT.match(name))


def is_length(name: str) -> bool:
    return bool(_LENGTH.match(name))


def is_literal(node: ast.AST | None, value: object) -> bool:
    return (
        isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value
    )


# ----------------------------------------------------------------------------- imports


@dataclass
class Aliases:
    """Local names bound to triton, triton.language or one of their members."""

    modules: dict[str, str] = field(
        default_factory=dict
    )  # local name -> "triton" | "triton.language"
    members: dict[str, str] = field(default_factory=dict)  # local name -> qualified member

    @property
    def any(self) -> bool:
        return bool(self.modules or self.members)

    def resolve(self, node: ast.AST) -> str | None:
        """Qualified name of `tl.load`, `triton.language.load`, `load` (imported), ..."""
        parts = _dotted(node)
        if not parts:
            return None
        head, rest = parts[0], parts[1:]
        if head in self.modules:
            base = self.modules[head]
        elif head in self.members:
            base = self.members[head]
        else:
            return None
        qual = ".".join([base, *rest])
        # `triton.language.core.load` and friends are the same functions.
        for sub in (".core.", ".standard.", ".math."):
            qual = qual.replace(LANGUAGE + sub, LANGUAGE + ".")
        return qual

    @classmethod
    def collect(cls, tree: ast.Module) -> Aliases:
        aliases = cls()
        for node in all_statements(tree.body):
            if isinstance(node, ast.Import):
                for item in node.names:
                    if item.name in (TRITON, LANGUAGE) or item.name.startswith(TRITON + "."):
                        if item.asname:
                            aliases.modules[item.asname] = item.name
                        else:
                            aliases.modules[TRITON] = TRITON
            elif isinstance(node, ast.ImportFrom) and node.module:
                mod = node.module
                for item in node.names:
                    local = item.asname or item.name
                    if mod == TRITON or mod.startswith(TRITON + "."):
                        qual = f"{mod}.{item.name}"
                        if qual in (LANGUAGE,):
                            aliases.modules[local] = LANGUAGE
                        elif mod == "triton.runtime.jit" or mod == "triton.runtime":
                            aliases.members[local] = f"{TRITON}.{item.name}"
                        else:
                            aliases.members[local] = qual
                    elif item.name == TRITON:
                        # Wrapper modules that re-export triton (`from vllm.triton_utils import triton`).
                        aliases.modules[local] = TRITON
                    elif item.name in ("tl", "language") and "triton" in mod:
                        aliases.modules[local] = LANGUAGE
        return aliases


# ------------------------------------------------------------------------ jit functions


@dataclass
class Branch:
    """One side of an `if` whose test is a compile-time value."""

    test: ast.expr
    node: ast.If
    taken: bool  # True: the body, False: the else side


@dataclass
class Loop:
    node: ast.For | ast.While
    static: bool  # tl.static_range: unrolled at compile time


@dataclass
class Context:
    """Where a statement sits inside a kernel."""

    loops: tuple[Loop, ...]
    branches: tuple[Branch, ...]  # enclosing constexpr-test branches, outermost first


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
    assignments: dict[str, list[ast.AST]] = field(default_factory=dict)
    jit_names: frozenset[str] = frozenset()  # every @triton.jit name of the module
    # each call in the body, with the statement that holds it
    calls: list[tuple[ast.Call, ast.stmt]] = field(default_factory=list)
    loop_variables: set[str] = field(default_factory=set)  # targets of range / tl.range loops
    # name -> [(index in `statements` of the assigning statement, value)], in source order
    definitions: dict[str, list[tuple[int, ast.AST]]] = field(default_factory=dict)
    _facts: ValueFacts | None = None
    _statement_order: dict[int, int] | None = None
    _statement_names: list[tuple[frozenset[str], frozenset[str]]] | None = None

    def is_runtime(self, expr: ast.AST, aliases: Aliases) -> bool:
        """True if `expr` can differ between program instances or launches."""
        return not _is_compile_time(expr, self, aliases)

    def runtime_names_in(self, expr: ast.AST, aliases: Aliases) -> list[str]:
        return sorted(n for n in names_in(expr) if n in self.runtime_names)

    def facts(self, aliases: Aliases) -> ValueFacts:
        """int64 values, loop-derived values, program ids and pointers of this kernel."""
        if self._facts is None:
            self._facts = ValueFacts.compute(self, aliases)
        return self._facts

    def statement_names(self) -> list[tuple[frozenset[str], frozenset[str]]]:
        """For each statement (as in `statements`): the names whose data it reads and the
        names it assigns. `x.dtype`/`x.shape` are metadata, not reads; `x += y` reads x."""
        if self._statement_names is None:
            table = []
            for stmt in self.statements:
                reads: set[str] = set()
                meta: set[int] = set()
                for node in own_nodes(stmt):
                    if isinstance(node, ast.Attribute) and node.attr in ("dtype", "shape", "type"):
                        meta.add(id(node.value))
                    elif (
                        isinstance(node, ast.Name)
                        and isinstance(node.ctx, ast.Load)
                        and id(node) not in meta
                    ):
                        reads.add(node.id)
                writes: set[str] = set()
                targets = _statement_targets(stmt)
                for t in targets:
                    writes |= names_in(t)
                if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                    reads.add(stmt.target.id)
                table.append((frozenset(reads), frozenset(writes)))
            self._statement_names = table
        return self._statement_names

    def value_before(self, name: str, stmt: ast.stmt) -> ast.AST | None:
        """The value of the last assignment to `name` that precedes `stmt` in source order
        (loops and branches are not followed: a straight-line approximation)."""
        here = self._order().get(id(stmt), len(self.statements))
        best = None
        for index, value in self.definitions.get(name, []):
            if index < here:
                best = value
        return best

    def order_of(self, stmt: ast.stmt) -> int:
        return self._order()[id(stmt)]

    def _order(self) -> dict[int, int]:
        if self._statement_order is None:
            self._statement_order = {id(s): i for i, s in enumerate(self.statements)}
        return self._statement_order

    def context(self, stmt: ast.stmt) -> Context:
        return self.contexts.get(id(stmt), Context((), ()))


_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: ast.AST) -> list[ast.AST]:
    """Direct child nodes; a leaner `ast.iter_child_nodes` (the index walks every node)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        # ctx/op/ops hold marker nodes (Load, Add, Lt...) that no rule looks at.
        fields = _FIELDS[type(node)] = tuple(
            f for f in node._fields if f not in ("ctx", "op", "ops")
        )
    out: list[ast.AST] = []
    for f in fields:
        value = getattr(node, f, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def _statement_targets(stmt: ast.stmt) -> list[ast.AST]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    return []


def own_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """Nodes of a statement, not descending into nested statements."""
    stack: list[ast.AST] = []
    for name in stmt._fields:
        if name in _BLOCK_FIELDS:
            continue
        value = getattr(stmt, name, None)
        if isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            stack.append(value)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


def all_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included, without visiting expressions."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        for name in _BLOCK_FIELDS:
            block = getattr(stmt, name, None)
            if block:
                for item in reversed(block):
                    if isinstance(
                        item, (ast.excepthandler, getattr(ast, "match_case", ast.excepthandler))
                    ):
                        stack.extend(reversed(item.body))
                    else:
                        stack.append(item)


def _is_compile_time(expr: ast.AST, fn: JitFunction, aliases: Aliases) -> bool:
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        return expr.id not in fn.runtime_names
    if isinstance(expr, ast.Attribute):
        if aliases.resolve(expr):
            return True
        if expr.attr in _STATIC_ATTRIBUTES:
            return True
        return _is_compile_time(expr.value, fn, aliases)
    if isinstance(expr, ast.Call):
        qual = aliases.resolve(expr.func)
        if qual and qual.startswith(TRITON) and qual not in _COMPILE_TIME_CALLS:
            return False
        if call_name(expr.func) in fn.jit_names:
            return False  # @triton.jit helpers return tensors
        args = list(expr.args) + [k.value for k in expr.keywords]
        return all(_is_compile_time(a, fn, aliases) for a in args)
    if isinstance(expr, (ast.Lambda, ast.NamedExpr)):
        return False
    return all(
        _is_compile_time(c, fn, aliases)
        for c in ast.iter_child_nodes(expr)
        if isinstance(c, ast.expr)
    )


def _decorator_qual(dec: ast.expr, aliases: Aliases) -> tuple[str | None, ast.Call | None]:
    call = dec if isinstance(dec, ast.Call) else None
    target = dec.func if call else dec
    return aliases.resolve(target), call


def _string_list(node: ast.AST | None) -> list[str | int]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [
            e.value
            for e in node.elts
            if isinstance(e, ast.Constant) and isinstance(e.value, (str, int))
        ]
    return []


def _all_params(args: ast.arguments) -> list[ast.arg]:
    return [
        *args.posonlyargs,
        *args.args,
        *([args.vararg] if args.vararg else []),
        *args.kwonlyargs,
    ]


def _is_constexpr_annotation(ann: ast.AST | None, aliases: Aliases) -> bool:
    if ann is None:
        return False
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.split(".")[-1] == "constexpr"
    return aliases.resolve(ann) == f"{LANGUAGE}.constexpr" or (
        isinstance(ann, ast.Attribute) and ann.attr == "constexpr"
    )


class _KernelScanner:
    """One pass over a kernel body: contexts, assignments, loop variables."""

    def __init__(self, fn: JitFunction, aliases: Aliases):
        self.fn = fn
        self.aliases = aliases
        self.static_loop_vars: set[str] = set()
        self.runtime_seeds: set[str] = set()
        self.loop_carried: set[str] = set()

    def scan(self) -> None:
        fn = self.fn
        for name in fn.params:
            if name not in fn.constexpr_params or name in fn.do_not_specialize:
                self.runtime_seeds.add(name)
        self._block(fn.node.body, (), ())
        self._classify()

    def _assign(self, name: str, value: ast.AST | None, loops: tuple[Loop, ...]) -> None:
        value = value if value is not None else ast.Constant(None)
        self.fn.assignments.setdefault(name, []).append(value)
        self.fn.definitions.setdefault(name, []).append((len(self.fn.statements) - 1, value))
        if value is None:
            self.runtime_seeds.add(name)
        elif any(not loop.static for loop in loops) and name in names_in(value):
            # A value rebuilt from itself in a runtime loop is carried across iterations.
            self.loop_carried.add(name)

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
        for stmt in body:
            self.fn.statements.append(stmt)
            self.fn.contexts[id(stmt)] = Context(loops, branches)
            for node in own_nodes(stmt):
                if isinstance(node, ast.Call):
                    self.fn.calls.append((node, stmt))
                elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                    self._assign(node.target.id, node.value, loops)
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    self._targets(t, stmt.value, loops)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._targets(stmt.target, stmt.value, loops)
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                combined = ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op, stmt.value)
                self._assign(stmt.target.id, combined, loops)
            elif isinstance(stmt, ast.For):
                static = (
                    self.aliases.resolve(stmt.iter.func) == _STATIC_LOOP
                    if isinstance(stmt.iter, ast.Call)
                    else False
                )
                loop = Loop(stmt, static)
                for name in names_in(stmt.target):
                    if static:  # static_range bounds are compile-time by construction
                        self.static_loop_vars.add(name)
                        self.fn.assignments.setdefault(name, []).append(stmt.iter)
                    else:
                        self.runtime_seeds.add(name)
                        self.fn.loop_variables.add(name)
                self._block(stmt.body, (*loops, loop), branches)
                self._block(stmt.orelse, loops, branches)
            elif isinstance(stmt, ast.While):
                self._block(stmt.body, (*loops, Loop(stmt, False)), branches)
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

    def _classify(self) -> None:
        fn = self.fn
        runtime = set(self.runtime_seeds) | self.loop_carried
        runtime -= self.static_loop_vars
        fn.runtime_names = runtime
        for _ in range(_MAX_FIXPOINT_ROUNDS):
            changed = False
            for name, values in fn.assignments.items():
                if name in runtime or name in self.static_loop_vars:
                    continue
                if any(not _is_compile_time(v, fn, self.aliases) for v in values):
                    runtime.add(name)
                    changed = True
            if not changed:
                break


# ----------------------------------------------------------------------------- launches


@dataclass
class CallBinding:
    """A call to a kernel or helper, its arguments bound to the callee's parameters."""

    call: ast.Call
    callee: JitFunction
    args: dict[str, list[ast.AST]]  # parameter -> argument expressions (several sources possible)
    host: HostFunction | None  # where the launch happens (None for kernel-to-helper calls)
    caller: JitFunction | None = None  # the calling kernel, for kernel-to-helper calls


@dataclass
class HostFunction:
    """A plain Python function (or the module body) that may launch kernels."""

    node: ast.AST
    name: str
    params: list[str]
    assignments: dict[str, list[ast.AST]] = field(default_factory=dict)
    key_assignments: dict[str, list[tuple[str, ast.AST, ast.AST]]] = field(default_factory=dict)
    # ^ dict variable -> [(key, value, the whole statement)] for `kw['KEY'] = value`
    guards: dict[int, tuple[tuple[ast.expr, bool], ...]] = field(default_factory=dict)
    # ^ id(node) -> enclosing if-tests (test, taken) for assignments and returns
    returns: list[ast.Return] = field(default_factory=list)


def _host_scan(
    host: HostFunction, body: list[ast.stmt], guards: tuple[tuple[ast.expr, bool], ...]
) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                _host_targets(host, t, stmt.value, guards)
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and isinstance(t.slice, ast.Constant)
                    and isinstance(t.slice.value, str)
                ):
                    host.key_assignments.setdefault(t.value.id, []).append(
                        (t.slice.value, stmt.value, stmt)
                    )
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            _host_targets(host, stmt.target, stmt.value, guards)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            host.returns.append(stmt)
            host.guards[id(stmt)] = guards
        if isinstance(stmt, ast.If):
            _host_scan(host, stmt.body, (*guards, (stmt.test, True)))
            _host_scan(host, stmt.orelse, (*guards, (stmt.test, False)))
            # An early return in the body guards what follows it.
            if stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                guards = (*guards, (stmt.test, False))
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.AsyncWith, ast.AsyncFor)):
            _host_scan(host, stmt.body, guards)
            _host_scan(host, getattr(stmt, "orelse", []), guards)
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, *[h.body for h in stmt.handlers], stmt.orelse, stmt.finalbody):
                _host_scan(host, part, guards)


def _host_targets(host: HostFunction, target: ast.AST, value: ast.AST, guards: tuple) -> None:
    if isinstance(target, ast.Name):
        host.assignments.setdefault(target.id, []).append(value)
        host.guards[id(value)] = guards
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            for elt, v in zip(target.elts, value.elts):
                _host_targets(host, elt, v, guards)
        else:
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    # Remember "element i of this value" for tuple-returning helpers.
                    marker = _TupleElement(value, i)
                    host.assignments.setdefault(elt.id, []).append(marker)
                    host.guards[id(marker)] = guards


class _TupleElement(ast.expr):
    """Element `index` of the tuple that `value` evaluates to (`a, b = helper(...)`)."""

    _fields = ("value",)

    def __init__(self, value: ast.AST, index: int):
        super().__init__()
        self.value = value
        self.index = index


# ----------------------------------------------------------------------------- the index


@dataclass
class KernelIndex:
    tree: ast.Module
    aliases: Aliases
    kernels: list[JitFunction]
    hosts: list[HostFunction]
    launches: list[CallBinding]
    helper_calls: list[CallBinding]  # kernel -> @triton.jit helper
    configs: list[ast.Call]  # triton.Config(...)
    launch_calls: list[tuple[ast.Call, HostFunction]]  # every `X[grid](...)`, resolved or not
    by_name: dict[str, list[JitFunction]]
    host_by_name: dict[str, HostFunction]
    host_calls: list[tuple[ast.Call, HostFunction]] = field(default_factory=list)  # outside kernels
    host_dicts: list[tuple[ast.Dict, HostFunction]] = field(default_factory=list)
    _calls_by_name: dict[str, list[tuple[ast.Call, HostFunction]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    _transposed_cache: dict[int, set[str]] | None = None

    # -- construction --------------------------------------------------------------
    @classmethod
    def build(cls, tree: ast.Module) -> KernelIndex:
        aliases = Aliases.collect(tree)
        kernels: list[JitFunction] = []
        module_host = HostFunction(tree, "<module>", [])
        _host_scan(module_host, tree.body, ())
        hosts: list[HostFunction] = [module_host]
        defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        jit_assignments: list[ast.Assign] = []

        def visit(body: list[ast.stmt], owner: str | None) -> None:
            for stmt in body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    defs.setdefault(stmt.name, stmt)
                    jit = cls._as_jit(stmt, owner, aliases)
                    if jit is not None:
                        kernels.append(jit)
                        continue
                    host = HostFunction(stmt, stmt.name, [a.arg for a in _all_params(stmt.args)])
                    _host_scan(host, stmt.body, ())
                    hosts.append(host)
                    visit(stmt.body, owner)
                elif isinstance(stmt, ast.ClassDef):
                    visit(stmt.body, stmt.name)
                else:
                    if (
                        isinstance(stmt, ast.Assign)
                        and isinstance(stmt.value, ast.Call)
                        and aliases.resolve(stmt.value.func) == f"{TRITON}.jit"
                    ):
                        jit_assignments.append(stmt)
                    for child_body in _child_bodies(stmt):
                        visit(child_body, owner)

        visit(tree.body, None)

        # `kernel = triton.jit(fn)`: the kernel is known by the assigned name too.
        by_id = {id(k.node): k for k in kernels}
        extra_names: list[tuple[str, JitFunction]] = []
        for stmt in jit_assignments:
            args = stmt.value.args
            if args and isinstance(args[0], ast.Name) and args[0].id in defs:
                fdef = defs[args[0].id]
                if id(fdef) not in by_id:
                    by_id[id(fdef)] = cls._make_jit(fdef, None, aliases, stmt.value)
                    kernels.append(by_id[id(fdef)])
                    hosts = [h for h in hosts if h.node is not fdef]
                names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
                extra_names += [(name, by_id[id(fdef)]) for name in names]

        by_name: dict[str, list[JitFunction]] = defaultdict(list)
        for k in kernels:
            by_name[k.name].append(k)
        for name, k in extra_names:
            if k not in by_name[name]:
                by_name[name].append(k)
        jit_names = frozenset(by_name)
        for k in kernels:
            k.jit_names = jit_names
            _KernelScanner(k, aliases).scan()

        index = cls(
            tree=tree,
            aliases=aliases,
            kernels=kernels,
            hosts=hosts,
            launches=[],
            helper_calls=[],
            configs=[],
            launch_calls=[],
            by_name=dict(by_name),
            host_by_name={h.name: h for h in hosts},
        )
        index._collect_host_nodes()
        index._find_calls()
        return index

    def _collect_host_nodes(self) -> None:
        """One walk over everything outside kernel bodies: calls and dict displays, each
        with the host function that holds it. Decorators and defaults belong to the
        scope around a function, where Python evaluates them."""
        owners: dict[int, HostFunction | JitFunction] = {id(h.node): h for h in self.hosts}
        owners.update({id(k.node): k for k in self.kernels})
        stack: list[tuple[ast.AST, HostFunction | None]] = [
            (s, self.hosts[0]) for s in self.tree.body
        ]
        while stack:
            node, host = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                outer = [
                    *getattr(node, "decorator_list", []),
                    *node.args.defaults,
                    *node.args.kw_defaults,
                ]
                stack.extend((n, host) for n in outer if n is not None)
                owner = owners.get(id(node), host)  # a lambda runs in its definer's scope
                inner = owner if isinstance(owner, HostFunction) else None  # kernels: not host code
                body = node.body if isinstance(node.body, list) else [node.body]
                stack.extend((n, inner) for n in body)
                continue
            if host is not None:
                if isinstance(node, ast.Call):
                    self.host_calls.append((node, host))
                elif isinstance(node, ast.Dict):
                    self.host_dicts.append((node, host))
            stack.extend((child, host) for child in children(node))
        self.host_calls.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
        for call, host in self.host_calls:
            name = call_name(call.func)
            if name:
                self._calls_by_name[name].append((call, host))

    @staticmethod
    def _as_jit(node, owner, aliases: Aliases) -> JitFunction | None:
        jit_call = None
        is_jit = False
        for dec in node.decorator_list:
            qual, call = _decorator_qual(dec, aliases)
            if qual in (f"{TRITON}.jit", f"{TRITON}.runtime.jit", f"{TRITON}.runtime.jit.jit"):
                is_jit = True
                jit_call = call
        if not is_jit:
            return None
        return KernelIndex._make_jit(node, owner, aliases, jit_call)

    @staticmethod
    def _make_jit(node, owner, aliases: Aliases, jit_call: ast.Call | None) -> JitFunction:
        params = _all_params(node.args)
        names = [a.arg for a in params]
        constexpr = {a.arg for a in params if _is_constexpr_annotation(a.annotation, aliases)}
        dns: set[str] = set()
        if jit_call is not None:
            for kw in jit_call.keywords:
                if kw.arg in ("do_not_specialize", "do_not_specialize_on_alignment"):
                    for item in _string_list(kw.value):
                        if isinstance(item, int) and 0 <= item < len(names):
                            dns.add(names[item])
                        elif isinstance(item, str):
                            dns.add(item)
        return JitFunction(node, node.name, names, constexpr, dns, owner)

    def _find_calls(self) -> None:
        config_names = {
            f"{TRITON}.Config",
            f"{TRITON}.runtime.Config",
            f"{TRITON}.runtime.autotuner.Config",
        }
        for call, host in self.host_calls:
            if isinstance(call.func, ast.Subscript):
                self.launch_calls.append((call, host))
                for callee, via in self._launch_targets(call.func.value, host):
                    self.launches.append(
                        CallBinding(call, callee, _bind(call, callee, via, host, self), host)
                    )
            elif self.aliases.resolve(call.func) in config_names:
                self.configs.append(call)
        for k in self.kernels:
            for call, _stmt in k.calls:
                for callee in self.resolve_callee(call.func):
                    binding = CallBinding(
                        call, callee, _bind(call, callee, None, None, self), None, k
                    )
                    self.helper_calls.append(binding)

    # -- queries ----------------------------------------------------------------------
    def flag_selects_fallback_only_for_one_head(self: KernelIndex, flag: str) -> bool:
        """True when every host value of `flag` can be False only where there is one head,
        so the legacy fallback in the flag's else branch reads with stride 1 anyway.

        `HV != 1` and literal True are safe; False is safe only under an `HV == 1`-style
        guard. A value set from anything else (a sequence length, the synthetic zero gate
        buffer path) can select the strided fallback with many heads. A module that passes
        the flag nowhere is trusted: the documented pattern is in use.
        """
        for value, guards in self.flag_values(flag):
            if isinstance(value, ast.Constant):
                if value.value is True or (value.value is False and _guard_implies_one(guards)):
                    continue
                return False
            if _single_head_test(value) == "many":
                continue
            if isinstance(value, (ast.Name, ast.Attribute, _TupleElement, ast.Subscript)):
                continue  # unknown origin (a parameter, another module): no evidence either way
            return False
        return True

    def transposed_params(self: KernelIndex, fn: JitFunction) -> set[str]:
        """Parameters of `fn` that receive transposed storage from some launch, directly or
        through the kernels that call this helper."""
        cache = self._transposed_cache
        if cache is None:
            cache = {id(k): set() for k in self.kernels}
            for binding in self.launches:
                for param, exprs in binding.args.items():
                    for expr in exprs:
                        if any(
                            is_transposed_copy(v) for v, _ in self.host_values(expr, binding.host)
                        ):
                            cache[id(binding.callee)].add(param)
            for _ in range(_MAX_HELPER_DEPTH):
                changed = False
                for binding in self.helper_calls:
                    caller = binding.caller
                    tainted = pointer_names(caller, cache[id(caller)])
                    for param, exprs in binding.args.items():
                        if param not in cache[id(binding.callee)] and any(
                            names_in(e) & tainted for e in exprs
                        ):
                            cache[id(binding.callee)].add(param)
                            changed = True
                if not changed:
                    break
            self._transposed_cache = cache
        return cache.get(id(fn), set())

    def option_dicts(self) -> Iterator[tuple[str, ast.AST, ast.AST]]:
        """Launch options set in dicts that reach a call (`**kw`, `kernel_kwargs=dict(...)`):
        yields (key, key-or-keyword node, the container node)."""
        passed: dict[int, set[str]] = defaultdict(set)  # host -> dict variables passed on
        containers: list[tuple[ast.AST, HostFunction]] = []
        for call, host in self.host_calls:
            for value in (*call.args, *(k.value for k in call.keywords)):
                if isinstance(value, ast.Starred):
                    value = value.value
                if isinstance(value, ast.Name):
                    passed[id(host)].add(value.id)
                elif _is_dict_builder(value):
                    containers.append((value, host))
        for node, host in self.host_dicts:
            for k, v in zip(node.keys, node.values):
                if k is None and isinstance(v, ast.Name):
                    passed[id(host)].add(v.id)
        for host in self.hosts:
            for name in sorted(passed.get(id(host), ())):
                containers += [
                    (v, host) for v in host.assignments.get(name, []) if _is_dict_builder(v)
                ]
                for key, _value, stmt in host.key_assignments.get(name, []):
                    yield key, stmt, stmt
        seen: set[int] = set()
        for container, _host in containers:
            for inner in ast.walk(container):
                if id(inner) in seen or not _is_dict_builder(inner):
                    continue
                seen.add(id(inner))
                if isinstance(inner, ast.Dict):
                    for k in inner.keys:
                        if isinstance(k, ast.Constant) and isinstance(k.value, str):
                            yield k.value, k, inner
                else:
                    for kw in inner.keywords:
                        if kw.arg:
                            yield kw.arg, kw, inner

    def resolve_callee(self, func: ast.AST) -> list[JitFunction]:
        """`k`, `self.k`, `Cls.k`, `module.k` -> the @triton.jit function of that name.

        A name defined twice means its last definition, as at run time (launches run
        after the module is imported); `Cls.k` prefers a kernel defined in class `Cls`.
        """
        if isinstance(func, ast.Name):
            found = self.by_name.get(func.id, [])
            top_level = [k for k in found if k.owner is None]
            return (top_level or found)[-1:]
        if isinstance(func, ast.Attribute) and not self.aliases.resolve(func):
            found = self.by_name.get(func.attr, [])
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            in_class = [k for k in found if k.owner is not None and k.owner == owner]
            return (in_class or found)[-1:]
        return []

    def _launch_targets(
        self, kernel_expr: ast.AST, host: HostFunction
    ) -> list[tuple[JitFunction, tuple | None]]:
        """Kernels a launch can run. `via` is (outer call, host) when the kernel object
        arrived as an argument of a launch helper, so the helper's callers bind the rest."""
        direct = self._kernels_of(kernel_expr, host, depth=0)
        if direct:
            return [(k, None) for k in direct]
        if isinstance(kernel_expr, ast.Name) and kernel_expr.id in host.params:
            pos = host.params.index(kernel_expr.id)
            found = []
            for caller_call, caller_host in self._calls_to(host.name):
                arg = _argument_for(caller_call, kernel_expr.id, pos)
                if arg is None:
                    continue
                for k in self._kernels_of(arg, caller_host, depth=0):
                    found.append((k, (caller_call, caller_host, host)))
            return found
        return []

    def _kernels_of(self, expr: ast.AST, host: HostFunction, depth: int) -> list[JitFunction]:
        if depth > _MAX_HELPER_DEPTH:
            return []
        if isinstance(expr, ast.IfExp):
            return self._kernels_of(expr.body, host, depth + 1) + self._kernels_of(
                expr.orelse, host, depth + 1
            )
        found = self.resolve_callee(expr)
        if found:
            return found
        if isinstance(expr, ast.Name):
            out: list[JitFunction] = []
            for value in host.assignments.get(expr.id, []):
                if not isinstance(value, _TupleElement):
                    out += self._kernels_of(value, host, depth + 1)
            return out
        return []

    def _calls_to(self, host_name: str) -> list[tuple[ast.Call, HostFunction]]:
        calls = self._calls_by_name.get(host_name, [])
        return [(c, h) for c, h in calls if not isinstance(c.func, ast.Subscript)]

    def calls_in(self, fn: JitFunction, qual: str) -> Iterator[tuple[ast.Call, ast.stmt]]:
        for call, stmt in fn.calls:
            if self.aliases.resolve(call.func) == qual:
                yield call, stmt

    def host_values(
        self, expr: ast.AST, host: HostFunction | None, depth: int = 0
    ) -> list[tuple[ast.AST, tuple]]:
        """The expressions a host-side name can hold, with the if-guards around them.

        Follows local assignments and tuple-unpacking of module-level helper returns.
        """
        if depth > _MAX_HELPER_DEPTH or host is None:
            return [(expr, ())]
        if isinstance(expr, ast.Name) and expr.id in host.assignments:
            out: list[tuple[ast.AST, tuple]] = []
            for value in host.assignments[expr.id]:
                guards = host.guards.get(id(value), ())
                for v, g in self.host_values(value, host, depth + 1):
                    out.append((v, guards + g))
            return out
        if isinstance(expr, ast.Call) and not isinstance(expr.func, ast.Attribute):
            helper = self.host_by_name.get(call_name(expr.func) or "")
            if helper is not None and helper is not host and helper.returns:
                out = []
                for ret in helper.returns:
                    guards = helper.guards.get(id(ret), ())
                    for v, g in self.host_values(ret.value, helper, depth + 1):
                        out.append((v, guards + g))
                return out
        if isinstance(expr, _TupleElement):
            call = expr.value
            helper = (
                self.host_by_name.get(call_name(call.func)) if isinstance(call, ast.Call) else None
            )
            if helper is None:
                return [(expr, ())]
            out = []
            for ret in helper.returns:
                guards = helper.guards.get(id(ret), ())
                if isinstance(ret.value, ast.Tuple) and len(ret.value.elts) > expr.index:
                    for v, g in self.host_values(ret.value.elts[expr.index], helper, depth + 1):
                        out.append((v, guards + g))
            return out or [(expr, ())]
        return [(expr, ())]

    def flag_values(self, flag: str) -> list[tuple[ast.AST, tuple]]:
        """Every value the host passes for a kernel parameter named `flag`, anywhere in the
        module (keyword arguments, dict entries, `kw['FLAG'] = ...`), resolved through
        local variables and helper returns, with their if-guards."""
        out: list[tuple[ast.AST, tuple]] = []
        for host in self.hosts:
            for items in host.key_assignments.values():
                out += [
                    v
                    for key, value, _ in items
                    if key == flag
                    for v in self.host_values(value, host)
                ]
        for call, host in self.host_calls:
            for kw in call.keywords:
                if kw.arg == flag:
                    out += self.host_values(kw.value, host)
        for node, host in self.host_dicts:
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == flag:
                    out += self.host_values(v, host)
        return out


def _child_bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [stmt.body, *[h.body for h in stmt.handlers], stmt.orelse, stmt.finalbody]
    return []


def _argument_for(call: ast.Call, param: str, position: int) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(positional) == len(call.args) and position < len(positional):
        return positional[position]
    return None


def _dict_items(
    expr: ast.AST, host: HostFunction | None, index: KernelIndex, depth: int = 0
) -> list[tuple[str, ast.AST]]:
    """(key, value) pairs of a dict the host builds: literals, `dict(...)`, variables
    filled with `kw['K'] = v`, and dicts splatted into other dicts."""
    if depth > _MAX_HELPER_DEPTH:
        return []
    items: list[tuple[str, ast.AST]] = []
    if isinstance(expr, ast.Dict):
        for k, v in zip(expr.keys, expr.values):
            if k is None:
                items += _dict_items(v, host, index, depth + 1)
            elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                items.append((k.value, v))
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict":
        for a in expr.args:
            items += _dict_items(a, host, index, depth + 1)
        for kw in expr.keywords:
            if kw.arg is None:
                items += _dict_items(kw.value, host, index, depth + 1)
            else:
                items.append((kw.arg, kw.value))
    elif isinstance(expr, ast.Name) and host is not None:
        for value in host.assignments.get(expr.id, []):
            items += _dict_items(value, host, index, depth + 1)
        for key, value, _stmt in host.key_assignments.get(expr.id, []):
            items.append((key, value))
    return items


def _bind(
    call: ast.Call,
    callee: JitFunction,
    via: tuple | None,
    host: HostFunction | None,
    index: KernelIndex,
) -> dict[str, list[ast.AST]]:
    bound: dict[str, list[ast.AST]] = defaultdict(list)
    params = callee.params
    for pos, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            break  # later positions are unknown
        if pos < len(params):
            bound[params[pos]].append(a)
    for kw in call.keywords:
        if kw.arg is not None:
            bound[kw.arg].append(kw.value)
            continue
        splat = kw.value
        items = _dict_items(splat, host, index)
        if via is not None and isinstance(splat, ast.Name):
            caller_call, caller_host, helper_host = via
            if splat.id in helper_host.params:
                arg = _argument_for(caller_call, splat.id, helper_host.params.index(splat.id))
                if arg is not None:
                    items += _dict_items(arg, caller_host, index)
        for key, value in items:
            bound[key].append(value)
    return dict(bound)


# ----------------------------------------------------------------- layout and flag facts

_LAYOUT_CHANGES = {"transpose", "permute", "swapaxes", "movedim"}


def is_transposed_copy(expr: ast.AST) -> bool:
    """`x.transpose(1, 2).contiguous()` and friends: a new tensor in transposed storage.

    A view without `.contiguous()` keeps the old storage (its strides say so), so only
    materialised copies count.
    """
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)):
        return False
    if expr.func.attr not in ("contiguous", "clone"):
        return False
    inner = expr.func.value
    while (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and inner.func.attr in ("to", "float")
    ):
        inner = inner.func.value
    return (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and inner.func.attr in _LAYOUT_CHANGES
    )


def _single_head_test(test: ast.AST) -> str | None:
    """'one' for `X == 1` / `X <= 1` / `X < 2`, 'many' for `X != 1` / `X > 1` / `X >= 2`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _single_head_test(test.operand)
        return {"one": "many", "many": "one"}.get(inner or "")
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
        left, right = right, left
        op = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(), ast.GtE: ast.LtE()}.get(
            type(op), op
        )
    if not isinstance(right, ast.Constant) or isinstance(left, ast.Constant):
        return None
    n = right.value
    if (
        (isinstance(op, ast.Eq) and n == 1)
        or (isinstance(op, ast.LtE) and n == 1)
        or (isinstance(op, ast.Lt) and n == 2)
    ):
        return "one"
    if (
        (isinstance(op, ast.NotEq) and n == 1)
        or (isinstance(op, ast.Gt) and n == 1)
        or (isinstance(op, ast.GtE) and n == 2)
    ):
        return "many"
    return None


def _guard_implies_one(guards: tuple[tuple[ast.expr, bool], ...]) -> bool:
    for test, taken in guards:
        tests = test.values if isinstance(test, ast.BoolOp) else [test]
        kinds = {_single_head_test(t) for t in tests}
        if taken and "one" in kinds:
            return True
        if (
            not taken
            and "many" in kinds
            and not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or))
        ):
            return True
    return False


def _contig_flag_of(test: ast.AST) -> tuple[str, bool] | None:
    """`if G_T_CONTIG:` -> ('G_T_CONTIG', True); `if not G_T_CONTIG:` -> (..., False)."""
    if isinstance(test, ast.Name) and test.id.upper().endswith("_CONTIG"):
        return test.id, True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _contig_flag_of(test.operand)
        if inner:
            return inner[0], not inner[1]
    return None


def contig_branch(context: Context) -> tuple[str, bool] | None:
    """The innermost `*_T_CONTIG` constexpr branch around a statement: (flag, on contig side)."""
    for branch in reversed(context.branches):
        flag = _contig_flag_of(branch.test)
        if flag:
            name, positive = flag
            return name, branch.taken == positive
    return None


def pointer_names(fn: JitFunction, roots: set[str]) -> set[str]:
    """`roots` plus every local computed from them (`g_base = g + ...`, `p_g = ...`)."""
    tainted = set(roots)
    for _ in range(_MAX_FIXPOINT_ROUNDS):
        grown = {
            name
            for name, values in fn.assignments.items()
            if name not in tainted and any(names_in(v) & tainted for v in values)
        }
        if not grown:
            break
        tainted |= grown
    return tainted


def _is_dict_builder(node: ast.AST) -> bool:
    return isinstance(node, ast.Dict) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict"
    )


# ------------------------------------------------------------------------ value facts

_INT64 = f"{LANGUAGE}.int64"
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


def is_int64_cast(expr: ast.AST, aliases: Aliases) -> bool:
    """`x.to(tl.int64)` or `tl.cast(x, tl.int64)`."""
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Attribute) and expr.func.attr == "to" and expr.args:
        return aliases.resolve(expr.args[0]) == _INT64
    if aliases.resolve(expr.func) == f"{LANGUAGE}.cast" and len(expr.args) >= 2:
        return aliases.resolve(expr.args[1]) == _INT64
    return False


def pointer_root(expr: ast.AST) -> str | None:
    """The name a pointer expression starts from: `q + (bos * H + i_h) * K` -> 'q'."""
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        expr = expr.left
    return expr.id if isinstance(expr, ast.Name) else None


@dataclass
class ValueFacts:
    """Per-kernel facts about values that several rules share."""

    int64: set[str]  # names holding int64 values (cast, annotated, or computed from such)
    loop_derived: set[str]  # runtime loop variables and values computed from them
    program_ids: set[str]  # names set straight from tl.program_id, by sums without a multiply
    pointers: set[str]  # pointer parameters and locals computed from them by + / -
    block_pointers: set[str]  # names set from tl.make_block_ptr / tl.advance

    @classmethod
    def compute(cls, fn: JitFunction, aliases: Aliases) -> ValueFacts:
        int64 = {
            a.arg for a in _all_params(fn.node.args) if _is_int64_annotation(a.annotation, aliases)
        }
        pointers: set[str] = set()
        for call, _ in fn.calls:
            if aliases.resolve(call.func) in _POINTER_OPS and call.args:
                root = pointer_root(call.args[0])
                if root is not None:
                    pointers.add(root)
        loop_derived = set(fn.loop_variables)
        mentions = {id(v): names_in(v) for values in fn.assignments.values() for v in values}
        program_ids: set[str] = set()
        block_pointers: set[str] = set()
        for _ in range(_MAX_FIXPOINT_ROUNDS):
            sizes = (
                len(int64),
                len(pointers),
                len(loop_derived),
                len(program_ids),
                len(block_pointers),
            )
            for name, values in fn.assignments.items():
                if any(is_int64_value(v, int64, aliases) for v in values):
                    int64.add(name)
                if any(mentions[id(v)] & loop_derived for v in values):
                    loop_derived.add(name)
                if all(from_program_id(v, program_ids | {name}, aliases) for v in values) and any(
                    from_program_id(v, program_ids, aliases) for v in values
                ):
                    program_ids.add(name)
                if any(pointer_root(v) in pointers for v in values):
                    pointers.add(name)
                if name in pointers:
                    # `q_ptr = q + offset` with q_ptr a pointer: q is one too
                    pointers.update(r for v in values if (r := pointer_root(v)) is not None)
                if any(
                    isinstance(v, ast.Call) and aliases.resolve(v.func) in _BLOCK_POINTER_OPS
                    for v in values
                ):
                    block_pointers.add(name)
            if sizes == (
                len(int64),
                len(pointers),
                len(loop_derived),
                len(program_ids),
                len(block_pointers),
            ):
                break
        return cls(int64, loop_derived, program_ids, pointers - block_pointers, block_pointers)


def _is_int64_annotation(ann: ast.AST | None, aliases: Aliases) -> bool:
    if ann is None:
        return False
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.endswith("int64")
    return aliases.resolve(ann) == _INT64


def is_int64_value(expr: ast.AST, int64: set[str], aliases: Aliases) -> bool:
    """Arithmetic with an int64 operand is int64; a call (a load, `.to(tl.int32)`) has
    its own type, int64 only when it is a cast to int64."""
    if isinstance(expr, ast.Name):
        return expr.id in int64
    if isinstance(expr, ast.Call):
        return is_int64_cast(expr, aliases)
    if isinstance(expr, ast.BinOp):
        return is_int64_value(expr.left, int64, aliases) or is_int64_value(
            expr.right, int64, aliases
        )
    if isinstance(expr, ast.UnaryOp):
        return is_int64_value(expr.operand, int64, aliases)
    if isinstance(expr, ast.IfExp):
        return is_int64_value(expr.body, int64, aliases) or is_int64_value(
            expr.orelse, int64, aliases
        )
    return False


def from_program_id(expr: ast.AST, known: set[str], aliases: Aliases) -> bool:
    """`tl.program_id(1)`, `tl.program_id(0) + NT_OFFSET`, or a name already known as such."""
    if isinstance(expr, ast.Call):
        return aliases.resolve(expr.func) == f"{LANGUAGE}.program_id"
    if isinstance(expr, ast.Name):
        return expr.id in known
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return from_program_id(expr.left, known, aliases) or from_program_id(
            expr.right, known, aliases
        )
    return False
