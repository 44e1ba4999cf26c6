"""Tiles: the data a kernel program holds in the vector core's Unified Buffer, and the
configurations that size it.

Per kernel (`of`): every local bound to a data tile, with its shape as expressions of
constexpr parameters and literals, and the fewest bytes one element can take:

* `tl.load` of block-shaped offsets or of a block pointer (`make_block_ptr`'s
  `block_shape`); the element type is the one the host allocates the loaded tensor with
  (`torch.empty(..., dtype=torch.float32)`, `.float()`) when every launch agrees, else
  one byte, the smallest a tensor element takes;
* `tl.zeros` / `tl.full` / `*_like` with their dtype;
* casts (`x.to(tl.float32)`, `tl.cast`), whose result is a buffer of its own unless the
  source already has that type;
* `tl.dot` results (fp32 unless `out_dtype`/`acc`);
* arithmetic and math on data tiles (at least the widest operand's element).

Offsets, pointer and mask tensors are not counted: the compiler folds structured
address arithmetic into the copy itself. Shapes follow `tl.arange`, broadcasting
(`x[:, None]`), reductions over an axis, `tl.trans`, `reshape`/`broadcast_to`.

What is live together is a static live-variable analysis over the kernel's locals
(loops carry what a later iteration reads; both sides of a branch count as paths),
the same notion the compiler's memory planner uses. A local's bytes at a point are the
smallest of its definitions', so the sum over the locals live at one point, at its
largest, is a LOWER bound of the Unified Buffer the program needs: only what is
provably held is counted, each tile padded to 32 bytes on its last dimension (unit
dimensions dropped first) and a load inside a loop doubled where the target
multibuffers. A kernel that calls `tl.dot` is a mixed cube/vector kernel: its loads
and accumulators may live in the cube core's buffers instead, so only values computed
from a dot's result (which the vector core must hold) are counted, with dimension 0
split over the two vector cores.

Configurations (`configs`): each `triton.Config` of `@triton.autotune`, combined with
the constexpr values each launch in the module passes as one integer (through the host
value model: locals, module constants, helper returns) and the parameters' defaults.
Unbounded blocks (`unbounded`): a constexpr a launch sets to
`triton.next_power_of_2(<a token, row or element count>)` on every path, with no `min`
upstream.

Also asked of any expression (`shape`: the dimensions of offsets and masks too, by the
same rules) and of any statement (`compiled_by_some_launch`: whether some
configuration compiles it, or every one turns a compile-time `if` around it off).

Depends on: the core facts (kernels, launches), `host` (what a launch argument holds)
and `quantities` (what a host value counts). Nothing else of the index depends on it.

Costs: per kernel, one walk of its statements for the tiles and one fixpoint of the
live-variable analysis over its blocks (twice per loop), on first use; the configs
and unbounded blocks once per kernel; `peak_bits` evaluates the shapes per config.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from ascend_lint.diagnostics import cite
from ascend_lint.index.aliases import LANGUAGE, TRITON
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import DTYPE_NAMES, JitFunction
from ascend_lint.index.launches import CallBinding, HostFunction, argument_for
from ascend_lint.index.naming import is_batch_name
from ascend_lint.index.quantities import QuantityFacts, Role
from ascend_lint.index.syntax import (
    call_name,
    expr_key,
    frozen_names,
    int_literal,
    names_in,
    show,
    walk,
)
from ascend_lint.index.values import kernel_values, pointer_root
from ascend_lint.ub_model import BITS_PER_BYTE, UbTarget, aligned_bytes

_DTYPE_BYTES = {
    "int1": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
}
for _name in DTYPE_NAMES:
    _DTYPE_BYTES.setdefault(_name, 1)  # the float8 kinds
# torch spellings of element types, for the tensors a host allocates
_TORCH_BYTES = {
    **{name: size for name, size in _DTYPE_BYTES.items() if not name.startswith("float8")},
    "float": 4,
    "half": 2,
    "double": 8,
    "bool": 1,
    "long": 8,
    "int": 4,
    "short": 2,
}
_TORCH_CASTS = {"float": 4, "half": 2, "bfloat16": 2, "double": 8, "long": 8, "int": 4}
_ALLOCATORS = frozenset(
    {"empty", "zeros", "ones", "full", "rand", "randn", "empty_strided", "tensor", "arange"}
    | {"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor"}
)
_FILLED = frozenset({"zeros", "full", "empty", "zeros_like", "full_like", "empty_like"})
_REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "prod"})
_KEEP_SHAPE = frozenset(
    {
        "exp",
        "exp2",
        "log",
        "log2",
        "sqrt",
        "rsqrt",
        "sigmoid",
        "abs",
        "cos",
        "sin",
        "erf",
        "floor",
        "ceil",
        "maximum",
        "minimum",
        "where",
        "clamp",
        "fma",
        "softmax",
        "cumsum",
        "cumprod",
        "div_rn",
        "fdiv",
    }
)
# reshapes of a tile the compiler may keep as views of the same buffer
_VIEWS = frozenset({"reshape", "view", "expand_dims", "broadcast_to", "trans", "permute"})
# scalars of the program, and hints that return their first argument unchanged
_SCALAR_CALLS = frozenset({"program_id", "num_programs", "cdiv"})
_HINTS = frozenset({"multiple_of", "max_contiguous", "max_constancy", "assume"})
# how many host names `_capped` follows before it gives up looking for a cap
_MAX_FOLLOWED_NAMES = 32
_POWER_OF_TWO = frozenset({"next_power_of_2", "next_power_of_two"})
# The largest block size tried when looking for the one an unbounded size overflows at.
_LARGEST_BLOCK_EXPONENT = 24

Shape = tuple[ast.expr, ...]


@dataclass(frozen=True)
class Tile:
    """A data tile one definition of a local holds."""

    node: ast.AST  # the defining expression
    name: str
    shape: Shape  # dimension expressions, outermost first
    element_bytes: int  # the fewest bytes one element takes
    kind: str  # "load", "filled", "cast", "dot", "computed"
    multibuffered: bool = False  # a load inside a loop

    def bytes_with(self, values: dict[str, int], target: UbTarget, split_dim0: bool) -> int | None:
        """Aligned bytes in UB for these constexpr values; None when a dimension is not known."""
        dims = []
        for expr in self.shape:
            value = evaluate(expr, values)
            if value is None:
                return None
            dims.append(value)
        if split_dim0 and dims:
            dims[0] = -(-dims[0] // 2)
        squeezed = tuple(d for d in dims if d != 1)
        copies = target.multibuffer_factor if self.multibuffered else 1
        return aligned_bytes(squeezed, self.element_bytes) * copies


@dataclass
class KernelTiles:
    """The tiles of one kernel."""

    tiles: dict[str, list[Tile]]  # local -> the tile of each definition
    mixed: bool  # calls tl.dot: dim 0 split over two vector cores
    everywhere: frozenset[str] = frozenset()  # locals every definition of which is a tile

    def sized_by(self, param: str) -> list[Tile]:
        return [
            t
            for name in self.everywhere
            for t in self.tiles[name]
            if any(param in names_in(d) for d in t.shape)
        ]


@dataclass(frozen=True)
class Config:
    """Constexpr values that reach a kernel together, and where they come from."""

    values: dict[str, int]
    label: str  # "config 3 of @triton.autotune", "the launch at <cite(0)>"
    node: ast.AST  # where a finding about it goes
    cited: tuple[ast.AST, ...] = ()  # the places `label` cites (`diagnostics.cite`)


@dataclass(frozen=True)
class UnboundedBlock:
    """A constexpr a launch sets to `next_power_of_2(<tensor dimension>)` with no cap."""

    param: str
    launch: CallBinding
    value: ast.Call  # the `next_power_of_2(...)` call
    dimension: str  # its argument, as written


@dataclass(frozen=True)
class Peak:
    bits: int
    locals: tuple[str, ...]  # the tiles live together at the peak, largest first


def evaluate(expr: ast.AST, values: dict[str, int]) -> int | None:
    """An integer dimension expression under constexpr `values`."""
    literal = int_literal(expr)
    if literal is not None:
        return literal
    if isinstance(expr, ast.Name):
        return values.get(expr.id)
    if isinstance(expr, ast.BinOp):
        left, right = evaluate(expr.left, values), evaluate(expr.right, values)
        if left is None or right is None:
            return None
        op = type(expr.op)
        if op is ast.Add:
            return left + right
        if op is ast.Sub:
            return left - right
        if op is ast.Mult:
            return left * right
        if op is ast.FloorDiv and right:
            return left // right
        if op is ast.LShift and 0 <= right < 64:
            return left << right
        if op is ast.RShift and 0 <= right < 64:
            return left >> right
        return None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and not expr.keywords:
        args = [evaluate(a, values) for a in expr.args]
        if args and all(a is not None for a in args):
            if expr.func.id == "min":
                return min(args)
            if expr.func.id == "max":
                return max(args)
    return None


def _dims_equal(a: ast.expr, b: ast.expr) -> bool:
    return a is b or expr_key(a) == expr_key(b)


def _is_one(expr: ast.expr) -> bool:
    return int_literal(expr) == 1


def _broadcast(shapes: list[Shape]) -> Shape | None:
    """The broadcast of `shapes`; None where two dimensions are not provably equal."""
    rank = max(len(s) for s in shapes)
    out: list[ast.expr] = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        wide = [d for d in dims if not _is_one(d)]
        if not wide:
            out.append(dims[0])
        elif all(_dims_equal(wide[0], d) for d in wide[1:]):
            out.append(wide[0])
        else:
            return None
    return tuple(out)


def _combine(
    results: list[tuple[Shape | None, int | None, bool]],
) -> tuple[Shape | None, int | None, bool]:
    """One local's (shape, fewest element bytes, is data) over its definitions."""
    shapes = [r[0] for r in results]
    first = shapes[0] if shapes else None
    same = first is not None and all(
        s is not None and len(s) == len(first) and all(map(_dims_equal, s, first)) for s in shapes
    )
    sizes = [r[1] for r in results]
    size = min(sizes) if sizes and all(s is not None for s in sizes) else None
    return (first if same else None), size, any(r[2] for r in results)


class _KernelShapes:
    """Shapes, element sizes and data-ness of one kernel's expressions."""

    def __init__(self, fn: JitFunction, facts: TileFacts):
        self.fn = fn
        self.aliases = facts._core.aliases
        self.facts = facts
        self._quals: dict[ast.Call, str | None] = {}
        self.mixed = any(self._qual(c) == "dot" for c, _ in fn.calls)
        # pointer parameters and what is computed from them: addresses, never data
        self.pointers = kernel_values(fn, self.aliases).pointers
        self._names: dict[str, tuple[Shape | None, int | None, bool]] = {}
        self._busy: set[str] = set()

    def _qual(self, call: ast.Call) -> str | None:
        """`load` for `tl.load(...)`, `to` for `x.to(...)`: triton callees by their last name."""
        # asked of the same calls by the shapes, the tiles and the dot analysis
        if call in self._quals:
            return self._quals[call]
        found = self._quals[call] = self._resolve_callee(call)
        return found

    def _resolve_callee(self, call: ast.Call) -> str | None:
        qual = self.aliases.resolve(call.func)
        if qual is not None:
            if qual.startswith(LANGUAGE + ".") or qual.startswith(TRITON + "."):
                return qual.rsplit(".", 1)[1]
            return None
        if isinstance(call.func, ast.Attribute) and call.func.attr in (
            "to",
            "trans",
            "reshape",
            "sum",
            "max",
            "min",
        ):
            return call.func.attr
        return None

    def dtype_bytes(self, node: ast.AST | None) -> int | None:
        if node is None:
            return None
        qual = self.aliases.resolve(node)
        name = qual.rsplit(".", 1)[1] if qual else None
        if name is None and isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value.replace("fp", "float").replace("bf16", "bfloat16")
        return _DTYPE_BYTES.get(name or "")

    # -- one local ---------------------------------------------------------------
    def local(self, name: str) -> tuple[Shape | None, int | None, bool]:
        """(shape, fewest element bytes, is data) of a local over all its definitions."""
        known = self._names.get(name)
        if known is not None:
            return known
        if name not in self.fn.assignments:
            return (), None, False
        if name in self._busy:
            return None, None, False
        self._busy.add(name)
        values = self.fn.assignments[name]
        plain = [v for v in values if name not in names_in(v)]
        if plain and len(plain) < len(values):
            # `acc += x`, `m = tl.maximum(m, x)`: what the other definitions give, read
            # by the ones that update the local in place.
            self._names[name] = _combine([self.of(v) for v in plain])
        result = _combine([self.of(v) for v in values])
        self._busy.discard(name)
        self._names[name] = result
        return result

    # -- one expression ----------------------------------------------------------
    def of(self, expr: ast.AST) -> tuple[Shape | None, int | None, bool]:
        """(shape, fewest element bytes, is data): `()` is a scalar, None unknown."""
        if isinstance(expr, ast.Constant):
            return (), None, False
        if isinstance(expr, ast.Name):
            if expr.id in self.fn.params:
                return (), None, False
            return self.local(expr.id)
        if isinstance(expr, ast.Attribute):
            return (), None, False
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr)
        if isinstance(expr, ast.BinOp):
            return self._elementwise([expr.left, expr.right])
        if isinstance(expr, ast.UnaryOp):
            return self.of(expr.operand)
        if isinstance(expr, (ast.Compare, ast.BoolOp)):
            operands = (
                [expr.left, *expr.comparators] if isinstance(expr, ast.Compare) else expr.values
            )
            shape, _, _ = self._elementwise(operands)
            return shape, 1, False  # masks are not counted
        if isinstance(expr, ast.IfExp):
            return self._elementwise([expr.body, expr.orelse])
        if isinstance(expr, ast.Call):
            return self._call(expr)
        return None, None, False

    def _elementwise(self, operands: Iterable[ast.AST]) -> tuple[Shape | None, int | None, bool]:
        operands = list(operands)
        found = [self.of(o) for o in operands]
        # Data is a tile computed from a tile: a scalar read from memory (an offset, a
        # sequence start) turns index arithmetic into nothing held; an address is no data.
        data = any(f[2] and f[0] != () for f in found) and not any(
            isinstance(o, ast.Name) and o.id in self.pointers for o in operands
        )
        if any(f[0] is None for f in found):
            return None, None, data
        shape = _broadcast([f[0] for f in found]) if found else ()
        sizes = [f[1] for f in found if f[2] and f[1] is not None]
        return shape, (max(sizes) if sizes else (1 if data else None)), data

    def _subscript(self, expr: ast.Subscript) -> tuple[Shape | None, int | None, bool]:
        shape, size, data = self.of(expr.value)
        if shape is None:
            return None, size, data
        items = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        out: list[ast.expr] = []
        rest = list(shape)
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                out.append(ast.Constant(1))
            elif isinstance(item, ast.Slice) and item.lower is item.upper is item.step is None:
                if not rest:
                    return None, size, data
                out.append(rest.pop(0))
            else:
                return None, size, data
        return (*out, *rest), size, data

    def _shape_argument(self, node: ast.AST | None) -> Shape | None:
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(node.elts)
        if node is not None and (int_literal(node) is not None or isinstance(node, ast.Name)):
            return (node,)
        return None

    def _call(self, call: ast.Call) -> tuple[Shape | None, int | None, bool]:
        qual = self._qual(call)
        if qual is None:
            return None, None, False
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        method = receiver is not None and self.aliases.resolve(call.func) is None
        args = [receiver, *call.args] if method else list(call.args)
        if qual in _SCALAR_CALLS:
            return (), None, False
        if qual in _HINTS and args:
            return self.of(args[0])
        if qual == "arange" and len(args) >= 2:
            start, end = args[0], args[1]
            extent = end if int_literal(start) == 0 else ast.BinOp(end, ast.Sub(), start)
            return (extent,), None, False
        if qual in ("zeros", "full", "empty"):
            shape = self._shape_argument(argument_for(call, "shape", 0))
            dtype_at = 1 if qual != "full" else 2
            size = self.dtype_bytes(argument_for(call, "dtype", dtype_at))
            return shape, size or 1, True
        if qual in ("zeros_like", "full_like", "empty_like") and args:
            shape, size, _ = self.of(args[0])
            dtype = self.dtype_bytes(argument_for(call, "dtype", 2 if qual == "full_like" else 1))
            return shape, dtype or size or 1, True
        if qual == "load" and args:
            return self._load(call, args[0])
        if qual in ("to", "cast") and args:
            shape, size, data = self.of(args[0])
            dtype = argument_for(call, "dtype", 0 if method else 1)
            return shape, self.dtype_bytes(dtype) or size, data
        if qual == "dot" and len(args) >= 2:
            (a, _, _), (b, _, _) = self.of(args[0]), self.of(args[1])
            shape = (a[0], b[-1]) if a and b and len(a) == 2 and len(b) == 2 else None
            size = self.dtype_bytes(argument_for(call, "out_dtype", 5)) or 4
            return shape, size, True
        if qual in _REDUCTIONS and args:
            shape, size, data = self.of(args[0])
            axis = argument_for(call, "axis", 1)
            if shape is None:
                return None, size, data
            index = int_literal(axis) if axis is not None else None
            if axis is None or (isinstance(axis, ast.Constant) and axis.value is None):
                return (), size, data
            if index is None or not -len(shape) <= index < len(shape):
                return None, size, data
            kept = list(shape)
            kept.pop(index)
            return tuple(kept), size if qual not in ("argmax", "argmin") else 4, data
        if qual == "trans" and args:
            shape, size, data = self.of(args[0])
            two_d = shape is not None and len(shape) == 2 and len(args) == 1
            return (shape[::-1] if two_d else None), size, data
        if qual in ("reshape", "view", "broadcast_to") and len(args) >= 2:
            _, size, data = self.of(args[0])
            rest = args[1:]
            shape = self._shape_argument(rest[0]) if len(rest) == 1 else tuple(rest)
            return shape, size, data
        if qual in _KEEP_SHAPE:
            return self._elementwise(a for a in args if a is not None)
        return None, None, False

    def _load(self, call: ast.Call, pointer: ast.AST) -> tuple[Shape | None, int | None, bool]:
        block = self._block_shape(pointer)
        if block is not None:
            shape = block
        else:
            shape, _, _ = self.of(pointer)
        root = pointer_root(pointer)
        size = self.facts.host_element_bytes(self.fn, root) if root in self.fn.params else None
        return shape, size or 1, True

    def _block_shape(self, pointer: ast.AST) -> Shape | None:
        """`block_shape` of the `tl.make_block_ptr` a load reads (through `tl.advance`)."""
        seen = 0
        while seen < 8:
            seen += 1
            if isinstance(pointer, ast.Name) and pointer.id in self.fn.assignments:
                values = self.fn.assignments[pointer.id]
                made = [
                    v
                    for v in values
                    if isinstance(v, ast.Call) and self._qual(v) == "make_block_ptr"
                ]
                if not made:
                    advanced = [
                        v for v in values if isinstance(v, ast.Call) and self._qual(v) == "advance"
                    ]
                    if advanced and advanced[0].args:
                        pointer = advanced[0].args[0]
                        continue
                    return None
                shapes = [self._shape_argument(argument_for(v, "block_shape", 4)) for v in made]
                first = shapes[0]
                if first is None or any(
                    s is None or len(s) != len(first) or not all(map(_dims_equal, s, first))
                    for s in shapes
                ):
                    return None
                return first
            if isinstance(pointer, ast.Call) and self._qual(pointer) == "make_block_ptr":
                return self._shape_argument(argument_for(pointer, "block_shape", 4))
            if isinstance(pointer, ast.Call) and self._qual(pointer) == "advance" and pointer.args:
                pointer = pointer.args[0]
                continue
            return None
        return None


class TileFacts:
    """The tiles kernels hold and the configurations that size them (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts, quantities: QuantityFacts):
        self._core = core
        self._host = host
        self._quantities = quantities
        self._tiles: dict[int, KernelTiles] = {}
        self._configs: dict[int, list[Config]] = {}
        self._element_bytes: dict[tuple[int, str], int | None] = {}
        self._live: dict[tuple, list[frozenset[str]]] = {}
        self._shapes: dict[int, _KernelShapes] = {}

    # -- tiles -------------------------------------------------------------------
    def of(self, fn: JitFunction) -> KernelTiles:
        found = self._tiles.get(id(fn.node))
        if found is None:
            found = self._tiles[id(fn.node)] = self._compute(fn)
        return found

    def _compute(self, fn: JitFunction) -> KernelTiles:
        shapes = _KernelShapes(fn, self)
        # Statements a runtime loop repeats (a `tl.static_range` loop is unrolled: no
        # copy of the next iteration to overlap, so nothing is multibuffered for it).
        loop_statements = {
            id(stmt)
            for stmt in fn.statements
            if any(not loop.static for loop in fn.context(stmt).loops)
        }
        tiles: dict[str, list[Tile]] = {}
        everywhere: set[str] = set()
        for name, definitions in fn.definitions.items():
            if name in fn.params or name in shapes.pointers:
                continue
            found: list[Tile] = []
            for order, value in definitions:
                tile = self._tile(shapes, name, value, id(fn.statements[order]) in loop_statements)
                if tile is None:
                    break
                found.append(tile)
            else:
                if found and name not in fn.loop_targets:
                    tiles[name] = found
                    everywhere.add(name)
        if shapes.mixed:
            # Only what a dot's result feeds is surely on the vector core.
            derived = _fed_by_dot(
                shapes,
                _dot_results(fn, shapes),
                {n: [t.node for t in ts] for n, ts in tiles.items()},
            )
            tiles = {n: ts for n, ts in tiles.items() if n in derived}
            everywhere &= derived
        return KernelTiles(tiles, shapes.mixed, frozenset(everywhere))

    def _tile(self, shapes: _KernelShapes, name: str, value: ast.AST, in_loop: bool) -> Tile | None:
        if isinstance(value, (ast.Name, ast.Subscript)):
            return None  # another name for a tile, or a view of it: no buffer of its own
        shape, size, data = shapes.of(value)
        if not data or shape is None or not shape or size is None:
            return None
        kind, multibuffered = "computed", False
        if isinstance(value, ast.Call):
            qual = shapes._qual(value)
            if qual == "load":
                kind, multibuffered = "load", in_loop
            elif qual in _FILLED or qual in ("zeros_like", "full_like"):
                kind = "filled"
            elif qual == "dot":
                kind = "dot"
            elif qual in _VIEWS:
                return None
            elif qual in ("to", "cast"):
                # A cast of a named tile may be a no-op (it may have the type already)
                # and share its buffer; a cast of a load is a buffer of its own type.
                receiver = value.func.value if isinstance(value.func, ast.Attribute) else None
                source = value.args[0] if qual == "cast" and value.args else receiver
                if isinstance(source, ast.Name):
                    return None
                kind = "cast"
        return Tile(value, name, shape, size, kind, multibuffered)

    # -- shapes of any expression (asked by `lanes`) ------------------------------
    def shape(self, fn: JitFunction, expr: ast.AST) -> Shape | None:
        """The dimensions of an expression of `fn`, offsets and masks included (`()` a
        scalar, None not known), by the same shape rules as the tiles."""
        shapes = self._shapes.get(id(fn.node))
        if shapes is None:
            shapes = self._shapes[id(fn.node)] = _KernelShapes(fn, self)
        return shapes.of(expr)[0]

    def compiled_by_some_launch(self, fn: JitFunction, stmt: ast.stmt) -> bool:
        """Whether some configuration that reaches `fn` compiles `stmt`: False only when
        every one decides a compile-time `if` around it the other way (the launches in
        the module pass `FLAG=False` for its `if FLAG:`)."""
        configs = self.configs(fn)
        if not configs:
            return True
        aliases = self._core.aliases
        tests = [
            (branch.test, branch.taken)
            for branch in fn.context(stmt).branches
            if not fn.is_runtime(branch.test, aliases, at=branch.node)
        ]
        if not tests:
            return True
        for config in configs:
            if all(_truth(test, config.values) in (None, taken) for test, taken in tests):
                return True
        return False

    def host_element_bytes(self, fn: JitFunction, param: str) -> int | None:
        """Bytes per element of the tensor every launch passes for pointer `param`,
        when the host allocates or converts it with a known type."""
        key = (id(fn.node), param)
        if key in self._element_bytes:
            return self._element_bytes[key]
        found: set[int | None] = set()
        for launch in self._core.launches_of(fn):
            for arg in launch.args.get(param, ()):
                for value, _ in self._host.host_values(arg, launch.host):
                    found.add(_tensor_element_bytes(value, self._core))
        result = found.pop() if len(found) == 1 else None
        self._element_bytes[key] = result
        return result

    # -- the estimate ------------------------------------------------------------
    def peak(self, fn: JitFunction, values: dict[str, int], target: UbTarget) -> Peak | None:
        """The largest sum of aligned tile bytes live at one point, in bits, for these
        constexpr values; None when no tile's size is known."""
        kernel = self.of(fn)
        sizes: dict[str, int] = {}
        for name, tiles in kernel.tiles.items():
            each = [t.bytes_with(values, target, kernel.mixed) for t in tiles]
            if all(b is not None for b in each):
                sizes[name] = min(each)
        if not sizes:
            return None
        best: tuple[int, tuple[str, ...]] = (0, ())
        for live in self.live_sets(fn, values):
            held = sorted((n for n in live if n in sizes), key=lambda n: (-sizes[n], n))
            total = sum(sizes[n] for n in held)
            if total > best[0]:
                best = (total, tuple(held))
        return Peak(best[0] * BITS_PER_BYTE, best[1]) if best[0] else None

    def smallest_overflowing_block(
        self, fn: JitFunction, param: str, configs: list[Config], target: UbTarget
    ) -> tuple[int, Peak] | None:
        """The smallest power of two for the block `param` whose peak exceeds the target
        under every configuration (with the other sizes each gives; the most lenient one
        decides), and that peak; None when some configuration never overflows."""
        worst: tuple[int, Peak] | None = None
        for config in configs or [Config({}, "", fn.node)]:
            for exponent in range(_LARGEST_BLOCK_EXPONENT + 1):
                peak = self.peak(fn, {**config.values, param: 1 << exponent}, target)
                if peak is not None and peak.bits > target.capacity_bits:
                    if worst is None or exponent > worst[0]:
                        worst = (exponent, peak)
                    break
            else:
                return None  # some configuration never overflows: nothing is proven
        return None if worst is None else (1 << worst[0], worst[1])

    def live_sets(self, fn: JitFunction, values: dict[str, int]) -> list[frozenset[str]]:
        """The sets of tile locals live at one point of the code these constexpr values
        compile: a constexpr `if` they decide keeps only its taken side; one they do
        not decide contributes no point (its side may not be compiled at all)."""
        kernel = self.of(fn)
        aliases = self._core.aliases
        decisions: dict[int, str] = {}
        for stmt in fn.statements:
            if isinstance(stmt, ast.If):
                if fn.is_runtime(stmt.test, aliases, at=stmt):
                    decisions[id(stmt)] = "both"
                else:
                    truth = _truth(stmt.test, values)
                    decisions[id(stmt)] = (
                        "unknown" if truth is None else "body" if truth else "orelse"
                    )
        key = (id(fn.node), tuple(decisions.values()))
        found = self._live.get(key)
        if found is None:
            tracked = frozenset(kernel.tiles)
            found = self._live[key] = _LiveSets(tracked, decisions).of(fn.node.body)
        return found

    # -- configurations ----------------------------------------------------------
    def configs(self, fn: JitFunction) -> list[Config]:
        found = self._configs.get(id(fn.node))
        if found is None:
            found = self._configs[id(fn.node)] = self._compute_configs(fn)
        return found

    def _compute_configs(self, fn: JitFunction) -> list[Config]:
        defaults = _constexpr_defaults(fn)
        params = [p for p in fn.params if p in fn.constexpr_params]
        # What each launch fixes: a constexpr every source of which is one integer.
        sources: dict[tuple, tuple[dict[str, int], str, ast.AST, tuple[ast.AST, ...]]] = {}
        for launch in self._core.launches_of(fn):
            values = {}
            for param in params:
                found = {self._host_int(a, launch.host) for a in launch.args.get(param, ())}
                if len(found) == 1 and None not in found:
                    values[param] = found.pop()
            label = f"the launch at {cite(0)}"
            sources.setdefault(
                tuple(sorted(values.items())),
                (values, label, launch.call.func, (launch.call,)),
            )
        if not sources or all(not values for values, _, _, _ in sources.values()):
            sources = {(): ({}, "the parameter defaults", fn.node, ())}
        tuned = self._autotune_configs(fn)
        configs = []
        for values, label, node, cited in sources.values():
            base = {**defaults, **values}
            if not tuned:
                if base:
                    configs.append(Config(_in_order(fn, base), label, node, cited))
                continue
            for number, (config, tuned_values) in enumerate(tuned, start=1):
                where = f"config {number} of @triton.autotune"
                configs.append(
                    Config(
                        _in_order(fn, {**base, **tuned_values}),
                        f"{where}, {label}" if values else where,
                        config,
                        cited if values else (),
                    )
                )
        return configs

    def _host_int(self, arg: ast.AST | None, host: HostFunction | None) -> int | None:
        if arg is None:
            return None
        found: set[int] = set()
        for value, _ in self._host.host_values(arg, host):
            if isinstance(value, ast.Name):
                value = self._host.module_constant(value.id) or value
            literal = int_literal(value)  # `True`/`False` flags decide branches as 1/0
            if literal is None:
                return None
            found.add(int(literal))
        return found.pop() if len(found) == 1 else None

    def _autotune_configs(self, fn: JitFunction) -> list[tuple[ast.Call, dict[str, int]]]:
        aliases = self._core.aliases
        for decorator in fn.node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            if (aliases.resolve(decorator.func) or "").rsplit(".", 1)[-1] != "autotune":
                continue
            listed = next((kw.value for kw in decorator.keywords if kw.arg == "configs"), None)
            if listed is None and decorator.args:
                listed = decorator.args[0]
            if isinstance(listed, ast.Name):
                listed = self._host.module_constant(listed.id)
            if not isinstance(listed, (ast.List, ast.Tuple)):
                return []
            out = []
            for element in listed.elts:
                if not isinstance(element, ast.Call) or not element.args:
                    return []
                mapping = element.args[0]
                if not isinstance(mapping, ast.Dict):
                    return []
                values = {}
                for key, value in zip(mapping.keys, mapping.values):
                    literal = int_literal(value) if value is not None else None
                    if (
                        isinstance(key, ast.Constant)
                        and isinstance(key.value, str)
                        and literal is not None
                    ):
                        values[key.value] = literal
                out.append((element, values))
            return out
        return []

    # -- unbounded blocks --------------------------------------------------------
    def unbounded(self, fn: JitFunction) -> list[UnboundedBlock]:
        out = []
        for launch in self._core.launches_of(fn):
            for param in sorted(fn.constexpr_params):
                for arg in launch.args.get(param, ()):
                    values = self._host.host_values(arg, launch.host)
                    calls = [v for v, _ in values if _is_power_of_two_call(v)]
                    if not values or len(calls) != len(values):
                        continue  # capped (or not a power of two) on some path
                    call = calls[0]
                    if not all(self._grows(c.args[0], launch.host) for c in calls):
                        continue
                    out.append(UnboundedBlock(param, launch, call, show(call.args[0])))
        return out

    def _grows(self, expr: ast.AST, host: HostFunction | None) -> bool:
        """A token, row or element count of the input (the host value model's
        `LENGTH`): it grows with each call's data. A model dimension (hidden size, head
        dim, conv width) or a batch is bounded by the model and the server, which the
        code does not show; such blocks are judged by the configs the launches give."""
        if isinstance(expr, ast.Name) and is_batch_name(expr.id):
            return False
        quantities = self._quantities.of(expr, host)
        if not quantities or not all(q.role == Role.LENGTH for q in quantities):
            return False
        return not self._capped(expr, host, set())

    def _capped(self, expr: ast.AST, host: HostFunction | None, seen: set[str]) -> bool:
        """Whether a `min(...)` bounds some value `expr` is computed from (`n = min(a,
        b)`, `cdiv(min(n, cap), k)`): then the count is not unbounded on every path."""
        for value, _ in self._host.host_values(expr, host):
            for node in walk(value):
                if isinstance(node, ast.Call) and call_name(node.func) == "min":
                    return True
                if (
                    isinstance(node, ast.Name)
                    and node is not expr
                    and node.id not in seen
                    and len(seen) < _MAX_FOLLOWED_NAMES
                ):
                    seen.add(node.id)
                    if self._capped(node, host, seen):
                        return True
        return False


def _truth(test: ast.AST, values: dict[str, int]) -> bool | None:
    """A constexpr test under constexpr `values`; None when they do not decide it."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name):
        value = values.get(test.id)
        return None if value is None else bool(value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, values)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_truth(v, values) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # `or`: one True decides; `and`: one False
        if decisive in parts:
            return decisive
        return None if None in parts else not decisive
    if isinstance(test, ast.Compare):
        left = evaluate(test.left, values)
        for op, right_node in zip(test.ops, test.comparators):
            right = evaluate(right_node, values)
            if left is None or right is None:
                return None
            compare = _COMPARISONS.get(type(op))
            if compare is None:
                return None
            if not compare(left, right):
                return False
            left = right
        return True
    return None


_COMPARISONS = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def _dot_results(fn: JitFunction, shapes: _KernelShapes) -> frozenset[str]:
    """The locals that hold a `tl.dot` result, or an accumulator it adds into (`acc +=
    tl.dot(...)`): these stay with the cube core."""

    def accumulates(name: str, node: ast.AST) -> bool:
        if _is_dot(shapes, node):
            return True
        return (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and any(_is_dot(shapes, side) for side in (node.left, node.right))
            and name in frozen_names(node)
        )

    def filled(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and shapes._qual(node) in _FILLED

    return frozenset(
        name
        for name, values in fn.assignments.items()
        if any(accumulates(name, v) for v in values)
        and all(accumulates(name, v) or filled(v) for v in values)
    )


def _is_dot(shapes: _KernelShapes, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and shapes._qual(node) == "dot"


def _fed_by_dot(
    shapes: _KernelShapes, results: frozenset[str], definitions: dict[str, list[ast.AST]]
) -> set[str]:
    """The locals of `definitions` computed by vector ops from a `tl.dot` result (through
    other locals of `definitions`): not the dot's own result, nor an accumulator it adds
    into (`results`), which stay with the cube core."""
    # What each candidate's definitions read, worked out once: the rounds below only
    # look it up. A definition that calls a dot itself is fed whatever it reads.
    candidates: dict[str, tuple[bool, frozenset[str]]] = {}
    for name, values in definitions.items():
        if name not in results:
            calls_dot = any(_is_dot(shapes, n) for v in values for n in walk(v))
            reads = frozenset().union(*(frozen_names(v) for v in values))
            candidates[name] = (calls_dot, reads)
    fed: set[str] = set()
    grown = True
    while grown:
        grown = False
        for name, (calls_dot, reads) in candidates.items():
            if name in fed:
                continue
            if calls_dot or not reads.isdisjoint(results) or not reads.isdisjoint(fed):
                fed.add(name)
                grown = True
    return fed


def _is_power_of_two_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and (call_name(node.func) or "") in _POWER_OF_TWO
        and len(node.args) == 1
    )


def _tensor_element_bytes(value: ast.AST, core: CoreFacts) -> int | None:
    """`torch.empty(..., dtype=torch.float32)` -> 4, `x.float()` -> 4, `x.to(torch.half)` -> 2."""
    if not isinstance(value, ast.Call):
        return None
    name = call_name(value.func) or ""
    dtype = next((kw.value for kw in value.keywords if kw.arg == "dtype"), None)
    if name == "to" and value.args and dtype is None:
        dtype = value.args[0]
    if dtype is not None and (name in _ALLOCATORS or name.endswith("_like") or name == "to"):
        spelled = dtype.attr if isinstance(dtype, ast.Attribute) else None
        return _TORCH_BYTES.get(spelled or "")
    if isinstance(value.func, ast.Attribute) and not value.args and name in _TORCH_CASTS:
        return _TORCH_CASTS[name]
    return None


def _in_order(fn: JitFunction, values: dict[str, int]) -> dict[str, int]:
    """`values` in the kernel's parameter order (messages name them that way)."""
    rank = {p: i for i, p in enumerate(fn.params)}
    return dict(sorted(values.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def _constexpr_defaults(fn: JitFunction) -> dict[str, int]:
    positional = fn.node.args.posonlyargs + fn.node.args.args
    out: dict[str, int] = {}
    named = list(
        zip(positional[len(positional) - len(fn.node.args.defaults) :], fn.node.args.defaults)
    )
    named += [
        (a, d) for a, d in zip(fn.node.args.kwonlyargs, fn.node.args.kw_defaults) if d is not None
    ]
    for arg, default in named:
        literal = int_literal(default)
        if arg.arg in fn.constexpr_params and literal is not None:
            out[arg.arg] = literal
    return out


@dataclass
class _LiveSets:
    """Static live-variable analysis of tile locals over a kernel's structured body: the
    set live after each statement (and inside each statement that defines one)."""

    tracked: frozenset[str]
    # id(if statement) -> "body" / "orelse" (a constexpr test the config decides),
    # "both" (a runtime test: both sides are compiled), "unknown" (a constexpr test it
    # does not decide: no point inside is provably compiled)
    decisions: dict[int, str]
    found: list[frozenset[str]] = field(default_factory=list)

    def of(self, body: list[ast.stmt]) -> list[frozenset[str]]:
        if self.tracked:
            self._block(body, frozenset(), record=True)
        unique = {s for s in self.found if s}
        return sorted(unique, key=lambda s: (-len(s), sorted(s)))

    def _uses(self, node: ast.AST | None) -> frozenset[str]:
        return frozen_names(node) & self.tracked

    def _block(self, body: list[ast.stmt], live: frozenset[str], record: bool) -> frozenset[str]:
        for stmt in reversed(body):
            live = self._statement(stmt, live, record)
        return live

    def _statement(self, stmt: ast.stmt, live: frozenset[str], record: bool) -> frozenset[str]:
        if isinstance(stmt, ast.If):
            decision = self.decisions.get(id(stmt), "unknown")
            if decision == "body":
                return self._block(stmt.body, live, record)
            if decision == "orelse":
                return self._block(stmt.orelse, live, record)
            inside = record and decision == "both"
            taken = self._block(stmt.body, live, inside)
            other = self._block(stmt.orelse, live, inside)
            return taken | other | self._uses(stmt.test)
        if isinstance(stmt, (ast.For, ast.While)):
            head = self._uses(stmt.iter if isinstance(stmt, ast.For) else stmt.test)
            target = self._uses(stmt.target) if isinstance(stmt, ast.For) else frozenset()
            after = self._block(stmt.orelse, live, record) if stmt.orelse else live
            entry = after | head
            for _ in range(3):  # what a later iteration reads is live around the back edge
                body_in = self._block(stmt.body, entry, record=False) - target
                grown = entry | body_in
                if grown == entry:
                    break
                entry = grown
            self._block(stmt.body, entry, record)
            return entry
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return self._block(stmt.body, live, record)
        if isinstance(stmt, ast.Return):
            return self._uses(stmt.value)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
            return live
        defined: frozenset[str] = frozenset()
        if isinstance(stmt, ast.Assign):
            defined = frozenset().union(*(self._uses(t) for t in stmt.targets))
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            defined = self._uses(stmt.target)
        reads = self._uses(stmt) - (defined if not isinstance(stmt, ast.AugAssign) else frozenset())
        if isinstance(stmt, ast.AugAssign):
            reads |= defined
        before = (live - defined) | reads
        if record:
            # The points just before and just after the statement. Inside it, a result
            # may reuse a dying operand's buffer: no point there is provably larger.
            self.found.append(before)
            self.found.append(live)
        return before
