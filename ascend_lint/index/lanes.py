"""Lanes: what a kernel value holds in each lane, and where a value is consumed.

Per kernel (`of(fn)`, a `KernelLanes`), where a statement reads an expression:

* its element kind (`kind`): "int", "float", "bool", "pointer" or None (not known).
  Literals; `tl.arange`, program ids, `range` variables and int arguments are ints;
  a pointer parameter (one the kernel loads, stores or offsets) is a pointer; a load
  has the element kind of the tensor every launch passes (`torch.empty(...,
  dtype=torch.int32)`, `x.float()`), else none known; casts, `tl.zeros`/`tl.full`
  dtypes, comparisons (bool), `/` and math functions (float), and the promotion of
  arithmetic (a float operand makes a float) say the rest; a name has the kind all the
  definitions reaching the read agree on;
* its rank (`rank`, `is_block`: one value per lane or one for the program):
  `tl.arange`-derived vectors, loads of block addresses, filled tiles and what is
  computed from them, with axes added by `x[:, None]` and removed by reductions;
* whether its lanes come from memory (`loaded_block`): a block computed from a block
  `tl.load` (an index vector read from a table), followed through the definitions
  reaching each read and into the parameters of `@triton.jit` helpers that callers
  bind to one; a scalar loaded value (`tl.load(idx + pid)`) or a reduction of a
  loaded block is not, and neither is a block offset by a loaded scalar;
* its consumers (`consumers`): where the value ends up, through the expression around
  it and the reads its assignment reaches: "address" (the pointer of a load, store or
  atomic, a block pointer's offsets), "mask" (a load's or store's `mask=`), "select"
  (the condition of a `tl.where`), "control" (an `if`/`while` test, a `range` bound),
  "call" (an argument of a `@triton.jit` helper or another library's function) or
  "data" (anything else: stored values, reductions, dots, what is kept and returned);
* whether a statement runs once per iteration of a loop (`in_loop`): a loop around it,
  or, in a `@triton.jit` helper, a loop around a call of it.

Depends on: the core facts (kernels, helper calls, launches), `host` (what a launch
passes for a pointer) and `tiles` (shapes). Rules reach it as `index.lanes`.

Costs: nothing until asked; kinds, ranks and loaded-ness are memoised per (expression,
statement), following at most 48 definitions deep; a value that was computed below a
cycle or that limit is not kept, so an answer never depends on what was asked before
(for chains shorter than the limit). The readers of each local and the parent of each
node are gathered once per kernel, on first use.
"""

from __future__ import annotations

import ast
import weakref

from ascend_lint.index.aliases import LANGUAGE, TRITON
from ascend_lint.index.constexpr import Definition
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.syntax import (
    call_name,
    children,
    expr_key,
    int_literal,
    own_nodes,
    statement_roots,
    walk,
)
from ascend_lint.index.tiles import TileFacts
from ascend_lint.index.values import kernel_values

_MAX_DEPTH = 48  # definitions followed from one query (chains of generated code run long)
_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
_TORCH_KINDS = {
    **{name: "int" for name in _INT_DTYPES},
    **{name: "float" for name in _FLOAT_DTYPES},
    "int": "int",
    "long": "int",
    "short": "int",
    "float": "float",
    "half": "float",
    "double": "float",
    "bool": "bool",
}
_TORCH_CAST_METHODS = {
    "float": "float",
    "half": "float",
    "bfloat16": "float",
    "double": "float",
    "long": "int",
    "int": "int",
    "short": "int",
    "bool": "bool",
}
_TORCH_ALLOCATORS = frozenset(
    {"empty", "zeros", "ones", "full", "empty_strided", "tensor", "arange", "randint"}
    | {"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "rand", "randn"}
)
_INT_CALLS = frozenset({"arange", "program_id", "num_programs", "cdiv", "argmax", "argmin"})
_INT_CALLS |= frozenset({"umulhi", "histogram", "randint", "swizzle2d"})
_FLOAT_CALLS = frozenset(
    {"exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sigmoid", "sin", "cos"}
    | {"erf", "tanh", "softmax", "fdiv", "div_rn", "fma", "floor", "ceil", "rand", "randn"}
    | {"dot", "log1p", "expm1", "pow", "fast_expf", "fast_dividef"}
)
# Calls whose result has the element kind of their first argument.
_SAME_KIND = frozenset(
    {"sum", "max", "min", "reduce", "cumsum", "cumprod", "xor_sum", "sort", "flip"}
    | {"reshape", "view", "trans", "permute", "broadcast_to", "expand_dims", "ravel"}
    | {"multiple_of", "max_contiguous", "max_constancy", "abs", "gather", "cat"}
)
# Calls whose result has the joined kind of all their arguments.
_JOIN_KIND = frozenset({"maximum", "minimum", "clamp"})
# Calls that give one value for the whole program, whatever their arguments.
_SCALAR_CALLS = frozenset({"program_id", "num_programs", "cdiv", "get_element", "item"})
_REDUCTIONS = frozenset({"sum", "max", "min", "reduce", "xor_sum", "argmax", "argmin"})
_LOADS = frozenset({f"{LANGUAGE}.load"})
_ACCESSES = frozenset(
    {f"{LANGUAGE}.{op}" for op in ("load", "store")}
    | {f"{LANGUAGE}.atomic_{op}" for op in ("add", "max", "min", "xchg", "cas", "and", "or")}
    | {f"{LANGUAGE}.atomic_xor"}
)
_BLOCK_POINTERS = frozenset({f"{LANGUAGE}.make_block_ptr", f"{LANGUAGE}.advance"})
_WHERE = f"{LANGUAGE}.where"


_MISSING = object()


class Memo:
    """Memoised recursion over definitions that may refer to themselves (`acc = acc + x`
    in a loop). A query that meets a value still being computed takes `default` for it
    and the cycle is cut; a value computed below such a cut is not kept (it depends on
    where the query started), so every answer is the same whatever was asked before."""

    def __init__(self) -> None:
        self._done: dict[tuple, object] = {}
        self._busy: set[tuple] = set()
        self._cut = False

    def get(self, key: tuple, default, compute):
        value = self._done.get(key, _MISSING)
        if value is not _MISSING:
            return value
        if key in self._busy:
            self._cut = True
            return default
        outer = self._cut
        self._cut = False
        self._busy.add(key)
        try:
            value = compute()
        finally:
            self._busy.discard(key)
        if not self._cut:
            self._done[key] = value
        self._cut = outer or self._cut
        return value

    def truncated(self, default):
        """`default` for a query cut off by a depth limit: like a cycle, what is computed
        above it is not kept."""
        self._cut = True
        return default


def _join(kinds: list[str | None]) -> str | None:
    """The kind of arithmetic over these operand kinds: a pointer stays a pointer, a float
    makes a float, ints and bools make ints; None where an operand is not known."""
    if "pointer" in kinds:
        return "pointer"
    if "float" in kinds:
        return "float"
    if None in kinds or not kinds:
        return None
    if "int" in kinds:
        return "int"
    return "bool"


def tensor_element_kind(value: ast.AST) -> str | None:
    """The element kind a host expression gives a tensor: `torch.empty(...,
    dtype=torch.int32)` -> "int", `x.float()` -> "float", `torch.arange(n)` -> "int"."""
    if not isinstance(value, ast.Call):
        return None
    name = call_name(value.func) or ""
    dtype = next((kw.value for kw in value.keywords if kw.arg == "dtype"), None)
    if name == "to" and value.args and dtype is None:
        dtype = value.args[0]
    if dtype is not None and (name in _TORCH_ALLOCATORS or name.endswith("_like") or name == "to"):
        spelled = dtype.attr if isinstance(dtype, ast.Attribute) else None
        return _TORCH_KINDS.get(spelled or "")
    if name in ("arange", "randint") and isinstance(value.func, ast.Attribute):
        return "int"
    if name in ("rand", "randn") and isinstance(value.func, ast.Attribute):
        return "float"
    if isinstance(value.func, ast.Attribute) and not value.args and name in _TORCH_CAST_METHODS:
        return _TORCH_CAST_METHODS[name]
    return None


class KernelLanes:
    """What the values of one kernel hold per lane, and where they go (see the module doc)."""

    def __init__(self, fn: JitFunction, facts: LaneFacts):
        self.fn = fn
        # The module's facts hold this object: a strong reference back would be a cycle
        # that keeps both (and the module's tree) alive until the cycle collector runs.
        self._facts = weakref.ref(facts)
        self.aliases = facts.core.aliases
        self.values = kernel_values(fn, self.aliases)
        self._sides: dict[int, frozenset[tuple[object, bool]]] = {}
        self._parents: dict[int, ast.AST] = {}  # filled per statement (`parent`)
        self._parented: set[int] = set()  # id() of the statements in `_parents`
        self._statement_of: dict[int, ast.stmt] | None = None
        self._readers: dict[str, list[tuple[ast.Name, int]]] | None = None
        self._quals: dict[int, str | None] = {}

    @property
    def facts(self) -> LaneFacts:
        facts = self._facts()
        assert facts is not None, "a kernel's lanes outlived the module's facts"
        return facts

    # -- calls ---------------------------------------------------------------------------
    def member(self, call: ast.Call) -> str | None:
        """`load` for `tl.load(...)`, `to` for `x.to(...)`: a triton callee (or a tensor
        method) by its last name; None for anything else."""
        key = id(call)
        if key not in self._quals:
            qual = self.aliases.resolve(call.func)
            if qual is not None:
                found = qual.rsplit(".", 1)[1] if qual.startswith(TRITON) else None
            elif isinstance(call.func, ast.Attribute) and self._is_method(call.func):
                found = call.func.attr
            else:
                found = None
            self._quals[key] = found
        return self._quals[key]

    def _is_method(self, func: ast.Attribute) -> bool:
        """`x.to(...)`, `x.sum(...)`: a method of a tensor, not a module's function."""
        node: ast.AST = func.value
        while isinstance(node, ast.Attribute):
            node = node.value
        imported = isinstance(node, ast.Name) and (
            node.id in self.aliases.foreign or self.aliases.resolve(node) is not None
        )
        return not imported

    # -- definitions ---------------------------------------------------------------------
    def reaching(self, name: str, order: int) -> tuple[Definition, ...]:
        """The definitions of `name` that reach statement `order` in one compiled kernel:
        those under a compile-time test that the read sits on the other side of (two
        `if USE_TMA:` statements, one assigning and one reading) are left out."""
        reach = self.values.reaching(name, order)
        if len(reach) < 2:
            return reach
        read = self._compile_time_sides(order)
        if not read:
            return reach
        kept = tuple(
            b
            for b in reach
            if b.order < 0
            or not any(
                (test, not taken) in read for test, taken in self._compile_time_sides(b.order)
            )
        )
        return kept or reach

    def _compile_time_sides(self, order: int) -> frozenset[tuple[object, bool]]:
        """(test, side) of the compile-time `if`s around statement `order`, the test as
        `expr_key` (equal for two `if`s written alike; `ast.dump` would build a reference
        cycle per call)."""
        found = self._sides.get(order)
        if found is None:
            stmt = self.fn.statements[order]
            found = frozenset(
                (expr_key(branch.test), branch.taken)
                for branch in self.fn.context(stmt).branches
                if not self.fn.is_runtime(branch.test, self.aliases, at=branch.node)
            )
            self._sides[order] = found
        return found

    # -- element kinds -------------------------------------------------------------------
    def kind(self, expr: ast.AST, order: int, depth: int = 0) -> str | None:
        """The element kind of `expr` where statement `order` reads it."""
        if depth > _MAX_DEPTH:
            return self.facts.memo.truncated(None)
        key = ("kind", id(self.fn.node), _key(expr), order)
        return self.facts.memo.get(key, None, lambda: self._kind(expr, order, depth))

    def _kind(self, expr: ast.AST, order: int, depth: int) -> str | None:
        if isinstance(expr, ast.Constant):
            return _literal_kind(expr)
        if isinstance(expr, ast.Name):
            reach = self.reaching(expr.id, order)
            kinds = {self.binding_kind(b, depth + 1) for b in reach}
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(expr, ast.BinOp):
            left = self.kind(expr.left, order, depth)
            right = self.kind(expr.right, order, depth)
            if isinstance(expr.op, ast.Div):
                return "float"
            if isinstance(expr.op, (ast.LShift, ast.RShift, ast.FloorDiv, ast.Mod)):
                return "int" if "float" not in (left, right) else "float"
            if isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
                if left == right == "bool":
                    return "bool"
                return "int" if "int" in (left, right) and "float" not in (left, right) else None
            if isinstance(expr.op, (ast.Add, ast.Sub)) and None in (left, right):
                # `start + tl.arange(0, B)`: a scalar of no known kind moving an index
                # vector is an index (a float start would make no index at all)
                known, other = (expr.left, expr.right) if right is None else (expr.right, expr.left)
                if (
                    (left, right).count(None) == 1
                    and self._is_index_vector(known, order)
                    and not self.is_block(other, order)
                ):
                    return "int"
            return _join([left, right])
        if isinstance(expr, ast.UnaryOp):
            if isinstance(expr.op, ast.Not):
                return "bool"
            return self.kind(expr.operand, order, depth)
        if isinstance(expr, (ast.Compare, ast.BoolOp)):
            return "bool"
        if isinstance(expr, ast.IfExp):
            kinds = {self.kind(e, order, depth) for e in (expr.body, expr.orelse)}
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(expr, ast.Subscript):
            return self.kind(expr.value, order, depth)
        if isinstance(expr, ast.Call):
            return self._call_kind(expr, order, depth)
        return None

    def _is_index_vector(self, expr: ast.AST, order: int, depth: int = 0) -> bool:
        """A `tl.arange` vector (through locals, subscripts and `+`/`-` of ints)."""
        if depth > 4:
            return False
        for node in walk(expr):
            if isinstance(node, ast.Call) and self.member(node) == "arange":
                return self.kind(expr, order) == "int"
            if isinstance(node, ast.Name):
                values = self.fn.assignments.get(node.id, ())
                if len(values) == 1 and self._is_index_vector(values[0], order, depth + 1):
                    return self.kind(expr, order) == "int"
        return False

    def _call_kind(self, call: ast.Call, order: int, depth: int) -> str | None:
        member = self.member(call)
        if member is None:
            return None
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        method = receiver is not None and self.aliases.resolve(call.func) is None
        args = [receiver, *call.args] if method else list(call.args)
        if member in _INT_CALLS:
            return "int"
        if member in _FLOAT_CALLS:
            return "float"
        if member in ("to", "cast"):
            dtype = self._keyword(call, "dtype") or (args[1] if len(args) > 1 else None)
            return self._dtype_kind(dtype)
        if member in ("zeros", "full", "empty", "zeros_like", "full_like", "empty_like"):
            position = 2 if member in ("full", "full_like") else 1
            dtype = self._keyword(call, "dtype") or (
                call.args[position] if len(call.args) > position else None
            )
            found = self._dtype_kind(dtype)
            if found is None and member in ("zeros_like", "full_like", "empty_like") and args:
                return self.kind(args[0], order, depth)
            return found
        if member == "load" and args:
            return self._pointee_kind(args[0], order)
        if member == "where" and len(args) == 3:
            return _join([self.kind(a, order, depth) for a in args[1:]])
        if member in _JOIN_KIND:
            return _join([self.kind(a, order, depth) for a in args if a is not None])
        if member in _SAME_KIND and args and args[0] is not None:
            return self.kind(args[0], order, depth)
        return None

    @staticmethod
    def _keyword(call: ast.Call, name: str) -> ast.AST | None:
        return next((kw.value for kw in call.keywords if kw.arg == name), None)

    def _dtype_kind(self, node: ast.AST | None) -> str | None:
        if node is None:
            return None
        qual = self.aliases.resolve(node)
        name = qual.rsplit(".", 1)[1] if qual and qual.startswith(LANGUAGE) else None
        if name is None and isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}.get(
                node.value, node.value
            )
        if name in _INT_DTYPES:
            return "int"
        if name in _FLOAT_DTYPES:
            return "float"
        if name == "int1":
            return "bool"
        return None

    def _pointee_kind(self, pointer: ast.AST, order: int) -> str | None:
        """The element kind of the tensor a pointer expression addresses, when every
        base it can have is a parameter every launch passes the same kind of tensor for."""
        bases = self.facts.pointer_parameters(self.fn, pointer, order)
        kinds = {self.facts.element_kind(self.fn, p) for p in bases}
        return kinds.pop() if len(kinds) == 1 else None

    def binding_kind(self, binding: Definition, depth: int = 0) -> str | None:
        key = ("binding-kind", id(binding))
        return self.facts.memo.get(key, None, lambda: self._binding_kind(binding, depth))

    def _binding_kind(self, binding: Definition, depth: int) -> str | None:
        if binding.order < 0:
            return self.facts.parameter_kind(self.fn, binding.name)
        helper = self._helper_result(binding)
        if helper is not None:
            return self.facts.return_kind(helper[0], helper[1], depth)
        if binding.value is not None:
            return self.kind(binding.value, binding.order, depth)
        if self.values.loop_of(binding) is not None:
            return "int"  # a `range` / `tl.range` / `tl.static_range` variable
        return None

    def _helper_result(self, binding: Definition) -> tuple[JitFunction, int | None] | None:
        """(helper, position) when `binding` takes what a `@triton.jit` helper returns:
        `a, b = helper(...)` gives `b` position 1; `x = helper(...)` position None."""
        value = binding.value
        if not isinstance(value, ast.Call) or binding.order < 0:
            return None
        callees = self.facts.core.resolve_callee(value.func)
        if not callees or callees[0] is self.fn:
            return None
        stmt = self.fn.statements[binding.order]
        if not isinstance(stmt, ast.Assign) or stmt.value is not value:
            return None
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            return callees[0], None
        if isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name) and elt.id == binding.name:
                    return callees[0], i
        return None

    # -- blocks --------------------------------------------------------------------------
    def shape(self, expr: ast.AST) -> tuple[ast.expr, ...] | None:
        """The dimensions of `expr` (`()` a scalar, None not known)."""
        return self.facts.tiles.shape(self.fn, expr)

    def is_block(self, expr: ast.AST, order: int) -> bool:
        """Does `expr` hold one value per lane where statement `order` reads it?"""
        return self.rank(expr, order) > 0

    def rank(self, expr: ast.AST, order: int, depth: int = 0) -> int:
        """How many dimensions `expr` has where statement `order` reads it (0 for a
        scalar, and where nothing is known): `tl.arange` has one, `x[:, None]` one more
        than `x`, a reduction over an axis one less, arithmetic the most of its
        operands; a name the most of the definitions that reach the read; a helper's
        parameter the most its callers bind to it."""
        if depth > _MAX_DEPTH:
            return self.facts.memo.truncated(0)
        key = ("rank", id(self.fn.node), _key(expr), order)
        return self.facts.memo.get(key, 0, lambda: self._rank(expr, order, depth))

    def _rank(self, expr: ast.AST, order: int, depth: int) -> int:
        if isinstance(expr, ast.Constant):
            return 0
        if isinstance(expr, ast.Name):
            found = 0
            for b in self.reaching(expr.id, order):
                if b.order < 0:
                    found = max(found, self.facts.parameter_rank(self.fn, b.name))
                elif b.value is not None:  # (a loop variable is a scalar)
                    found = max(found, self.rank(b.value, b.order, depth + 1))
            return found
        if isinstance(expr, ast.Subscript):
            items = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
            added = sum(isinstance(i, ast.Constant) and i.value is None for i in items)
            kept = sum(isinstance(i, ast.Slice) for i in items)
            inner = self.rank(expr.value, order, depth)
            return added + kept if added else inner
        if isinstance(expr, ast.Call):
            return self._call_rank(expr, order, depth)
        return max((self.rank(c, order, depth) for c in children(expr)), default=0)

    def _call_rank(self, call: ast.Call, order: int, depth: int) -> int:
        member = self.member(call)
        if member is None or member in _SCALAR_CALLS:
            return 0
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        method = receiver is not None and self.aliases.resolve(call.func) is None
        args = [receiver, *call.args] if method else list(call.args)
        if member == "arange":
            return 1
        if member in ("zeros", "full", "empty", "reshape", "view", "broadcast_to"):
            position = 1 if member in ("reshape", "view", "broadcast_to") else 0
            shape = _argument(call, "shape", position - (1 if method else 0))
            if member in ("reshape", "view", "broadcast_to") and len(args) > 2:
                return len(args) - 1  # `x.reshape(a, b)`
            if isinstance(shape, (ast.Tuple, ast.List)):
                return len(shape.elts)
            return 1 if shape is not None else 0
        if member in _REDUCTIONS:
            if not args or args[0] is None:
                return 0
            axis = _argument(call, "axis", 1 - (1 if method else 0))
            if axis is None or (isinstance(axis, ast.Constant) and axis.value is None):
                return 0
            return max(self.rank(args[0], order, depth) - 1, 0)
        if member == "dot":
            return 2
        if member == "load":
            pointer = _argument(call, "pointer", 0)
            if isinstance(pointer, ast.Name) and pointer.id in self.values.block_pointers:
                return self._block_pointer_rank(pointer.id)
            return self.rank(pointer, order, depth) if pointer is not None else 0
        if member in ("make_block_ptr", "advance"):
            return 0  # a block pointer is a handle; what it loads is the block
        if member == "expand_dims":
            return self.rank(args[0], order, depth) + 1 if args and args[0] is not None else 0
        parts = [a for a in args if a is not None] + [kw.value for kw in call.keywords]
        return max((self.rank(p, order, depth) for p in parts), default=0)

    def _block_pointer_rank(self, name: str) -> int:
        """The rank of `block_shape` of the `tl.make_block_ptr` a name is set from."""
        for value in self.fn.assignments.get(name, ()):
            if isinstance(value, ast.Call) and self.member(value) == "make_block_ptr":
                block = _argument(value, "block_shape", 4)
                if isinstance(block, (ast.Tuple, ast.List)):
                    return len(block.elts)
        return 1

    def loaded(self, expr: ast.AST, order: int, depth: int = 0) -> bool:
        """Is `expr` computed from a value read from memory (a `tl.load`, scalar or
        block), along the definitions reaching each read?"""
        if depth > _MAX_DEPTH:
            return False
        for node in walk(expr):
            if isinstance(node, ast.Call) and self.member(node) == "load":
                return True
            if isinstance(node, ast.Name):
                for b in self.reaching(node.id, order):
                    if b.order >= 0 and b.value is not None and b.order != order:
                        if self.loaded(b.value, b.order, depth + 1):
                            return True
        return False

    def loaded_block(self, expr: ast.AST, order: int, depth: int = 0) -> bool:
        """Is `expr` a block whose lanes depend on a block of data read from memory (see
        the module doc)? Scalar parts are not looked into."""
        if depth > _MAX_DEPTH:
            return self.facts.memo.truncated(False)
        key = ("loaded-block", id(self.fn.node), _key(expr), order)
        return self.facts.memo.get(key, False, lambda: self._loaded_block(expr, order, depth))

    def _loaded_block(self, expr: ast.AST, order: int, depth: int) -> bool:
        if isinstance(expr, ast.Constant) or not self.is_block(expr, order):
            return False
        if isinstance(expr, ast.Name):
            return any(
                self._binding_loaded_block(b, depth + 1) for b in self.reaching(expr.id, order)
            )
        if isinstance(expr, ast.Call):
            member = self.member(expr)
            if member in _REDUCTIONS:
                return False  # what is left of the block holds no loaded lane by itself
            if member == "load":
                return True
            parts = [*expr.args, *(kw.value for kw in expr.keywords)]
            if isinstance(expr.func, ast.Attribute) and member is not None:
                parts.append(expr.func.value)
            return any(self.loaded_block(p, order, depth) for p in parts)
        return any(self.loaded_block(c, order, depth) for c in children(expr))

    def _binding_loaded_block(self, binding: Definition, depth: int) -> bool:
        def compute() -> bool:
            if binding.order < 0:
                return self.facts.parameter_loaded_block(self.fn, binding.name)
            if binding.value is not None:
                return self.loaded_block(binding.value, binding.order, depth)
            return False

        return self.facts.memo.get(("binding-loaded", id(binding)), False, compute)

    # -- statements ----------------------------------------------------------------------
    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The kernel statement whose own expressions hold `node`."""
        if self._statement_of is None:
            self._index_nodes()
        assert self._statement_of is not None
        return self._statement_of.get(id(node))

    def parent(self, node: ast.AST) -> ast.AST | None:
        """The node whose child `node` is (the statement, for one of its roots)."""
        stmt = self.statement_of(node)
        if stmt is None:
            return None
        # Parents are indexed one statement at a time, when a node of it is asked
        # about: the rules ask of few statements, and the index of all of them costs
        # a walk of every child of every node.
        if id(stmt) not in self._parented:
            self._parented.add(id(stmt))
            parents = self._parents
            for owner in own_nodes(stmt):
                kind = type(owner)
                if kind is not ast.Name and kind is not ast.Constant:  # leaves
                    for child in children(owner):
                        parents[id(child)] = owner
            for root in statement_roots(stmt):
                parents[id(root)] = stmt
        return self._parents.get(id(node))

    def _index_nodes(self) -> None:
        statement_of: dict[int, ast.stmt] = {}
        readers: dict[str, list[tuple[ast.Name, int]]] = {}
        for order, stmt in enumerate(self.fn.statements):
            nodes = own_nodes(stmt)
            statement_of.update(dict.fromkeys(map(id, nodes), stmt))
            for node in nodes:
                if type(node) is ast.Name and type(node.ctx) is ast.Load:
                    readers.setdefault(node.id, []).append((node, order))
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                readers.setdefault(stmt.target.id, []).append((stmt.target, order))
        self._statement_of, self._readers = statement_of, readers

    def loops(self, stmt: ast.stmt) -> list:
        """The loops around `stmt` that repeat it: all but `tl.parallel` ones, whose
        iterations are the vector cores of one AI core (`bind_sub_block=True`)."""
        return [
            loop
            for loop in self.fn.context(stmt).loops
            if not (
                isinstance(loop.node, ast.For)
                and isinstance(loop.node.iter, ast.Call)
                and self.member(loop.node.iter) == "parallel"
            )
        ]

    def in_loop(self, stmt: ast.stmt) -> bool:
        """Does `stmt` run once per iteration of a loop: a loop in this function around
        it, or a loop around a call of this function (a `@triton.jit` helper)?"""
        if self.loops(stmt):
            return True
        return self.facts.called_in_loop(self.fn)

    def varies_in_loop(self, expr: ast.AST, stmt: ast.stmt) -> bool:
        """Is `expr`, read by `stmt`, computed anew in each iteration of a loop around
        it? A value that reads the loop's variable, something assigned in the loop from
        one, a load in the loop, or a value carried from the previous iteration does; a
        loop-invariant value does not (the compiler hoists it out of the loop). In a
        `@triton.jit` helper called in a loop, a value that reads a runtime parameter
        does (the caller's argument may change per iteration)."""
        order = self.fn.order_of(stmt)
        loops = self.loops(stmt)
        if not loops:
            if not self.facts.called_in_loop(self.fn):
                return False
            runtime = set(self.fn.params) - self.fn.constexpr_params
            return self._reads_any(expr, order, runtime, 0, set())
        for loop in loops:
            first, last = self.fn.loop_spans[id(loop.node)]
            targets = set(_target_names(loop.node)) if isinstance(loop.node, ast.For) else set()
            if self._variant(expr, order, (first, last), targets, 0, set()):
                return True
        return False

    def _variant(
        self,
        expr: ast.AST,
        order: int,
        span: tuple[int, int],
        targets: set[str],
        depth: int,
        stack: set[tuple[str, int]],
    ) -> bool:
        if depth > _MAX_DEPTH:
            return True
        for node in walk(expr):
            if isinstance(node, ast.Call) and self.member(node) in ("load", "atomic_add", "rand"):
                return True  # memory (or randomness) read in the loop: not hoisted
            if not isinstance(node, ast.Name):
                continue
            if node.id in targets:
                return True
            for b in self.reaching(node.id, order):
                if not span[0] <= b.order <= span[1]:
                    continue  # defined before the loop: invariant
                if (node.id, b.order) in stack or b.value is None:
                    return True  # carried around the loop, or an inner loop's variable
                stack.add((node.id, b.order))
                found = self._variant(b.value, b.order, span, targets, depth + 1, stack)
                stack.discard((node.id, b.order))
                if found:
                    return True
        return False

    def _reads_any(
        self, expr: ast.AST, order: int, names: set[str], depth: int, seen: set[tuple[str, int]]
    ) -> bool:
        if depth > _MAX_DEPTH:
            return True
        for node in walk(expr):
            if not isinstance(node, ast.Name) or (node.id, order) in seen:
                continue
            seen.add((node.id, order))
            for b in self.reaching(node.id, order):
                if b.order < 0 and b.name in names:
                    return True
                if b.order >= 0 and b.value is not None:
                    if self._reads_any(b.value, b.order, names, depth + 1, seen):
                        return True
        return False

    # -- consumers -----------------------------------------------------------------------
    def consumers(self, node: ast.AST) -> frozenset[str]:
        """Where the value of `node` (an expression of this kernel) ends up (see the
        module doc); empty where it is never read."""
        found: set[str] = set()
        self._consumers(node, found, set(), 0)
        return frozenset(found)

    def selects(self, node: ast.AST) -> list[ast.Call]:
        """The `tl.where` calls whose condition the value of `node` ends up in."""
        found: set[str] = set()
        calls: list[ast.Call] = []
        self._consumers(node, found, set(), 0, calls)
        return calls

    def _consumers(
        self,
        node: ast.AST,
        found: set[str],
        seen: set[int],
        depth: int,
        selects: list[ast.Call] | None = None,
    ) -> None:
        if id(node) in seen or depth > _MAX_DEPTH:
            if depth > _MAX_DEPTH:
                found.add("data")
            return
        seen.add(id(node))
        parent = self.parent(node)
        if parent is None:
            found.add("data")
            return
        if isinstance(parent, ast.stmt):
            self._statement_consumers(node, parent, found, seen, depth, selects)
            return
        call, arg = (
            (self.parent(parent), parent) if isinstance(parent, ast.keyword) else (parent, node)
        )
        if isinstance(call, ast.Call):
            role = self._argument_role(call, arg)
            if role == "through":
                self._consumers(call, found, seen, depth + 1, selects)
            else:
                found.add(role)
                if role == "select" and selects is not None:
                    selects.append(call)
            return
        if isinstance(parent, ast.keyword):
            found.add("data")
            return
        # arithmetic, comparisons, subscripts, conditional expressions, the elements of a
        # tuple: the value flows on
        self._consumers(parent, found, seen, depth + 1, selects)

    def _statement_consumers(
        self,
        node: ast.AST,
        stmt: ast.stmt,
        found: set[str],
        seen: set[int],
        depth: int,
        selects: list[ast.Call] | None,
    ) -> None:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node is stmt.value:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if len(names) != len(targets):
                found.add("data")  # a tuple unpack or a subscript: not followed
            order = self.fn.order_of(stmt)
            for name in names:
                for reader, at in self._readers_of(name):
                    if any(
                        b.order == order and b.name == name for b in self.reaching(name, at)
                    ) and (at != order or isinstance(stmt, ast.AugAssign)):
                        self._consumers(reader, found, seen, depth + 1, selects)
            return
        if isinstance(stmt, (ast.If, ast.While)) and node is stmt.test:
            found.add("control")
            return
        if isinstance(stmt, ast.For) and node is stmt.iter:
            found.add("control")
            return
        found.add("data")

    def _readers_of(self, name: str) -> list[tuple[ast.Name, int]]:
        if self._readers is None:
            self._index_nodes()
        assert self._readers is not None
        return self._readers.get(name, [])

    def _argument_role(self, call: ast.Call, arg: ast.AST) -> str:
        """What `call` does with its argument `arg` (a positional node or a keyword):
        "through" when the call's own value carries it on."""
        if arg is call.func:
            # `x.to(...)`, `x.sum()`: the receiver of a method flows into its result
            return "through"
        qual = self.aliases.resolve(call.func)
        member = self.member(call)
        keyword = arg.arg if isinstance(arg, ast.keyword) else None
        position = call.args.index(arg) if arg in call.args else None
        if qual in _ACCESSES:
            if keyword == "pointer" or position == 0:
                return "address"
            is_load = qual in _LOADS
            if keyword == "mask" or (position == 1 and is_load) or (position == 2 and not is_load):
                return "mask"
            return "data"
        if qual in _BLOCK_POINTERS:
            return "address"
        if qual == _WHERE:
            if keyword == "condition" or position == 0:
                return "select"
            return "through"
        if member in ("range", "static_range") or (
            isinstance(call.func, ast.Name) and call.func.id == "range"
        ):
            return "control"
        if member is None:
            return "call"  # a `@triton.jit` helper or another library's function
        if member not in _REDUCTIONS and member not in ("dot", "store"):
            return "through"
        return "data"


def _key(expr: ast.AST) -> int | str:
    """A memo key: a name by its spelling (the index builds names of its own that live
    no longer than a query), any other node by its identity."""
    return expr.id if isinstance(expr, ast.Name) else id(expr)


def _target_names(loop: ast.For) -> list[str]:
    return [n.id for n in walk(loop.target) if isinstance(n, ast.Name)]


def _adds_axis(index: ast.AST) -> bool:
    """`[:, None]`, `[None, :]`: an indexing that adds an axis (a block from then on)."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(i, ast.Constant) and i.value is None for i in items)


def _argument(call: ast.Call, name: str, position: int) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[position] if len(call.args) > position else None


class LaneFacts:
    """Element kinds, blocks, loaded lanes and consumers of every kernel of a module."""

    def __init__(self, core: CoreFacts, host: HostFacts, tiles: TileFacts):
        self.core = core
        self.host = host
        self.tiles = tiles
        self._kernels: dict[int, KernelLanes] = {}
        self._element_kinds: dict[tuple[int, str], str | None] = {}
        self.memo = Memo()  # every recursive query of every kernel of the module

    def of(self, fn: JitFunction) -> KernelLanes:
        found = self._kernels.get(id(fn.node))
        if found is None:
            found = self._kernels[id(fn.node)] = KernelLanes(fn, self)
        return found

    def pointer_parameters(self, fn: JitFunction, pointer: ast.AST, order: int) -> set[str]:
        """The parameters of `fn` a pointer expression may be offset from (`x + o` ->
        {"x"}; a local: its reaching definitions')."""
        pointers = kernel_values(fn, self.core.aliases).pointers
        found: set[str] = set()
        todo: list[tuple[ast.AST, int, int]] = [(pointer, order, 0)]
        seen: set[tuple[int, int]] = set()
        while todo:
            expr, at, depth = todo.pop()
            if (id(expr), at) in seen or depth > _MAX_DEPTH:
                continue
            seen.add((id(expr), at))
            if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
                todo += [(expr.left, at, depth + 1), (expr.right, at, depth + 1)]
            elif isinstance(expr, ast.Name) and expr.id in pointers:
                for b in fn.reaching(expr.id, at):
                    if b.order < 0:
                        found.add(b.name)
                    elif b.value is not None:
                        todo.append((b.value, b.order, depth + 1))
        return found

    def element_kind(self, fn: JitFunction, param: str) -> str | None:
        """The element kind of the tensor every launch of `fn` passes for `param`."""
        key = (id(fn.node), param)
        if key in self._element_kinds:
            return self._element_kinds[key]
        found: set[str | None] = set()
        for launch in self.core.launches_of(fn):
            for arg in launch.args.get(param, ()):
                for value, _ in self.host.host_values(arg, launch.host):
                    found.add(tensor_element_kind(value))
        result = found.pop() if len(found) == 1 else None
        self._element_kinds[key] = result
        return result

    def return_kind(self, fn: JitFunction, position: int | None, depth: int = 0) -> str | None:
        """The element kind of what the helper `fn` returns (the `position`-th element of
        a returned tuple), when every `return` agrees."""
        if depth > _MAX_DEPTH:
            return self.memo.truncated(None)
        lanes = self.of(fn)
        kinds: set[str | None] = set()
        for order, stmt in enumerate(fn.statements):
            if not isinstance(stmt, ast.Return) or stmt.value is None:
                continue
            value = stmt.value
            if position is not None:
                if not isinstance(value, (ast.Tuple, ast.List)) or len(value.elts) <= position:
                    return None
                value = value.elts[position]
            kinds.add(lanes.kind(value, order, depth + 1))
        return kinds.pop() if len(kinds) == 1 else None

    def parameter_kind(self, fn: JitFunction, param: str) -> str | None:
        """The element kind of a parameter: a pointer, or an int (the kind Triton gives
        an integer argument), from its annotation, its use and what launches pass."""
        if param in kernel_values(fn, self.core.aliases).pointers:
            return "pointer"
        arg = next((a for a in fn.node.args.args + fn.node.args.kwonlyargs if a.arg == param), None)
        annotation = arg.annotation if arg is not None else None
        if annotation is not None:
            qual = self.core.aliases.resolve(annotation) or ""
            name = qual.rsplit(".", 1)[-1]
            if name in _INT_DTYPES:
                return "int"
            if name in _FLOAT_DTYPES:
                return "float"
        kinds: set[str | None] = set()
        bindings = [*self.core.launches_of(fn), *self.core.helper_calls_to(fn)]
        for binding in bindings:
            for arg_expr in binding.args.get(param, ()):
                kinds.add(_literal_kind(arg_expr))
        kinds.discard(None)
        if len(kinds) == 1:
            return kinds.pop()
        if kinds:
            return None
        if param in self.core.arange_extents(fn):
            return "int"  # the extent of a `tl.arange`: a power of two
        return None  # a block size, a flag, a length or a scale: not known here

    def parameter_loaded_block(self, fn: JitFunction, param: str) -> bool:
        """Does a calling kernel bind `param` of the helper `fn` to a loaded block?"""

        def compute() -> bool:
            for binding in self.core.helper_calls_to(fn):
                caller = binding.caller
                stmt = self._call_statement(binding.call, caller) if caller is not None else None
                if caller is None or stmt is None:
                    continue
                lanes = self.of(caller)
                order = caller.order_of(stmt)
                if any(lanes.loaded_block(e, order) for e in binding.args.get(param, ())):
                    return True
            return False

        return self.memo.get(("param-loaded", id(fn.node), param), False, compute)

    def parameter_rank(self, fn: JitFunction, param: str) -> int:
        """The most dimensions a calling kernel binds to `param` of the helper `fn`."""

        def compute() -> int:
            found = 0
            for binding in self.core.helper_calls_to(fn):
                caller = binding.caller
                stmt = self._call_statement(binding.call, caller) if caller is not None else None
                if caller is None or stmt is None:
                    continue
                order = caller.order_of(stmt)
                for e in binding.args.get(param, ()):
                    found = max(found, self.of(caller).rank(e, order))
            return found

        return self.memo.get(("param-rank", id(fn.node), param), 0, compute)

    def called_in_loop(self, fn: JitFunction) -> bool:
        """Is some call of the helper `fn` inside a loop of its caller (or of theirs)?"""

        def compute() -> bool:
            for binding in self.core.helper_calls_to(fn):
                caller = binding.caller
                stmt = self._call_statement(binding.call, caller) if caller is not None else None
                if caller is None or stmt is None:
                    continue
                if self.of(caller).loops(stmt) or self.called_in_loop(caller):
                    return True
            return False

        return self.memo.get(("in-loop", id(fn.node)), False, compute)

    @staticmethod
    def _call_statement(call: ast.Call, caller: JitFunction) -> ast.stmt | None:
        return next((stmt for c, stmt in caller.calls if c is call), None)


def _literal_kind(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return "bool"
        if isinstance(node.value, int):
            return "int"
        if isinstance(node.value, float):
            return "float"
    if int_literal(node) is not None:
        return "int"
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return _literal_kind(node.operand)
    return None
