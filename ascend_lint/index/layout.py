"""Host layout: which kernel parameters receive transposed storage
(`x.transpose(1, 2).contiguous()` inline, through locals or helper returns), and what
the host passes for the `*_T_CONTIG` flags that choose the stride-1 layout, and which
flags a kernel or helper receives and branches on.

Depends on: the core facts (launches, helper calls) and `host` (the values of launch
arguments and of the flags). Nothing else of the index depends on this object.

Costs: the transposed parameters of every kernel in one pass over the launches and at
most `MAX_HELPER_DEPTH` rounds over the helper calls, on first use; the flags of a
function once per function; `flag_selects_fallback_only_for_one_head` follows every
host value of the flag each time it is asked.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import TupleElement
from ascend_lint.index.syntax import MAX_HELPER_DEPTH, names_in
from ascend_lint.index.values import pointer_names

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


def _contig_flag_of(test: ast.AST, flags: set[str]) -> tuple[str, bool] | None:
    """`if G_T_CONTIG:` -> ('G_T_CONTIG', True); `if not G_T_CONTIG:` -> (..., False)."""
    if isinstance(test, ast.Name) and test.id in flags:
        return test.id, True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _contig_flag_of(test.operand, flags)
        if inner:
            return inner[0], not inner[1]
    return None


def _is_contig_flag_name(name: str) -> bool:
    """The documented convention for the flag that selects stride-1 storage."""
    return name.upper().endswith("_CONTIG")


def _named_tensor(flag: str, fn: JitFunction) -> set[str]:
    """`G_T_CONTIG` -> {'g'}, `BETA_T_CONTIG` -> {'beta'}: the tensor a flag is named for."""
    prefix = flag.upper().split("_T_CONTIG")[0].split("_CONTIG")[0].lower()
    return {p for p in fn.params if p.lower() == prefix}


@dataclass(frozen=True)
class ContigBranch:
    """A statement's innermost branch on a stride-1 layout flag."""

    flag: str  # the flag as the launcher passes it (a helper's parameter is followed up)
    contig_side: bool  # True: the side that reads the transposed [B, HV, T] storage
    tensors: frozenset[str]  # the function's parameters stored that way on that side


class LayoutFacts:
    """Transposed storage and stride-1 layout flags (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts):
        self._core = core
        self._host = host
        self._transposed_cache: dict[int, set[str]] | None = None
        self._contig_cache: dict[int, dict[str, tuple[str, set[str]]]] = {}

    def flag_selects_fallback_only_for_one_head(self, flag: str) -> bool:
        """True when every host value of `flag` can be False only where there is one head,
        so the legacy fallback in the flag's else branch reads with stride 1 anyway.

        `HV != 1` and literal True are safe; False is safe only under an `HV == 1`-style
        guard. A value set from anything else (a sequence length, the synthetic zero gate
        buffer path) can select the strided fallback with many heads. A module that passes
        the flag nowhere is trusted: the documented pattern is in use.
        """
        for value, guards in self._host.flag_values(flag):
            if isinstance(value, ast.Constant):
                if value.value is True or (value.value is False and _guard_implies_one(guards)):
                    continue
                return False
            if _single_head_test(value) == "many":
                continue
            if isinstance(value, (ast.Name, ast.Attribute, TupleElement, ast.Subscript)):
                continue  # unknown origin (a parameter, another module): no evidence either way
            return False
        return True

    def transposed_params(self, fn: JitFunction) -> set[str]:
        """Parameters of `fn` that receive transposed storage from some launch, directly or
        through the kernels that call this helper."""
        cache = self._transposed_cache
        if cache is None:
            cache = {id(k): set() for k in self._core.kernels}
            for binding in self._core.launches:
                for param, exprs in binding.args.items():
                    for expr in exprs:
                        if any(
                            is_transposed_copy(v)
                            for v, _ in self._host.host_values(expr, binding.host)
                        ):
                            cache[id(binding.callee)].add(param)
            for _ in range(MAX_HELPER_DEPTH):
                changed = False
                for binding in self._core.helper_calls:
                    caller = binding.caller
                    if not cache[id(caller)]:
                        continue  # a caller with no transposed tensor passes none on
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

    def contig_flags(self, fn: JitFunction, depth: int = 0) -> dict[str, tuple[str, set[str]]]:
        """The stride-1 layout flags a kernel or helper receives: parameter -> (the flag's
        name at the launch, the tensor parameters it describes). A kernel's own are the
        `*_CONTIG` parameters, named for their tensor; a helper's are the parameters its
        callers bind to their flags, describing what they bind to those tensors."""
        cached = self._contig_cache.get(id(fn))
        if cached is not None:
            return cached
        flags = {p: (p, _named_tensor(p, fn)) for p in fn.params if _is_contig_flag_name(p)}
        self._contig_cache[id(fn)] = flags  # recursion guard
        if depth < MAX_HELPER_DEPTH:
            for binding in self._core.helper_calls:
                if binding.callee is not fn or binding.caller is None:
                    continue
                outer = self.contig_flags(binding.caller, depth + 1)
                for param, exprs in binding.args.items():
                    for expr in exprs:
                        if not (isinstance(expr, ast.Name) and expr.id in outer):
                            continue
                        launch_name, tensors = outer[expr.id]
                        carried = pointer_names(binding.caller, tensors) if tensors else set()
                        mine = {
                            p
                            for p, args in binding.args.items()
                            if any(names_in(a) & carried for a in args)
                        }
                        known = flags.get(param, (launch_name, set()))[1]
                        flags[param] = (launch_name, known | mine)
        return flags

    def contig_branch(self, fn: JitFunction, stmt: ast.stmt) -> ContigBranch | None:
        """The innermost stride-1 layout branch around `stmt`, if any."""
        flags = self.contig_flags(fn)
        if not flags:
            return None
        for branch in reversed(fn.context(stmt).branches):
            found = _contig_flag_of(branch.test, set(flags))
            if found:
                name, positive = found
                launch_name, tensors = flags[name]
                return ContigBranch(launch_name, branch.taken == positive, frozenset(tensors))
        return None
