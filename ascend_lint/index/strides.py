"""Strides: whether a stride in a kernel is unit, non-unit, or unknown, and why.

A stride is non-unit only when something shows it, since Triton specialises an
integer argument equal to 1 and a stride that is 1 at run time compiles as 1:

* a literal (`1` is unit, any other value is not);
* a product of two or more dimensions (`H * K`);
* a dimension count: a parameter the launcher binds to `x.shape[k]` / `x.size(k)`, to a
  name unpacked from a shape (`B, T, H = g.shape`) or to an extent of the launch grid
  (`kernel[(NT, HV)](..., HV=HV)`), or one the kernel divides a program index by
  (`i_bh // H`, `i_bh % H`);
* a launcher binding: `x.stride(k)` is unit for the innermost dimension (`-1`, or
  `ndim - 1` where the host shows the tensor's rank: `torch.empty(n)`, `x.view(a, b)`,
  `B, T, H = x.shape`) and non-unit for any outer one; a stride of unknown rank is
  unknown;
* in a `@triton.jit` helper, what its callers pass.

A bare stride argument with none of this evidence is unknown, and unknown is not a
finding. The rank of a host tensor (`rank`, `min_rank`) is known here too, as the
evidence for `x.stride(k)`; `quantities` asks it of `x.shape[k]`.

Depends on: the core facts (launches and helper calls, host calls) and `host` (what a
launch argument holds). `quantities` receives this object.

Costs: results are cached per (kernel, name); the names a kernel divides an index by
once per kernel; the highest `x.stride(k)` / `x.size(k)` once per host function.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import HostFunction, TupleElement
from ascend_lint.index.syntax import MAX_HELPER_DEPTH, factors, int_literal, show, walk

UNIT = "unit"
NON_UNIT = "non-unit"

_RANKED_BUILDERS = {"empty", "zeros", "ones", "full", "randn", "rand", "new_empty", "new_zeros"}
_RESHAPES = {"view", "reshape", "expand", "new_ones"}
_FLATTENED = {"flatten", "ravel"}


@dataclass(frozen=True)
class Stride:
    kind: str | None  # UNIT, NON_UNIT, or None: no evidence either way
    why: str = ""  # the evidence, for messages


_UNKNOWN = Stride(None)


class StrideFacts:
    """What is known about the strides of kernels (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts):
        self._core = core
        self._aliases = core.aliases
        self._host_values = host.host_values
        self._stride_cache: dict[tuple[int, str], Stride] = {}
        self._divisor_cache: dict[int, set[str]] = {}
        self._min_rank_cache: dict[int, dict[str, int]] = {}

    def stride_of(self, fn: JitFunction, expr: ast.AST, depth: int = 0) -> Stride:
        """What is known about the stride `expr` in kernel `fn`."""
        if depth > MAX_HELPER_DEPTH:
            return _UNKNOWN
        if isinstance(expr, ast.Constant) and isinstance(expr.value, int):
            if expr.value == 1:
                return Stride(UNIT, "the literal 1")
            return Stride(NON_UNIT, f"the literal {expr.value}")
        parts = factors(expr)
        if len(parts) > 1:
            kinds = [self.stride_of(fn, p, depth + 1) for p in parts]
            if any(k.kind == NON_UNIT for k in kinds):
                return next(k for k in kinds if k.kind == NON_UNIT)
            if all(k.kind == UNIT for k in kinds):
                return Stride(UNIT, "a product of unit strides")
            names = [p for p in parts if not isinstance(p, ast.Constant)]
            if len(names) > 1:
                return Stride(NON_UNIT, f"a product of dimensions `{ast.unparse(expr)}`")
            return _UNKNOWN
        if not isinstance(expr, ast.Name):
            return _UNKNOWN
        return self._name_stride(fn, expr.id, depth)

    def _name_stride(self, fn: JitFunction, name: str, depth: int) -> Stride:
        cache = self._stride_cache
        key = (id(fn), name)
        if key in cache:
            return cache[key]
        cache[key] = _UNKNOWN  # recursion guard
        result = _UNKNOWN
        values = fn.assignments.get(name, [])
        if name not in fn.params:
            kinds = [self.stride_of(fn, v, depth + 1) for v in values]
            if kinds and all(k.kind == kinds[0].kind for k in kinds):
                result = kinds[0]
        else:
            result = self._param_stride(fn, name, depth)
        cache[key] = result
        return result

    def _param_stride(self, fn: JitFunction, name: str, depth: int) -> Stride:
        found: list[Stride] = []
        for binding in self._core.launches:
            if binding.callee is fn:
                grid = _grid_extents(binding.call)
                for expr in binding.args.get(name, []):
                    if ast.unparse(expr) in grid:
                        found.append(Stride(NON_UNIT, f"`{name}` is a grid extent (a count)"))
                    for value, _guards in self._host_values(expr, binding.host):
                        host = self._host_stride(value, binding.host)
                        found.append(Stride(host.kind, f"a launch binds `{name}` to {host.why}"))
        for binding in self._core.helper_calls:
            if binding.callee is fn and binding.caller is not None:
                for expr in binding.args.get(name, []):
                    passed = self.stride_of(binding.caller, expr, depth + 1)
                    shown = ast.unparse(expr)
                    found.append(Stride(passed.kind, f"a caller passes `{shown}`: {passed.why}"))
        if any(s.kind == NON_UNIT for s in found):
            return next(s for s in found if s.kind == NON_UNIT)
        if found and all(s.kind == UNIT for s in found):
            return found[0]
        if name in self._divisors(fn):
            return Stride(NON_UNIT, f"`{name}` is a count the kernel divides an index by")
        return _UNKNOWN

    def _divisors(self, fn: JitFunction) -> set[str]:
        """Names the kernel divides or reduces an index by: `i_bh // H`, `i_bh % H`
        (found once per kernel, however many of its strides are asked about)."""
        cached = self._divisor_cache.get(id(fn))
        if cached is not None:
            return cached
        out: set[str] = set()
        self._divisor_cache[id(fn)] = out
        # The kernel scan lists every `//` and `%` with its statement: no walk needed.
        for node, stmt in fn.divisions:
            if (
                isinstance(stmt, (ast.Assign, ast.AugAssign))
                and isinstance(node.right, ast.Name)
                and fn.is_runtime(node.left, self._aliases)
            ):
                out.add(node.right.id)
        return out

    def _host_stride(self, value: ast.AST, host: HostFunction | None) -> Stride:
        """A launch argument on the host side."""
        if isinstance(value, ast.Constant) and isinstance(value.value, int):
            return Stride(UNIT if value.value == 1 else NON_UNIT, f"the literal {value.value}")
        if _is_dimension(value):
            return Stride(NON_UNIT, f"a dimension of a tensor (`{show(value)}`)")
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
            kinds = [self._host_stride(v, host) for v in (value.left, value.right)]
            if any(k.kind == NON_UNIT for k in kinds):
                return Stride(NON_UNIT, f"a product of dimensions (`{show(value)}`)")
            return _UNKNOWN
        call = value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "stride"
            and len(call.args) == 1
            and isinstance(call.args[0], (ast.Constant, ast.UnaryOp))
        ):
            dim = int_literal(call.args[0])
            if dim is None:
                return _UNKNOWN
            shown = f"`{show(call)}`"
            if dim == -1:
                return Stride(UNIT, f"{shown}, the innermost dimension")
            rank = self.rank(call.func.value, host)
            if rank is None:
                return _UNKNOWN
            if dim == rank - 1:
                return Stride(UNIT, f"{shown}, the innermost dimension of a {rank}-D tensor")
            return Stride(NON_UNIT, f"{shown}, an outer dimension of a {rank}-D tensor")
        return _UNKNOWN

    def rank(self, tensor: ast.AST, host: HostFunction | None) -> int | None:
        """The number of dimensions of a host tensor, where the host shows it."""
        ranks = set()
        for value, _ in self._host_values(tensor, host):
            rank = _rank_of(value)
            if rank is None and isinstance(tensor, ast.Name) and host is not None:
                rank = _unpacked_rank(tensor.id, host)
            ranks.add(rank)
        return ranks.pop() if len(ranks) == 1 else None

    def min_rank(self, tensor: ast.AST, host: HostFunction | None) -> int | None:
        """At least how many dimensions a host tensor has: `x.stride(2)`, `x.size(2)` or
        `x.shape[2]` anywhere in the host shows three. One pass over the host's calls
        and one walk of its body, kept."""
        if not isinstance(tensor, ast.Name) or host is None:
            return None
        highest = self._min_rank_cache.get(id(host))
        if highest is None:
            highest = self._min_rank_cache[id(host)] = {}
            for call, owner in self._core.host_calls:
                func = call.func
                if (
                    owner is host
                    and isinstance(func, ast.Attribute)
                    and func.attr in ("stride", "size")
                    and isinstance(func.value, ast.Name)
                    and len(call.args) == 1
                    and isinstance(call.args[0], ast.Constant)
                    and isinstance(call.args[0].value, int)
                ):
                    name, dim = func.value.id, call.args[0].value
                    highest[name] = max(highest.get(name, -1), dim)
            body = host.node.body if isinstance(host.node.body, list) else []
            for stmt in body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue  # their own hosts
                for node in walk(stmt):
                    if (
                        isinstance(node, ast.Subscript)
                        and isinstance(node.value, ast.Attribute)
                        and node.value.attr == "shape"
                        and isinstance(node.value.value, ast.Name)
                        and isinstance(node.slice, ast.Constant)
                        and isinstance(node.slice.value, int)
                    ):
                        name, dim = node.value.value.id, node.slice.value
                        highest[name] = max(highest.get(name, -1), dim)
        dim = highest.get(tensor.id, -1)
        return dim + 1 if dim >= 0 else None


def _grid_extents(launch: ast.Call) -> set[str]:
    """`kernel[(NT, B * H)](...)` -> {'NT', 'B * H'}: the sizes of the launch grid."""
    grid = launch.func.slice if isinstance(launch.func, ast.Subscript) else None
    if isinstance(grid, (ast.Tuple, ast.List)):
        return {ast.unparse(e) for e in grid.elts if not isinstance(e, ast.Constant)}
    return set()


def _is_dimension(value: ast.AST) -> bool:
    """`x.shape[k]`, `x.size(k)`, or a name unpacked from a shape."""
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute):
        return value.value.attr == "shape"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        return value.func.attr == "size" and len(value.args) == 1
    if isinstance(value, TupleElement):
        return any(isinstance(n, ast.Attribute) and n.attr == "shape" for n in walk(value.value))
    return False


def _rank_of(value: ast.AST) -> int | None:
    """Rank of `torch.empty(a, b)`, `torch.zeros((a, b))`, `x.view(a, -1)`, `x.flatten()`."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return None
    attr = value.func.attr
    if attr in _FLATTENED and not value.args:
        return 1
    if attr not in _RANKED_BUILDERS and attr not in _RESHAPES:
        return None
    args = [a for a in value.args if not isinstance(a, ast.Starred)]
    if len(args) != len(value.args) or not args:
        return None
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in args[0].elts):
            return None
        return len(args[0].elts)
    if attr == "full":
        return None  # full(size, fill_value): the size is the first argument only
    if len(args) == 1 and not isinstance(args[0], (ast.Constant, ast.Name, ast.BinOp)):
        return None  # a shape object of unknown length
    return len(args)


def _unpacked_rank(name: str, host: HostFunction) -> int | None:
    """`B, T, H = x.shape` shows that `x` has three dimensions."""
    for values in host.assignments.values():
        for value in values:
            if (
                isinstance(value, TupleElement)
                and isinstance(value.value, ast.Attribute)
                and value.value.attr == "shape"
                and isinstance(value.value.value, ast.Name)
                and value.value.value.id == name
                and value.width is not None  # `B, T, *_ = x.shape` shows no rank
            ):
                return value.width
    return None
