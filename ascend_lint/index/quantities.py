"""Host quantities: what a value the launcher computes counts, and whether it changes
from call to call.

A launch grid axis or a constexpr argument is an expression of host code. Followed through
the host's assignments, its callers and its helpers' returns, each value it can hold is
given one role:

* `LITERAL`  a number written in the source, or a module constant;
* `MODEL`    a dimension fixed by the model: the innermost dimension of a tensor (head
             or hidden size), a head count;
* `CORES`    the device's core count (`num_aicore`, `num_vectorcore`, a core-count
             helper), or a value capped by it with `min`;
* `BUCKETED` rounded to a power of two: few distinct values;
* `BATCH`    the leading dimension of a tensor, `len(...)`: changes per call but small;
* `LENGTH`   a token, row, element or sequence count: `numel()`, `.item()`, a sequence
             dimension, the leading dimension of a flattened view, and blocks of those;
* `UNKNOWN`  nothing shows what it is.

Cost: one walk of each expression, memoised per (expression, host function); names are
followed through `host_values` (depth-bounded, cycles cut).
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ascend_lint.index.aliases import LANGUAGE
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import HostFunction, TupleElement
from ascend_lint.index.naming import (
    is_batch_name,
    is_head_name,
    is_model_dimension,
    is_parameter_tensor,
    is_sequence_length,
    is_token_count,
)
from ascend_lint.index.syntax import MAX_HELPER_DEPTH, call_name, names_in, show

if TYPE_CHECKING:
    from ascend_lint.index.model import KernelIndex


class Role(enum.IntEnum):
    """Ordered by how much a value can vary: a sum or product takes its operands' largest."""

    LITERAL = 0
    MODEL = 1
    CORES = 2
    BUCKETED = 3
    UNKNOWN = 4
    BATCH = 5
    LENGTH = 6

    @property
    def per_call(self) -> bool:
        return self in (Role.BATCH, Role.LENGTH)


@dataclass(frozen=True)
class Quantity:
    role: Role
    why: str  # the evidence, for messages: "`x.numel()`, an element count"


# Device properties triton-ascend reports, and the GPU ones persistent kernels cap with.
_CORE_KEYS = frozenset(
    {"num_aicore", "num_vectorcore", "multiprocessor_count", "num_sm", "num_sms"}
)
_RESHAPES = frozenset({"view", "reshape"})
_CEIL_DIV = frozenset({"cdiv", "ceil_div", "ceildiv", "div_up", "round_up"})
_POWER_OF_TWO = frozenset({"next_power_of_2", "next_power_of_two"})


class _Source:
    """An expression's source text, unparsed only if a message shows it."""

    __slots__ = ("node",)

    def __init__(self, node: ast.AST):
        self.node = node

    def __str__(self) -> str:
        return show(self.node)

    __format__ = lambda self, spec: format(str(self), spec)  # noqa: E731


def _max(quantities: Iterable[Quantity]) -> Quantity:
    found = list(quantities)
    return max(found, key=lambda q: q.role) if found else Quantity(Role.LITERAL, "")


def _is_core_count_call(call: ast.Call) -> bool:
    """`get_num_cores("vector")`, `num_vector_cores()`, `get_npu_core_num()`: a helper
    whose name says it returns a core count."""
    name = (call_name(call.func) or "").lower()
    return "core" in name and not name.startswith("set")


def _core_key(node: ast.AST) -> bool:
    """`props["num_vectorcore"]`, `props.num_aicore`, `get_device_properties()[0]`."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        if isinstance(node.value, ast.Call) and "device_properties" in (
            call_name(node.value.func) or ""
        ):
            return True
        return node.slice.value in _CORE_KEYS
    if isinstance(node, ast.Attribute):
        return node.attr in _CORE_KEYS or node.attr == "multi_processor_count"
    return False


class QuantityQueries:
    """The queries of `KernelIndex` about host quantities (mixed into it)."""

    def quantities(self: KernelIndex, expr: ast.AST, host: HostFunction | None) -> list[Quantity]:
        """One quantity per value `expr` can hold (branches of the host, callers)."""
        if host is None:
            return [self._quantity(expr, None, "", 0)]
        out = []
        for value, _guards in self.host_values(expr, host):
            hint = expr.id if isinstance(expr, ast.Name) else ""
            out.append(self._quantity(value, host, hint, 0))
        return out

    def _quantity(
        self: KernelIndex, expr: ast.AST, host: HostFunction | None, hint: str, depth: int
    ) -> Quantity:
        key = (id(expr), id(host), hint)
        cached = self._quantity_cache.get(key)
        if cached is None:
            self._quantity_cache[key] = Quantity(Role.UNKNOWN, _Source(expr))  # cycles
            cached = self._quantity_cache[key] = self._compute_quantity(expr, host, hint, depth)
        return cached

    def _sub(
        self: KernelIndex, expr: ast.AST, host: HostFunction | None, depth: int, hint: str = ""
    ) -> Quantity:
        """The largest role over the values a sub-expression can hold. `hint` is the name
        the enclosing value is stored under (`kv_group_num = q.shape[1] // k.shape[1]`)."""
        if depth > 2 * MAX_HELPER_DEPTH:
            return Quantity(Role.UNKNOWN, _Source(expr))
        if isinstance(expr, ast.Name) and host is not None:
            values = self.host_values(expr, host)
            if values != [(expr, ())]:
                return _max(self._quantity(v, host, expr.id, depth + 1) for v, _ in values)
        return self._quantity(expr, host, hint, depth + 1)

    def _compute_quantity(
        self: KernelIndex, expr: ast.AST, host: HostFunction | None, hint: str, depth: int
    ) -> Quantity:
        shown = _Source(expr)
        if isinstance(expr, ast.Constant):
            return Quantity(Role.LITERAL, shown)
        if isinstance(expr, ast.Name):
            return self._name_quantity(expr, host, depth)
        if isinstance(expr, TupleElement):
            return self._unpacked_dimension(expr, host, hint or shown)
        if _core_key(expr):
            return Quantity(Role.CORES, f"`{shown}`, the core count")
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute):
            if expr.value.attr == "shape":
                return self._dimension(expr.value.value, expr.slice, host, hint, shown)
        if isinstance(expr, ast.UnaryOp):
            return self._sub(expr.operand, host, depth, hint)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, (ast.FloorDiv, ast.Div, ast.Mod, ast.RShift)):
                return self._divided(expr.left, expr.right, host, depth, hint)
            return _max(
                (self._sub(expr.left, host, depth, hint), self._sub(expr.right, host, depth, hint))
            )
        if isinstance(expr, ast.IfExp):
            sides = (
                self._sub(expr.body, host, depth, hint),
                self._sub(expr.orelse, host, depth, hint),
            )
            cores = [q for q in sides if q.role == Role.CORES]
            return cores[0] if cores else _max(sides)  # `n if n < CORES else CORES`: a cap
        if isinstance(expr, ast.Call):
            return self._call_quantity(expr, host, hint, depth, shown)
        return Quantity(Role.UNKNOWN, shown)

    def _divided(
        self: KernelIndex,
        count: ast.AST,
        divisor: ast.AST,
        host: HostFunction | None,
        depth: int,
        hint: str,
    ) -> Quantity:
        """`n // BLOCK`, `cdiv(n, BLOCK)`: blocks of `n`. A count shared out over the
        cores (`cdiv(n, num_cores)`) is a per-core block size, not a count of blocks."""
        divisors = (
            [
                self._quantity(v, host, divisor.id, depth + 1)
                for v, _ in self.host_values(divisor, host)
            ]
            if isinstance(divisor, ast.Name) and host is not None
            else [self._sub(divisor, host, depth)]
        )
        if any(q.role == Role.CORES for q in divisors):
            return Quantity(Role.UNKNOWN, f"`{show(count)}` shared over the cores")
        if any(q.role == Role.LENGTH for q in divisors):
            # n / f(n): blocks sized from the count itself stay about as many as chosen.
            return Quantity(Role.UNKNOWN, f"`{show(count)}` in blocks sized from it")
        return self._sub(count, host, depth, hint)

    def _name_quantity(
        self: KernelIndex, name: ast.Name, host: HostFunction | None, depth: int
    ) -> Quantity:
        module = self.hosts[0]
        if (
            host is not module
            and name.id in module.assignments
            and (host is None or name.id not in host.params)
        ):
            return _max(self._sub(v, module, depth) for v in module.assignments[name.id])
        # A parameter nobody in this module passes: its name is the only evidence left.
        if "core" in name.id.lower() or name.id.lower() in _CORE_KEYS:
            return Quantity(Role.CORES, f"`{name.id}`, the core count")
        if is_head_name(name.id) or is_model_dimension(name.id):
            return Quantity(Role.MODEL, f"`{name.id}`, a model dimension")
        if is_sequence_length(name.id) or is_token_count(name.id):
            return Quantity(Role.LENGTH, f"`{name.id}`, a token or sequence count")
        return Quantity(Role.UNKNOWN, name.id)

    def _call_quantity(
        self: KernelIndex,
        call: ast.Call,
        host: HostFunction | None,
        hint: str,
        depth: int,
        shown: str,
    ) -> Quantity:
        name = call_name(call.func) or ""
        method_of = call.func.value if isinstance(call.func, ast.Attribute) else None
        if name in _CEIL_DIV and len(call.args) == 2:
            return self._divided(call.args[0], call.args[1], host, depth, hint)
        if name == "ceil" and call.args:  # math.ceil(n / BLOCK)
            return self._sub(call.args[0], host, depth, hint)
        if name in _POWER_OF_TWO:
            return Quantity(Role.BUCKETED, f"`{shown}`, a power of two")
        if _is_core_count_call(call):
            return Quantity(Role.CORES, f"`{shown}`, the core count")
        if name == "min" and isinstance(call.func, ast.Name):
            parts = [self._sub(a, host, depth, hint) for a in call.args]
            for wanted in (Role.CORES, Role.LITERAL, Role.MODEL):
                capped = [q for q in parts if q.role == wanted]
                if capped:
                    return capped[0]
            return _max(parts)
        if name in ("max", "int", "abs", "round") and isinstance(call.func, ast.Name):
            parts = [self._sub(a, host, depth, hint) for a in call.args]
            varying = [q for q in parts if q.role != Role.LITERAL]
            return _max(varying or parts)
        if name == "len" and isinstance(call.func, ast.Name):
            return Quantity(Role.BATCH, f"`{shown}`, the length of a host sequence")
        if method_of is not None and name in ("numel", "nelement"):
            return Quantity(Role.LENGTH, f"`{shown}`, an element count")
        if method_of is not None and name == "item":
            return Quantity(Role.LENGTH, f"`{shown}`, a value read from a tensor")
        if method_of is not None and name == "size" and len(call.args) == 1:
            return self._dimension(method_of, call.args[0], host, hint, shown)
        helper = self.host_by_name.get(name) if not isinstance(call.func, ast.Attribute) else None
        if helper is not None and helper.returns and helper is not host:
            return _max(
                self._sub(v, helper, depth)
                for ret in helper.returns
                for v, _ in self.host_values(ret.value, helper)
            )
        return Quantity(Role.UNKNOWN, shown)

    def _dimension(
        self: KernelIndex,
        tensor: ast.AST,
        dim: ast.AST,
        host: HostFunction | None,
        hint: str,
        shown: str,
    ) -> Quantity:
        """`x.shape[k]` / `x.size(k)`."""
        index = dim.value if isinstance(dim, ast.Constant) else None
        if isinstance(dim, ast.UnaryOp) and isinstance(dim.operand, ast.Constant):
            index = -dim.operand.value
        if not isinstance(index, int):
            return Quantity(Role.UNKNOWN, shown)
        rank = self._rank(tensor, host)
        return self._dimension_role(tensor, index, rank, host, hint, f"`{shown}`")

    def _unpacked_dimension(
        self: KernelIndex, element: TupleElement, host: HostFunction | None, hint: str
    ) -> Quantity:
        """`B, T, H, K = x.shape`: element `index` of `width`."""
        shape = element.value
        if not (isinstance(shape, ast.Attribute) and shape.attr == "shape"):
            return Quantity(Role.UNKNOWN, hint)
        shown = f"`{hint}` (dimension {element.index} of `{show(shape)}`)"
        return self._dimension_role(shape.value, element.index, element.width, host, hint, shown)

    def _dimension_role(
        self: KernelIndex,
        tensor: ast.AST,
        index: int,
        rank: int | None,
        host: HostFunction | None,
        hint: str,
        shown: str,
    ) -> Quantity:
        if index == -1 or (rank is not None and index == rank - 1):
            return Quantity(Role.MODEL, f"{shown}, the innermost dimension")
        if isinstance(tensor, ast.Name) and is_parameter_tensor(tensor.id):
            return Quantity(Role.MODEL, f"{shown}, a size of a learned parameter")
        if index == 0:
            if self._flattened(tensor, host):
                return Quantity(Role.LENGTH, f"{shown}, the rows of a flattened view")
            if hint and (is_sequence_length(hint) or is_token_count(hint)):
                return Quantity(Role.LENGTH, f"{shown}, a token or sequence count")
            if hint and is_model_dimension(hint):
                return Quantity(Role.MODEL, f"{shown}, a model dimension")
            return Quantity(Role.BATCH, f"{shown}, the leading dimension")
        if hint and (is_head_name(hint) or is_model_dimension(hint)):
            return Quantity(Role.MODEL, f"{shown}, a model dimension")
        if hint and is_batch_name(hint):
            return Quantity(Role.BATCH, f"{shown}, a batch size")
        if rank is None:
            rank = self.min_rank(tensor, host)
        if rank is not None and index < rank - 1:
            return Quantity(Role.LENGTH, f"{shown}, a sequence dimension")
        if hint and is_sequence_length(hint):
            return Quantity(Role.LENGTH, f"{shown}, a sequence dimension")
        return Quantity(Role.UNKNOWN, shown)

    def _flattened(self: KernelIndex, tensor: ast.AST, host: HostFunction | None) -> bool:
        """`x.view(-1, D)`, `x.reshape(-1, x.shape[-1])`, `x.flatten(0, -2)`."""
        for value, _ in self.host_values(tensor, host):
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
                continue
            if value.func.attr == "flatten":
                return True
            if value.func.attr in _RESHAPES and value.args:
                first = value.args[0]
                if isinstance(first, (ast.Tuple, ast.List)) and first.elts:
                    first = first.elts[0]
                if isinstance(first, ast.UnaryOp) and isinstance(first.operand, ast.Constant):
                    return True
        return False

    # -- grids -------------------------------------------------------------------------
    def grid_axes(
        self: KernelIndex, launch: ast.Call, host: HostFunction | None
    ) -> list[list[ast.AST]]:
        """The axes of each grid a launch can use: `kernel[(a, b)]`, `grid = (a,)`,
        `grid = lambda meta: (...)`, a local `def grid(meta): return (...)`."""
        grid = launch.func.slice if isinstance(launch.func, ast.Subscript) else None
        if grid is None:
            return []
        out: list[list[ast.AST]] = []
        for value, _ in self.host_values(grid, host) if host is not None else [(grid, ())]:
            out += self._axes_of(value, host, 0)
        return out

    def _axes_of(
        self: KernelIndex, value: ast.AST, host: HostFunction | None, depth: int
    ) -> list[list[ast.AST]]:
        if depth > MAX_HELPER_DEPTH:
            return []
        if isinstance(value, (ast.Tuple, ast.List)):
            return [list(value.elts)]
        if isinstance(value, ast.Lambda):
            return self._axes_of(value.body, host, depth + 1)
        if isinstance(value, ast.IfExp):
            return self._axes_of(value.body, host, depth + 1) + self._axes_of(
                value.orelse, host, depth + 1
            )
        if isinstance(value, ast.Name):
            fn = self.host_by_name.get(value.id)
            if fn is not None and fn.returns:
                return [
                    axes for ret in fn.returns for axes in self._axes_of(ret.value, fn, depth + 1)
                ]
        return [[value]]

    def has_task_loop(self: KernelIndex, fn: JitFunction) -> bool:
        """Does the kernel loop over tasks itself (`range(pid, n, tl.num_programs(0))`,
        a loop whose bounds or step read the program count)?"""
        cached = self._task_loop_cache.get(id(fn))
        if cached is not None:
            return cached
        programs = f"{LANGUAGE}.num_programs"
        program_counts = {id(stmt) for _call, stmt in self.calls_in(fn, programs)}
        found = False
        # A kernel that never asks for the program count has no loop that reads it.
        counts = self.assigned_from(fn, programs) if program_counts else set()
        for stmt in fn.statements if program_counts else ():
            if isinstance(stmt, ast.For):
                header: ast.AST = stmt.iter
            elif isinstance(stmt, ast.While):
                header = stmt.test
            else:
                continue
            # calls in a loop header are held by the loop statement
            if id(stmt) in program_counts or names_in(header) & counts:
                found = True
                break
        self._task_loop_cache[id(fn)] = found
        return found
