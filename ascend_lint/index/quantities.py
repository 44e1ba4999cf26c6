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
* `BOOLEAN`  a flag: a comparison, `not`, `bool(...)`, `True`/`False`, an `is_*` name;
* `UNKNOWN`  nothing shows what it is.

Grid-limit caps (`min(n, 65535)`, a literal cap far above any core count) bound a value
only where the launch would fail anyway: the value keeps its role and the cap is named
in its evidence. Core caps (`min(n, C)` with `C` a core count, in any spelling) make it
`CORES`.

The grids of a launch (`grid_axes`) are known here too, for the grid rules that ask what
each axis counts (whether a kernel loops over its tasks itself is `coverage`'s).

Depends on: the core facts (host functions, the calls in a kernel), `host` (what a
name holds) and `strides` (the rank of a tensor, for `x.shape[k]`). Nothing else of
the index depends on this object.

Cost: one walk of each expression, memoised per (expression, host function, name);
names are followed through `host_values` (depth-bounded, cycles cut).
"""

from __future__ import annotations

import ast
import enum
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.launches import HostFunction, TupleElement, argument_for
from ascend_lint.index.naming import (
    is_batch_name,
    is_cache_tensor,
    is_head_name,
    is_model_dimension,
    is_parameter_tensor,
    is_sequence_length,
    is_token_count,
)
from ascend_lint.index.strides import StrideFacts
from ascend_lint.index.syntax import (
    MAX_HELPER_DEPTH,
    call_name,
    expr_key,
    factors,
    int_literal,
    property_key,
    show,
)


class Role(enum.IntEnum):
    """Ordered by how much a value can vary: a sum or product takes its operands' largest."""

    LITERAL = 0
    BOOLEAN = 1
    MODEL = 2
    CORES = 3
    BUCKETED = 4
    UNKNOWN = 5
    BATCH = 6
    LENGTH = 7

    @property
    def per_call(self) -> bool:
        return self in (Role.BATCH, Role.LENGTH)


@dataclass(frozen=True)
class Quantity:
    role: Role
    why: str  # the evidence, for messages: "`x.numel()`, an element count"
    cap: int | None = None  # a literal upper bound far above the cores (`min(n, 65535)`)


# Device properties triton-ascend reports, and the GPU ones persistent kernels cap with.
_CORE_KEYS = frozenset(
    {"num_aicore", "num_vectorcore", "multiprocessor_count", "num_sm", "num_sms"}
)
_RESHAPES = frozenset({"view", "reshape"})
_CEIL_DIV = frozenset({"cdiv", "ceil_div", "ceildiv", "div_up", "round_up"})
_POWER_OF_TWO = frozenset({"next_power_of_2", "next_power_of_two"})
_PRODUCTS = frozenset({"prod", "product"})  # math.prod, numpy.prod
# A literal cap at least this large bounds a grid only at triton-ascend's grid limit
# (65,535 programs), far above any core count: it is no cap to the cores.
_GRID_LIMIT_CAP = 4096
# Flags by name, where the value itself is not shown: `IS_VARLEN`, `has_bias`, `use_fp8`.
_FLAG_PREFIXES = (
    "is_",
    "has_",
    "use_",
    "enable_",
    "with_",
    "do_",
    "need_",
    "apply_",
    "return_",
)


def is_flag_name(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith(_FLAG_PREFIXES) or lowered in ("training", "causal", "reverse")


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
    counts_cores = (
        "core" in name or "multiprocessor" in name or name.endswith(("sm_count", "num_sms"))
    )
    return counts_cores and not name.startswith("set")


def _core_key(node: ast.AST) -> bool:
    """`props["num_vectorcore"]`, `props.num_aicore`, `get_device_properties()[0]`,
    `props.get("num_vectorcore", 40)`, `getattr(props, "num_aicore")`."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.value, ast.Call)
        and "device_properties" in (call_name(node.value.func) or "")
    ):
        return True
    if isinstance(node, ast.Attribute) and node.attr == "multi_processor_count":
        return True
    key = property_key(node)
    return isinstance(key, str) and key in _CORE_KEYS


def _shape_of(node: ast.AST) -> ast.AST | None:
    """The tensor of `x.shape` / `x.size()`."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and not node.args
    ):
        return node.func.value
    return None


def _shape_slice(node: ast.AST) -> tuple[ast.AST, int | None, int | None] | None:
    """`x.shape[a:b]` -> (x, a, b); `x.shape` -> (x, None, None). None when the bounds
    are not literals."""
    tensor = _shape_of(node)
    if tensor is not None:
        return tensor, None, None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        tensor = _shape_of(node.value)
        bounds = node.slice
        if tensor is None or bounds.step is not None:
            return None
        start, stop = int_literal(bounds.lower), int_literal(bounds.upper)
        if (bounds.lower is not None and start is None) or (
            bounds.upper is not None and stop is None
        ):
            return None
        return tensor, start, stop
    return None


def _outer_dimension(value: ast.AST) -> tuple[str, int] | None:
    """(tensor, dimension) for a dimension that is not the innermost one: `s` of
    `s, b, v = x.shape`, `x.shape[0]`, `x.size(1)`."""
    if isinstance(value, TupleElement):
        sliced = _shape_slice(value.value)
        if sliced is None:
            return None
        tensor, start, stop = sliced
        if value.width is None or value.index < 0:
            index = value.index if (start or 0) >= 0 else None
        else:
            index = (start or 0) + value.index
            innermost = stop is None and value.index == value.width - 1
            if innermost or index < 0:
                return None
        return (show(tensor), index) if index is not None and index >= 0 else None
    if isinstance(value, ast.Subscript) and _shape_of(value.value) is not None:
        index = int_literal(value.slice)
        if index is not None and index >= 0:
            return show(_shape_of(value.value)), index
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "size"
        and len(value.args) == 1
    ):
        index = int_literal(value.args[0])
        if index is not None and index >= 0:
            return show(value.func.value), index
    return None


def _remaining_dimensions(count: ast.AST, divisor: ast.AST, host_values, host) -> bool:
    """`x.numel() // (B * S)` with `B, S = x.shape[:2]`: the size of the dimensions left
    after the outer ones, a feature size rather than a count of anything."""
    if not (
        isinstance(count, ast.Call)
        and isinstance(count.func, ast.Attribute)
        and count.func.attr in ("numel", "nelement")
    ):
        return False
    tensor = show(count.func.value)
    for factor in factors(divisor):
        values = host_values(factor, host) if host is not None else [(factor, ())]
        found = [_outer_dimension(v) for v, _ in values]
        if not found or any(f is None or f[0] != tensor for f in found):
            return False
    return True


def _ceil_division(expr: ast.BinOp) -> tuple[ast.AST, ast.AST] | None:
    """`(n + B - 1) // B` -> (n, B): a ceiling division spelled out."""
    if isinstance(expr.op, ast.FloorDiv) and isinstance(expr.left, ast.BinOp):
        left = expr.left
        if isinstance(left.op, ast.Sub) and isinstance(left.left, ast.BinOp):
            inner = left.left
            if (
                isinstance(inner.op, ast.Add)
                and int_literal(left.right) == 1
                and expr_key(inner.right) == expr_key(expr.right)
            ):
                return inner.left, expr.right
    return None


def _product_operand(call: ast.Call, name: str) -> ast.AST | None:
    """The sequence multiplied out by `math.prod(s)`, `numpy.prod(s)`,
    `functools.reduce(operator.mul, s[, 1])` or `reduce(lambda a, b: a * b, s)`."""
    if name in _PRODUCTS and len(call.args) == 1:
        return call.args[0]
    if name == "reduce" and len(call.args) in (2, 3):
        op = call.args[0]
        multiplies = (call_name(op) or "") in ("mul", "__mul__") or (
            isinstance(op, ast.Lambda)
            and isinstance(op.body, ast.BinOp)
            and isinstance(op.body.op, ast.Mult)
        )
        return call.args[1] if multiplies else None
    return None


# A value's form: what it is computed from, with the names followed to what they hold,
# so that two spellings of one value compare equal (`n_cols` and `x.shape[1]` after
# `n_rows, n_cols = x.shape`; `_block(n)` and `next_power_of_2(n)` through the helper).
# Nested tuples: ("const", v), ("dim", tensor, k), ("call", name, args...),
# ("op", operator, left, right), ("ceil", count, divisor), ("floor", count, divisor),
# ("name", id) for what is not followed further, ("expr", dump) for the rest.
Form = tuple
# At most this many forms per value (branches multiply): beyond it, none is trusted.
_MAX_FORMS = 8


def _combine(parts: list[frozenset[Form]], build) -> frozenset[Form]:
    """`build` over every choice of one form per part (at most `_MAX_FORMS` of them)."""
    out: set[Form] = set()
    for chosen in itertools.product(*parts):
        if len(out) > _MAX_FORMS:
            break
        out.add(build(*chosen))
    return frozenset(out)


def power_of_two_operand(form: Form) -> Form | None:
    """`next_power_of_2(E)` (also `max(next_power_of_2(E), 16)`) -> E: a value at
    least as large as E on every path."""
    if form[0] == "call" and form[1] in _POWER_OF_TWO and len(form) == 3:
        return form[2]
    if form[0] == "call" and form[1] == "max":
        inner = [power_of_two_operand(a) for a in form[2:]]
        rounded = [i for i in inner if i is not None]
        others = [a for a, i in zip(form[2:], inner) if i is None]
        if len(rounded) == 1 and all(a[0] == "const" for a in others):
            return rounded[0]
    return None


def as_min_or_max(expr: ast.IfExp) -> tuple[str, list[ast.AST]] | None:
    """`a if a < b else b` -> ('min', [a, b]); `a if a > b else b` -> ('max', [a, b]);
    any order of the comparison's sides. None for other conditionals."""
    test = expr.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op = test.ops[0]
    if not isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        return None
    left, right = expr_key(test.left), expr_key(test.comparators[0])
    body, orelse = expr_key(expr.body), expr_key(expr.orelse)
    if (body, orelse) == (left, right):
        smaller_first = True  # `a if a < b else b`
    elif (body, orelse) == (right, left):
        smaller_first = False  # `b if a < b else a`
    else:
        return None
    less = isinstance(op, (ast.Lt, ast.LtE))
    return ("min" if less == smaller_first else "max"), [expr.body, expr.orelse]


class QuantityFacts:
    """What host values count, and the grids of launches (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts, strides: StrideFacts):
        self._core = core
        self._module = core.hosts[0]
        self._visible_function = core.visible_function
        self._visible_functions = core.visible_functions
        self._host_values = host.host_values
        self._rank = strides.rank
        self._min_rank = strides.min_rank
        self._quantity_cache: dict[tuple[int, int, str, str | None], Quantity] = {}
        self._forms_cache: dict[tuple[int, int], frozenset[Form]] = {}
        # how the kernel that receives the value being judged uses it (see `of`)
        self._use: str | None = None

    def of(
        self,
        expr: ast.AST,
        host: HostFunction | None,
        receiver: str = "",
        use: str | None = None,
    ) -> list[Quantity]:
        """One quantity per value `expr` can hold (branches of the host, callers).
        `receiver` names the kernel parameter that takes the value: where the host
        passes a bare dimension (`k.shape[1]`), its name is the last evidence left, and
        a parameter named as a flag (`HAS_TOKENS`, `RETURN_*`) takes two values,
        whatever its value's name says. `use` is how the receiving kernel uses the
        value (`coverage.dimension_use`): "time" where it walks it as the time axis,
        "unrolled" where it unrolls a loop over it and only indexes with it; it
        outweighs the position of a dimension in its tensor."""
        if receiver and is_flag_name(receiver):
            return [Quantity(Role.BOOLEAN, f"`{receiver}`, a flag")]
        self._use = use
        try:
            if host is None:
                return [self._quantity(expr, None, receiver, 0)]
            out = []
            for value, _guards in self._host_values(expr, host):
                hint = expr.id if isinstance(expr, ast.Name) else receiver
                out.append(self._quantity(value, host, hint, 0))
            return out
        finally:
            self._use = None

    def _quantity(
        self, expr: ast.AST, host: HostFunction | None, hint: str, depth: int
    ) -> Quantity:
        key = (id(expr), id(host), hint, self._use)
        cached = self._quantity_cache.get(key)
        if cached is None:
            self._quantity_cache[key] = Quantity(Role.UNKNOWN, _Source(expr))  # cycles
            cached = self._quantity_cache[key] = self._compute_quantity(expr, host, hint, depth)
        return cached

    def _sub(
        self, expr: ast.AST, host: HostFunction | None, depth: int, hint: str = ""
    ) -> Quantity:
        """The largest role over the values a sub-expression can hold. `hint` is the name
        the enclosing value is stored under (`kv_group_num = q.shape[1] // k.shape[1]`)."""
        if depth > 2 * MAX_HELPER_DEPTH:
            return Quantity(Role.UNKNOWN, _Source(expr))
        if isinstance(expr, ast.Name) and host is not None:
            values = self._host_values(expr, host)
            if values != [(expr, ())]:
                return _max(self._quantity(v, host, expr.id, depth + 1) for v, _ in values)
        return self._quantity(expr, host, hint, depth + 1)

    def _compute_quantity(
        self, expr: ast.AST, host: HostFunction | None, hint: str, depth: int
    ) -> Quantity:
        shown = _Source(expr)
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, bool):
                return Quantity(Role.BOOLEAN, f"`{shown}`, a flag")
            return Quantity(Role.LITERAL, shown)
        if isinstance(expr, (ast.Compare, ast.BoolOp)) or (
            isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)
        ):
            return Quantity(Role.BOOLEAN, f"`{shown}`, a flag")
        if isinstance(expr, ast.Name):
            return self._name_quantity(expr, host, depth)
        if isinstance(expr, TupleElement):
            return self._unpacked_dimension(expr, host, expr.name or hint or str(shown))
        if _core_key(expr):
            return Quantity(Role.CORES, f"`{shown}`, the core count")
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute):
            if expr.value.attr == "shape":
                return self._dimension(expr.value.value, expr.slice, host, hint, shown)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            stored = self.attribute_values(expr.value.id, expr.attr, host)
            if stored:
                return _max(self._sub(v, h, depth, expr.attr) for v, h in stored)
            return self._name_quantity(ast.Name(expr.attr), None, depth, f"`{shown}`")
        if isinstance(expr, ast.UnaryOp):
            return self._sub(expr.operand, host, depth, hint)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, (ast.FloorDiv, ast.Div, ast.Mod, ast.RShift)):
                return self._divided(expr.left, expr.right, host, depth, hint)
            if isinstance(expr.op, ast.Mult):
                rows = self._leading_dimensions_product(expr, host)
                if rows is not None:
                    return rows
            return _max(
                (self._sub(expr.left, host, depth, hint), self._sub(expr.right, host, depth, hint))
            )
        if isinstance(expr, ast.IfExp):
            chosen = as_min_or_max(expr)
            if chosen is not None:
                # `n if n < 65535 else 65535` is `min(n, 65535)`, with the same cap
                which, operands = chosen
                if which == "min":
                    return self._min_quantity(operands, host, depth, hint)
                return self._max_quantity(operands, host, depth, hint)
            sides = (
                self._sub(expr.body, host, depth, hint),
                self._sub(expr.orelse, host, depth, hint),
            )
            cores = [q for q in sides if q.role == Role.CORES]
            return cores[0] if cores else _max(sides)  # `n if c else CORES`: a cap
        if isinstance(expr, ast.Call):
            return self._call_quantity(expr, host, hint, depth, shown)
        return Quantity(Role.UNKNOWN, shown)

    def _divided(
        self,
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
                for v, _ in self._host_values(divisor, host)
            ]
            if isinstance(divisor, ast.Name) and host is not None
            else [self._sub(divisor, host, depth)]
        )
        if any(q.role == Role.CORES for q in divisors):
            return Quantity(Role.UNKNOWN, f"`{show(count)}` shared over the cores")
        limit = self._literal_int(divisor, host)
        if limit is not None and limit >= _GRID_LIMIT_CAP * 8:
            return Quantity(Role.BUCKETED, f"`{show(count)}` in chunks of the grid limit")
        numerator = self._sub(count, host, depth, hint)
        if _remaining_dimensions(count, divisor, self._host_values, host):
            return Quantity(Role.UNKNOWN, f"`{show(count)}` per row of its outer dimensions")
        if any(q.role.per_call for q in divisors):
            # n / f(n): blocks sized from a count stay about as many as chosen, but the
            # ratio still changes from call to call (tokens per sequence).
            if numerator.role.per_call:
                return Quantity(
                    Role.BATCH,
                    f"`{show(count)}` over `{show(divisor)}`, a ratio of per-call counts",
                )
            return Quantity(Role.UNKNOWN, f"`{show(count)}` in blocks sized from a count")
        return numerator

    def _literal_int(self, expr: ast.AST, host: HostFunction | None) -> int | None:
        """The integer `expr` always is: a literal, or a name every assignment of which
        (local or module-level) is that same literal."""
        values = self._host_values(expr, host) if host is not None else [(expr, ())]
        found: set[int] = set()
        for value, _ in values:
            if isinstance(value, ast.Name) and value.id in self._module.assignments:
                inner = self._module.assignments[value.id]
                value = inner[0] if len(inner) == 1 else value
            if not (isinstance(value, ast.Constant) and type(value.value) is int):
                return None
            found.add(value.value)
        return found.pop() if len(found) == 1 else None

    def _name_quantity(
        self,
        name: ast.Name,
        host: HostFunction | None,
        depth: int,
        label: str | None = None,
    ) -> Quantity:
        module = self._module
        if (
            label is None
            and host is not module
            and name.id in module.assignments
            and (host is None or name.id not in host.params)
        ):
            return _max(self._sub(v, module, depth) for v in module.assignments[name.id])
        # A parameter nobody in this module passes: its name is the only evidence left.
        label = label or f"`{name.id}`"
        if is_flag_name(name.id):
            return Quantity(Role.BOOLEAN, f"{label}, a flag")
        if "core" in name.id.lower() or name.id.lower() in _CORE_KEYS:
            return Quantity(Role.CORES, f"{label}, the core count")
        if is_head_name(name.id) or is_model_dimension(name.id):
            return Quantity(Role.MODEL, f"{label}, a model dimension")
        if is_sequence_length(name.id) or is_token_count(name.id):
            return Quantity(Role.LENGTH, f"{label}, a token or sequence count")
        return Quantity(Role.UNKNOWN, label.strip("`"))

    # -- which values are the same --------------------------------------------------
    def value_forms(self, expr: ast.AST, host: HostFunction | None) -> frozenset[Form]:
        """The forms `expr` can have where `host` evaluates it (one per path, and one
        per spelling of a dimension: `x.shape[1]` is also `x.shape[-1]` of a 2-D `x`).
        Two values are the same where their forms meet. Empty where too many."""
        return self._forms(expr, host, {}, 0)

    def _forms(
        self, expr: ast.AST, host: HostFunction | None, env: dict, depth: int
    ) -> frozenset[Form]:
        key = (id(expr), id(host))
        if not env:
            cached = self._forms_cache.get(key)
            if cached is not None:
                return cached
            self._forms_cache[key] = frozenset({("expr", id(expr))})  # a cycle: itself
        found = self._compute_forms(expr, host, env, depth)
        if len(found) > _MAX_FORMS:
            found = frozenset()
        if not env:
            self._forms_cache[key] = found
        return found

    def _compute_forms(
        self, expr: ast.AST, host: HostFunction | None, env: dict, depth: int
    ) -> frozenset[Form]:
        if depth > 2 * MAX_HELPER_DEPTH:
            return frozenset({("expr", expr_key(expr))})
        sub = lambda e, h=host, en=env: self._forms(e, h, en, depth + 1)  # noqa: E731
        if isinstance(expr, ast.Constant):
            return frozenset({("const", expr.value)})
        if isinstance(expr, ast.Name):
            return self._name_forms(expr, host, env, depth)
        if isinstance(expr, TupleElement):
            sliced = _shape_slice(expr.value)
            if sliced is not None and sliced[1] is None and sliced[2] is None:
                tensor = sliced[0]
                width = None if expr.index < 0 else expr.width
                return self._dimension_forms(sub(tensor), expr.index, width)
            return frozenset({("expr", id(expr))})
        if isinstance(expr, ast.Subscript) and _shape_of(expr.value) is not None:
            index = int_literal(expr.slice)
            if index is not None:
                tensor = _shape_of(expr.value)
                return self._dimension_forms(sub(tensor), index, self._rank(tensor, host))
        if isinstance(expr, ast.IfExp):
            chosen = as_min_or_max(expr)
            if chosen is not None:
                parts = [sub(a) for a in chosen[1]]
                return _combine(parts, lambda *a, f=chosen[0]: ("call", f, *sorted(a, key=repr)))
            return sub(expr.body) | sub(expr.orelse)
        if isinstance(expr, ast.BinOp):
            divided = _ceil_division(expr)
            if divided is not None:
                return _combine([sub(divided[0]), sub(divided[1])], lambda a, b: ("ceil", a, b))
            op = type(expr.op).__name__
            kind = "floor" if isinstance(expr.op, ast.FloorDiv) else None
            if kind is not None:
                return _combine([sub(expr.left), sub(expr.right)], lambda a, b: ("floor", a, b))
            return _combine([sub(expr.left), sub(expr.right)], lambda a, b: ("op", op, a, b))
        if isinstance(expr, ast.Call):
            name = call_name(expr.func) or ""
            method_of = expr.func.value if isinstance(expr.func, ast.Attribute) else None
            if method_of is not None and name == "size" and len(expr.args) == 1:
                index = int_literal(expr.args[0])
                if index is not None:
                    return self._dimension_forms(sub(method_of), index, self._rank(method_of, host))
            if name in _CEIL_DIV and len(expr.args) == 2:
                return _combine([sub(a) for a in expr.args], lambda a, b: ("ceil", a, b))
            helper = self._visible_function(name, host) if method_of is None else None
            if helper is not None and helper is not host and helper.returns:
                bound = {
                    param: (arg, host, env)
                    for position, param in enumerate(helper.params)
                    if (arg := argument_for(expr, param, position)) is not None
                }
                return frozenset().union(
                    *(self._forms(r.value, helper, bound, depth + 1) for r in helper.returns)
                )
            if method_of is None or name in _POWER_OF_TWO or name in _CEIL_DIV:
                parts = [sub(a) for a in expr.args]
                return _combine(parts, lambda *a, f=name: ("call", f, *a))
        return frozenset({("expr", expr_key(expr))})

    def _name_forms(
        self, name: ast.Name, host: HostFunction | None, env: dict, depth: int
    ) -> frozenset[Form]:
        if name.id in env:
            arg, caller, caller_env = env[name.id]
            return self._forms(arg, caller, caller_env, depth + 1)
        if host is None:
            return frozenset({("name", name.id)})
        if name.id in host.assignments:
            return frozenset().union(
                *(self._forms(v, host, env, depth + 1) for v in host.assignments[name.id])
            )
        if name.id in host.params:
            position = host.params.index(name.id)
            passed = [
                (arg, caller)
                for call, caller in self._core.calls_to(host)
                if (arg := argument_for(call, name.id, position)) is not None
            ]
            if passed:
                return frozenset().union(
                    *(self._forms(arg, caller, {}, depth + 1) for arg, caller in passed)
                )
            return frozenset({("name", name.id, id(host))})
        if host is not self._module and name.id in self._module.assignments:
            return self._forms(name, self._module, {}, depth + 1)
        return frozenset({("name", name.id)})

    @staticmethod
    def _dimension_forms(tensors: frozenset[Form], index: int, rank: int | None) -> frozenset[Form]:
        """Dimension `index` of a tensor, also counted from the other end where the
        rank is known."""
        indices = {index}
        if rank is not None:
            indices.add(index - rank if index >= 0 else index + rank)
        return frozenset(("dim", t, i) for t in tensors for i in indices)

    def same_value(
        self, a: ast.AST, host_a: HostFunction | None, b: ast.AST, host_b: HostFunction | None
    ) -> bool:
        """Do `a` and `b` hold the same value on every path shown (their forms meet)?"""
        forms = self.value_forms(a, host_a)
        return bool(forms) and bool(forms & self.value_forms(b, host_b))

    def attribute_values(
        self, owner: str, attr: str, host: HostFunction | None
    ) -> list[tuple[ast.AST, HostFunction]]:
        """What `owner.attr` can hold where `host` reads it: the values stored by
        `owner.attr = value` in `host` itself, else in any function of the module (an
        autograd `forward` keeping `ctx.M` for `backward`, `__init__` setting `self.n`)."""
        if host is not None and (owner, attr) in host.attribute_assignments:
            return [(v, host) for v in host.attribute_assignments[(owner, attr)]]
        return [
            (v, other)
            for other in self._core.hosts
            for v in other.attribute_assignments.get((owner, attr), ())
        ]

    def _leading_dimensions_product(
        self, product: ast.BinOp, host: HostFunction | None
    ) -> Quantity | None:
        """`s * b` with `s, b, v = logits.shape`, `x.shape[0] * x.shape[1]`: two or more
        outer dimensions of one tensor multiplied are the rows of its flattened view, a
        count of tokens whatever the names say (a `[seq, batch, vocab]` launcher's rows)."""
        operands = factors(product)
        dims: dict[str, set[int]] = {}
        for factor in operands:
            values = self._host_values(factor, host) if host is not None else [(factor, ())]
            if len(values) != 1:
                continue
            found = _outer_dimension(values[0][0])
            if found is not None:
                dims.setdefault(found[0], set()).add(found[1])
        for tensor, indices in dims.items():
            # From the leading dimension on without a gap (`B * T` of `[B, T, H, D]`, not
            # `B * H`), and none of them a head count by the only evidence left, its name.
            if len(indices) >= 2 and indices == set(range(len(indices))):
                if any(
                    isinstance(f, ast.Name) and (is_head_name(f.id) or is_model_dimension(f.id))
                    for f in operands
                ):
                    continue
                return Quantity(Role.LENGTH, f"`{show(product)}`, the rows of `{tensor}` flattened")
        return None

    def _call_quantity(
        self,
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
        if name == "bool" or name == "isinstance":
            return Quantity(Role.BOOLEAN, f"`{shown}`, a flag")
        factors = _product_operand(call, name)
        if factors is not None:
            return self._shape_product(factors, host, depth, hint, shown)
        if _is_core_count_call(call):
            return Quantity(Role.CORES, f"`{shown}`, the core count")
        if name == "min" and isinstance(call.func, ast.Name):
            return self._min_quantity(call.args, host, depth, hint)
        if name in ("max", "int", "abs", "round") and isinstance(call.func, ast.Name):
            return self._max_quantity(call.args, host, depth, hint)
        if name == "len" and isinstance(call.func, ast.Name):
            return Quantity(Role.BATCH, f"`{shown}`, the length of a host sequence")
        if method_of is not None and name in ("numel", "nelement"):
            return Quantity(Role.LENGTH, f"`{shown}`, an element count")
        if method_of is not None and name == "item":
            return Quantity(Role.LENGTH, f"`{shown}`, a value read from a tensor")
        if method_of is not None and name == "size" and len(call.args) == 1:
            return self._dimension(method_of, call.args[0], host, hint, shown)
        helper = (
            self._visible_function(name, host) if not isinstance(call.func, ast.Attribute) else None
        )
        if helper is not None and helper.returns and helper is not host:
            return _max(
                self._sub(v, helper, depth)
                for ret in helper.returns
                for v, _ in self._host_values(ret.value, helper)
            )
        return Quantity(Role.UNKNOWN, shown)

    def _min_quantity(
        self, operands: list[ast.AST], host: HostFunction | None, depth: int, hint: str
    ) -> Quantity:
        """`min(a, b, ...)`: a core count caps it to the cores; a small literal or model
        constant bounds it; a literal at the grid limit only caps it (`cap`)."""
        parts = [self._sub(a, host, depth, hint) for a in operands]
        cores = [q for q in parts if q.role == Role.CORES]
        if cores:
            return cores[0]
        limits = [self._literal_int(a, host) for a in operands]
        small = [
            q
            for q, limit in zip(parts, limits)
            if q.role in (Role.LITERAL, Role.MODEL) and (limit is None or limit < _GRID_LIMIT_CAP)
        ]
        if small:
            return small[0]
        grown = _max(q for q, limit in zip(parts, limits) if limit is None)
        caps = [limit for limit in limits if limit is not None]
        if caps and grown.role == Role.LENGTH:
            return Quantity(grown.role, f"{grown.why}, capped only at {min(caps):,}", min(caps))
        if caps and grown.role in (Role.UNKNOWN, Role.BUCKETED, Role.BATCH):
            # Capping at the grid limit says the launcher expects the value past it: a
            # count of the problem's size, whatever else shows what it counts.
            shown = str(grown.why) if str(grown.why).startswith("`") else f"`{grown.why}`"
            return Quantity(
                Role.LENGTH,
                f"{shown}, capped only at {min(caps):,}: a count that outgrows the grid",
                min(caps),
            )
        return _max(parts)

    def _max_quantity(
        self, operands: list[ast.AST], host: HostFunction | None, depth: int, hint: str
    ) -> Quantity:
        """`max(a, 1)`, `int(a)`: what the operand that is not a literal counts."""
        parts = [self._sub(a, host, depth, hint) for a in operands]
        varying = [q for q in parts if q.role != Role.LITERAL]
        return _max(varying or parts)

    def _shape_product(
        self,
        factors: ast.AST,
        host: HostFunction | None,
        depth: int,
        hint: str,
        shown: str,
    ) -> Quantity:
        """`math.prod(x.shape[:-1])` (the rows of `x` flattened), `prod(x.shape)` (its
        element count), `prod([B, T])` (as `B * T`)."""
        values = self._host_values(factors, host) if host is not None else [(factors, ())]
        out = []
        for value, _ in values:
            if isinstance(value, (ast.List, ast.Tuple)) and value.elts:
                product: ast.AST = value.elts[0]
                for elt in value.elts[1:]:
                    product = ast.BinOp(product, ast.Mult(), elt)
                out.append(self._sub(product, host, depth, hint))
                continue
            sliced = _shape_slice(value)
            if sliced is None:
                out.append(Quantity(Role.UNKNOWN, shown))
                continue
            tensor, start, stop = sliced
            if isinstance(tensor, ast.Name) and is_parameter_tensor(tensor.id):
                out.append(Quantity(Role.MODEL, f"`{shown}`, a size of a learned parameter"))
            elif (start or 0) != 0:
                out.append(Quantity(Role.UNKNOWN, shown))  # trailing dimensions only
            elif stop is None:
                out.append(Quantity(Role.LENGTH, f"`{shown}`, an element count"))
            elif stop == 1:
                out.append(self._dimension_role(tensor, 0, None, host, hint, f"`{shown}`"))
            else:
                out.append(Quantity(Role.LENGTH, f"`{shown}`, the rows of a flattened view"))
        return _max(out)

    def _dimension(
        self,
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
        self, element: TupleElement, host: HostFunction | None, hint: str
    ) -> Quantity:
        """`B, T, H, K = x.shape`: element `index` of `width`; also of a slice
        (`M, N = a.shape[-2:]`) and around a starred name (`B, T, *_ = x.shape`)."""
        sliced = _shape_slice(element.value)
        if sliced is None and element.width is not None and element.index >= 0:
            # `b, s, h, d = ctx.dims` where a `forward` stored `ctx.dims = (b, s, h, d)`,
            # or `dims = (b, s); b, s = dims`: the element of the tuple stored
            stored = (
                self.attribute_values(element.value.value.id, element.value.attr, host)
                if isinstance(element.value, ast.Attribute)
                and isinstance(element.value.value, ast.Name)
                else [(element.value, host)]
            )
            found = [
                self._sub(value.elts[element.index], owner, 1, hint)
                for held, owner in stored
                for value, _ in (
                    self._host_values(held, owner) if owner is not None else [(held, ())]
                )
                if isinstance(value, (ast.Tuple, ast.List))
                and len(value.elts) == element.width
                and not any(isinstance(e, ast.Starred) for e in value.elts)
            ]
            if found:
                return _max(found)
        if sliced is None:
            # `_, cores = get_device_properties()`: where the value is not a shape, the
            # name it is unpacked into is the last evidence left.
            # Only a core count is trusted to a name this way: a count's name is too weak.
            named = self._name_quantity(ast.Name(hint), None, 0, f"`{hint}`") if hint else None
            if named is not None and named.role == Role.CORES:
                return named
            return Quantity(Role.UNKNOWN, hint)
        tensor, start, stop = sliced
        index, rank = element.index, element.width
        if start is not None or stop is not None:
            if element.width is None or element.index < 0:
                return Quantity(Role.UNKNOWN, hint)
            index, rank = (start or 0) + element.index, None
            if stop is None and element.index == element.width - 1:
                index = -1  # the slice runs to the innermost dimension
        shown = f"`{hint}` (dimension {index} of `{show(tensor)}.shape`)"
        return self._dimension_role(tensor, index, rank, host, hint, shown)

    def _dimension_role(
        self,
        tensor: ast.AST,
        index: int,
        rank: int | None,
        host: HostFunction | None,
        hint: str,
        shown: str,
    ) -> Quantity:
        if index == -1 or (rank is not None and index == rank - 1):
            if self._use == "time" and not (
                isinstance(tensor, ast.Name) and is_parameter_tensor(tensor.id)
            ):
                return Quantity(
                    Role.LENGTH,
                    f"{shown}, the innermost dimension, which the kernel walks in tiles "
                    "over the grid while it holds the features whole",
                )
            return Quantity(Role.MODEL, f"{shown}, the innermost dimension")
        if isinstance(tensor, ast.Name) and is_parameter_tensor(tensor.id):
            return Quantity(Role.MODEL, f"{shown}, a size of a learned parameter")
        if index == 0 and isinstance(tensor, ast.Name) and is_cache_tensor(tensor.id):
            # A serving cache or state pool is allocated once: its slots are a constant.
            return Quantity(Role.MODEL, f"{shown}, the slots of a cache")
        if index < 0 and rank is not None:
            index += rank
        if index < 0:
            # Counted from the end: the one before the innermost is a matrix's rows.
            if hint and (is_head_name(hint) or is_model_dimension(hint) or is_flag_name(hint)):
                return Quantity(Role.MODEL, f"{shown}, a model dimension")
            if index == -2:
                return Quantity(Role.LENGTH, f"{shown}, the rows of a matrix")
            return Quantity(Role.UNKNOWN, shown)
        if index == 0:
            if self._flattened(tensor, host):
                return Quantity(Role.LENGTH, f"{shown}, the rows of a flattened view")
            if rank == 2 and not (hint and (is_batch_name(hint) or is_model_dimension(hint))):
                # `[rows, features]`: the leading dimension of a matrix of activations
                # counts its rows (tokens), whatever the launcher calls it.
                return Quantity(Role.LENGTH, f"{shown}, the rows of a 2-D tensor")
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
            rank = self._min_rank(tensor, host)
        if rank is not None and index < rank - 1:
            if self._use == "unrolled":
                # The kernel unrolls a loop over it and never walks or masks it: a
                # count the model fixes (heads, groups), whatever its position.
                return Quantity(Role.UNKNOWN, shown)
            return Quantity(Role.LENGTH, f"{shown}, a sequence dimension")
        if hint and is_sequence_length(hint):
            return Quantity(Role.LENGTH, f"{shown}, a sequence dimension")
        return Quantity(Role.UNKNOWN, shown)

    def _flattened(self, tensor: ast.AST, host: HostFunction | None) -> bool:
        """`x.view(-1, D)`, `x.reshape(-1, x.shape[-1])`, `x.flatten(0, -2)`."""
        for value, _ in self._host_values(tensor, host):
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
    def grid_axes(self, launch: ast.Call, host: HostFunction | None) -> list[list[ast.AST]]:
        """The axes of each grid a launch can use: `kernel[(a, b)]`, `grid = (a,)`,
        `grid = lambda meta: (...)`, a local `def grid(meta): return (...)`. A grid whose
        shape is not shown counts as one axis, the grid expression itself."""
        return [axes for axes, _ranked in self._grid_shapes(launch, host)]

    def grid_shapes(
        self, launch: ast.Call, host: HostFunction | None
    ) -> list[list[ast.AST] | None]:
        """As `grid_axes`, with None for a grid whose rank is not shown (a parameter, a
        starred tuple, a call to an unknown helper): its axes cannot be counted."""
        return [axes if ranked else None for axes, ranked in self._grid_shapes(launch, host)]

    def grid_ranks(self, launch: ast.Call, host: HostFunction | None) -> list[int | None]:
        """The rank of each grid a launch can use (None where not shown), also through a
        grid helper called at the launch (`grid = make_grid(n)`): its returns are in the
        helper's scope, so only their rank is kept, not their axes."""
        return [
            len(axes) if ranked else None
            for axes, ranked in self._grid_shapes(launch, host, through_calls=True)
        ]

    def _grid_shapes(
        self, launch: ast.Call, host: HostFunction | None, through_calls: bool = False
    ) -> list[tuple[list[ast.AST], bool]]:
        """(axes, whether the rank is shown) per grid the launch can use."""
        grid = launch.func.slice if isinstance(launch.func, ast.Subscript) else None
        if grid is None:
            return []
        out: list[tuple[list[ast.AST], bool]] = []
        for value, _ in self._host_values(grid, host) if host is not None else [(grid, ())]:
            helper = self._grid_helper(value, host) if through_calls else None
            if helper is not None:
                out += [
                    shape for ret in helper.returns for shape in self._axes_of(ret.value, helper, 1)
                ]
                continue
            out += self._axes_of(value, host, 0)
        if isinstance(grid, ast.Name) and self._defined_inside(grid.id, host):
            # `grid = (N, T)` on one branch, `def grid(meta)` on another: the
            # assignments alone do not show every rank the launch can use.
            out = [(axes, False) for axes, _ranked in out]
        return out

    def _grid_helper(self, value: ast.AST, host: HostFunction | None) -> HostFunction | None:
        """The module-level function a grid value calls (`make_grid(n)`), when its name is
        defined once and every return is shown."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return None
        name = value.func.id
        visible = self._visible_functions(name, host)
        helper = visible[-1] if len(visible) == 1 else None
        if (
            helper is None
            or helper is host
            or not helper.returns
            or any(r.value is None for r in helper.returns)
            or not any(helper.node is stmt for stmt in self._core.tree.body)
            or (host is not None and name in host.params)
        ):
            return None
        return helper

    def _defined_inside(self, name: str, host: HostFunction | None) -> bool:
        """Is a function called `name` defined in the body of `host`?"""
        if host is None or host is self._module:
            return False
        first, last = host.node.lineno, getattr(host.node, "end_lineno", host.node.lineno)
        return any(
            h.name == name and h is not host and first < h.node.lineno <= last
            for h in self._core.hosts
        )

    def _axes_of(
        self, value: ast.AST, host: HostFunction | None, depth: int
    ) -> list[tuple[list[ast.AST], bool]]:
        if depth > MAX_HELPER_DEPTH:
            return []
        if isinstance(value, (ast.Tuple, ast.List)):
            starred = any(isinstance(e, ast.Starred) for e in value.elts)
            return [(list(value.elts), not starred)]
        if isinstance(value, ast.Lambda):
            return self._axes_of(value.body, host, depth + 1)
        if isinstance(value, ast.IfExp):
            return self._axes_of(value.body, host, depth + 1) + self._axes_of(
                value.orelse, host, depth + 1
            )
        if isinstance(value, ast.Name) and (host is None or value.id not in host.params):
            visible = self._visible_functions(value.id, host)
            if visible and visible[-1].returns:
                # Two functions it can be (one per branch of an `if`): which grid this is
                # is not shown, so neither is the rank.
                unique = len(visible) == 1
                return [
                    (axes, ranked and unique)
                    for ret in visible[-1].returns
                    for axes, ranked in self._axes_of(ret.value, visible[-1], depth + 1)
                ]
        return [([value], False)]
