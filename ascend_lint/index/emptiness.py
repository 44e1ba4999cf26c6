"""Empty inputs: which launch quantities are 0 when the input is empty, and which guards
before a launch exclude that.

A grid axis or a block size is a host expression. Followed through the host's
assignments and its callers (`host.host_values`), it is 0 for an empty input when it is

* a count that changes from call to call (`quantities`: a token, row or element count,
  a leading dimension, `len(...)`), which an empty tensor or list makes 0;
* blocks of one (`triton.cdiv(n, B)`, `(n + B - 1) // B`, `n // B`), a product with one
  (`B * H * n`), a `min` with one (`min(n, cores)`: a core cap does not keep it above 0),
  `triton.next_power_of_2` of one (which is 0 at 0);

and not when a `max(..., 1)`, a literal, a model dimension or a core count decides it.

A guard excludes 0 where the launch runs only for a non-empty input: an `if` around the
launch (`if n > 0:`, the `else` of `if n == 0:`), an earlier `if ...: return` / `raise`
in an enclosing block (`if x.numel() == 0: return out`, `if not n: return`, `if M == 0 or
N == 0: return`; in a loop, `if n == 0: continue`), an `assert n > 0`. A guard on a count covers the names and expressions
it was computed from; a guard on a tensor (`x.numel() == 0`, `0 in x.shape`) covers every
dimension of that tensor and of its views (`x.view(-1, D)`, `x.reshape(...)`,
`x.contiguous()`). Where the count comes from a launch helper's parameter, a guard in every
caller of the helper (before its call) counts too.

Depends on: the core (host functions and the calls to them), `host` (what a name
holds) and `quantities` (what a leaf value counts). Nothing else depends on this object.

Cost: nothing until asked; each question walks one expression through the host value
model (memoised there) and the statements around one launch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import VIEW_METHODS, HostFacts
from ascend_lint.index.launches import HostFunction, TupleElement, argument_for
from ascend_lint.index.naming import is_head_name
from ascend_lint.index.quantities import QuantityFacts, Role
from ascend_lint.index.syntax import (
    MAX_HELPER_DEPTH,
    call_name,
    expr_key,
    int_literal,
    show,
    walk,
)

_CEIL_DIV = frozenset({"cdiv", "ceil_div", "ceildiv", "div_up"})
_POWER_OF_TWO = frozenset({"next_power_of_2", "next_power_of_two"})
_COUNTS = frozenset({"numel", "nelement"})
# Calls that make a tensor of the sizes they are given, and methods that keep its sizes.
_CREATORS = frozenset({"randn", "rand", "empty", "zeros", "ones", "full", "randint"})
_MOVES = frozenset(
    {"to", "npu", "cuda", "cpu", "float", "half", "bfloat16", "int", "long", "clone"}
)
_LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"})
_MAX_PATHS = 16


@dataclass
class EmptyValue:
    """A launch quantity that an empty input makes 0, and how."""

    why: str  # the count that is 0 for an empty input: "`x.shape[0]`, the rows of ..."
    # every expression the value was followed through, with the host that holds it
    # (a guard on any of them excludes the empty case)
    path: list[tuple[ast.AST, HostFunction | None]] = field(default_factory=list)
    # the calls into the launcher the value came through (their guards count too)
    sites: list[tuple[ast.Call, HostFunction]] = field(default_factory=list)
    # the tests known where an assignment on the way ran (`if N > 0: BLOCK = ...`)
    facts: list[tuple[ast.AST, bool, HostFunction | None]] = field(default_factory=list)


def _comparison(test: ast.Compare) -> tuple[ast.AST, str, int] | None:
    """`X op k` with k an integer literal, mirrored to put X on the left: (X, op, k)."""
    if len(test.ops) != 1:
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    names = {
        ast.Eq: "==",
        ast.NotEq: "!=",
        ast.Gt: ">",
        ast.GtE: ">=",
        ast.Lt: "<",
        ast.LtE: "<=",
    }
    mirrored = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "==": "==", "!=": "!="}
    symbol = names.get(type(op))
    if symbol is None:
        return None
    k = int_literal(right)
    if k is not None:
        return left, symbol, k
    k = int_literal(left)
    if k is not None:
        return right, mirrored[symbol], k
    return None


def nonzero_subjects(test: ast.AST, holds: bool) -> list[ast.AST]:
    """Expressions that cannot be 0 where `test` evaluated to `holds` (counts taken as
    >= 0): `n > 0` holding, `n == 0` failing, `not n` failing, `a and b` holding (each
    side), `a or b` failing (each side). A product or `min` that is not 0 has no factor
    that is 0: its factors are listed too."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return nonzero_subjects(test.operand, not holds)
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And) == holds:
            return [s for value in test.values for s in nonzero_subjects(value, holds)]
        return []
    subject: ast.AST | None = None
    if isinstance(test, ast.Compare):
        if (
            len(test.ops) == 1
            and isinstance(test.ops[0], (ast.In, ast.NotIn))
            and int_literal(test.left) == 0
        ):
            # `0 in x.shape` failing: no dimension of x is 0
            if isinstance(test.ops[0], ast.In) != holds:
                subject = test.comparators[0]
        else:
            found = _comparison(test)
            if found is not None:
                x, op, k = found
                excludes_zero = {
                    "==": k != 0 if holds else k == 0,
                    "!=": k == 0 if holds else k != 0,
                    ">": k >= 0 if holds else False,
                    ">=": k >= 1 if holds else False,
                    "<": False if holds else k <= 1,
                    "<=": False if holds else k <= 0,
                }[op]
                subject = x if excludes_zero else None
    elif holds:
        subject = test  # `if n:`, `if x.numel():`
    if subject is None:
        return []
    found = [subject]
    if isinstance(subject, ast.BinOp) and isinstance(subject.op, ast.Mult):
        found += nonzero_subjects(ast.Compare(subject.left, [ast.Gt()], [ast.Constant(0)]), True)
        found += nonzero_subjects(ast.Compare(subject.right, [ast.Gt()], [ast.Constant(0)]), True)
    if isinstance(subject, ast.Call) and call_name(subject.func) in ("min", "prod"):
        found += list(subject.args)
    return found


def _ends_early(body: list[ast.stmt]) -> bool:
    """A block that leaves what follows it: `return`, `raise`, and, inside a loop's body,
    `continue` / `break` (the rest of that iteration does not run)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def facts_before(host: HostFunction, node: ast.AST) -> list[tuple[ast.AST, bool]]:
    """(test, holds) for every test known where `node` (a call in `host`) runs: the `if`s
    around it and the early exits and asserts before it, in every enclosing block."""
    body = getattr(host.node, "body", None)
    if not isinstance(body, list):
        return []
    line = getattr(node, "lineno", None)
    if line is None:
        return []
    facts: list[tuple[ast.AST, bool]] = []
    block: list[ast.stmt] | None = body
    while block:
        inner = None
        for stmt in block:
            first, last = stmt.lineno, getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno
            if first <= line <= last:
                inner = stmt
                break
            if isinstance(stmt, ast.If) and _ends_early(stmt.body) and not stmt.orelse:
                facts.append((stmt.test, False))
            elif (
                isinstance(stmt, ast.If) and _ends_early(stmt.orelse) and not _ends_early(stmt.body)
            ) or isinstance(stmt, ast.Assert):
                facts.append((stmt.test, True))
        if inner is None or isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            break
        block = None
        if isinstance(inner, ast.If):
            if any(_contains(s, line) for s in inner.body):
                facts.append((inner.test, True))
                block = inner.body
            else:
                facts.append((inner.test, False))
                block = inner.orelse
        elif isinstance(inner, ast.While):
            facts.append((inner.test, True))
            block = inner.body
        elif isinstance(inner, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            block = inner.body if any(_contains(s, line) for s in inner.body) else inner.orelse
        elif isinstance(inner, ast.Try):
            for part in (inner.body, *[h.body for h in inner.handlers], inner.orelse):
                if any(_contains(s, line) for s in part):
                    block = part
                    break
            else:
                block = inner.finalbody
    return facts


def _contains(stmt: ast.stmt, line: int) -> bool:
    return stmt.lineno <= line <= (getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno)


class EmptinessFacts:
    """Launch quantities that an empty input makes 0, and the guards that exclude it."""

    def __init__(self, core: CoreFacts, host: HostFacts, quantities: QuantityFacts):
        self._core = core
        self._host = host
        self._quantities = quantities
        self._module = core.hosts[0]

    # -- what is 0 for an empty input ---------------------------------------------------------
    def zero_when_empty(self, expr: ast.AST, host: HostFunction | None) -> EmptyValue | None:
        """How an empty input makes `expr` 0, or None where nothing shows it can be."""
        found = self.zero_paths(expr, host)
        return found[0] if found else None

    def zero_paths(self, expr: ast.AST, host: HostFunction | None) -> list[EmptyValue]:
        """Every way (up to `_MAX_PATHS`) an empty input makes `expr` 0: one per
        assignment, branch and caller it can come through."""
        return self._zero(expr, host, 0, [], [])[:_MAX_PATHS]

    def unguarded_zero(
        self, expr: ast.AST, launch: ast.Call, host: HostFunction | None
    ) -> EmptyValue | None:
        """A way an empty input makes `expr` 0 that no guard before `launch` excludes."""
        return next(
            (v for v in self.zero_paths(expr, host) if not self.guarded(v, launch, host)), None
        )

    def _any(self, parts, host, depth, path, sites) -> list[EmptyValue]:
        """0 when any part is: every part's ways, up to `_MAX_PATHS`. A part may carry
        the if-guards of the assignment it comes from, which hold on its way."""
        found: list[EmptyValue] = []
        for part, part_host, part_sites, *guards in parts:
            ways = self._zero(part, part_host, depth + 1, path, part_sites)
            for way in ways:
                way.facts += [(test, taken, part_host) for test, taken in (guards or [()])[0]]
            found += ways
            if len(found) >= _MAX_PATHS:
                break
        return found

    def _zero(
        self,
        expr: ast.AST,
        host: HostFunction | None,
        depth: int,
        path: list,
        sites: list,
    ) -> list[EmptyValue]:
        if depth > 3 * MAX_HELPER_DEPTH:
            return []
        path = [*path, (expr, host)]
        if isinstance(expr, ast.Constant):
            return []
        if isinstance(expr, ast.Name) and host is not None:
            if expr.id in host.assignments:
                if _fixed_by_model(expr.id):
                    # `num_idx_heads = score.shape[0]`: the shape does not say what the
                    # leading dimension counts, the name it is kept under does
                    return []
                parts = [
                    (v, host, sites, host.guards.get(id(v), ())) for v in host.assignments[expr.id]
                ]
                return self._any(parts, host, depth, path, sites)
            if expr.id in host.params:
                position = host.params.index(expr.id)
                callers = self._core.calls_to(host)
                parts = []
                for call, caller in callers:
                    arg = argument_for(call, expr.id, position)
                    if arg is not None:
                        parts.append((arg, caller, [*sites, (call, caller)]))
                if callers:
                    return self._any(parts, host, depth, path, sites)
                return self._leaf(expr, host, path, sites)
            if host is not self._module and expr.id in self._module.assignments:
                return []  # a module constant
            return self._leaf(expr, host, path, sites)
        if isinstance(expr, TupleElement):
            values = self._host.host_values(expr, host) if host is not None else [(expr, ())]
            if values != [(expr, ())]:
                parts = [(v, host, sites, g) for v, g in values]
                return self._any(parts, host, depth, path, sites)
            return self._leaf(expr, host, path, sites)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.Mult):
                parts = [(expr.left, host, sites), (expr.right, host, sites)]
                return self._any(parts, host, depth, path, sites)
            if isinstance(expr.op, ast.FloorDiv):
                numerator = expr.left
                # `(n + B - 1) // B`: blocks of n
                if isinstance(numerator, ast.BinOp) and isinstance(numerator.op, ast.Sub):
                    numerator = numerator.left
                if isinstance(numerator, ast.BinOp) and isinstance(numerator.op, ast.Add):
                    numerator = numerator.left
                return self._zero(numerator, host, depth + 1, path, sites)
            if isinstance(expr.op, ast.Add):
                left = self._zero(expr.left, host, depth + 1, path, sites)
                right = self._zero(expr.right, host, depth + 1, path, sites) if left else []
                return left if left and right else []
            return []
        if isinstance(expr, ast.IfExp):
            parts = [(expr.body, host, sites), (expr.orelse, host, sites)]
            return self._any(parts, host, depth, path, sites)
        if isinstance(expr, ast.Call):
            name = call_name(expr.func) or ""
            if name in (_CEIL_DIV | _POWER_OF_TWO) and expr.args:
                return self._zero(expr.args[0], host, depth + 1, path, sites)
            if name == "min" and isinstance(expr.func, ast.Name):
                parts = [(a, host, sites) for a in expr.args]
                return self._any(parts, host, depth, path, sites)
            if name == "max" and isinstance(expr.func, ast.Name):
                found = [self._zero(a, host, depth + 1, path, sites) for a in expr.args]
                return found[0] if found and all(found) else []
            if name in ("int", "abs") and isinstance(expr.func, ast.Name) and expr.args:
                return self._zero(expr.args[0], host, depth + 1, path, sites)
        return self._leaf(expr, host, path, sites)

    def _leaf(
        self,
        expr: ast.AST,
        host: HostFunction | None,
        path: list,
        sites: list,
    ) -> list[EmptyValue]:
        """A value the walk cannot open: 0 for an empty input when it counts per call,
        unless it is a size of a tensor the host makes with nonzero literal sizes."""
        if isinstance(expr, ast.Call) and call_name(expr.func) == "len":
            return [EmptyValue(f"`{show(expr)}`, the length of a host sequence", path, sites)]
        sized = _sized_tensor(expr)
        if sized is not None and host is not None and self._made_nonempty(sized, host):
            return []
        for quantity in self._quantities.of(expr, host):
            if quantity.role in (Role.LENGTH, Role.BATCH):
                return [EmptyValue(str(quantity.why), path, sites)]
        return []

    def _made_nonempty(self, tensor: ast.AST, host: HostFunction, depth: int = 0) -> bool:
        """Is every value of `tensor` made here with sizes that are nonzero literals
        (`torch.randn(1024, 64)`, `torch.empty((B, 8))` with `B = 4`), views of it
        included?"""
        values = self._host.host_values(tensor, host)
        if not values or depth > MAX_HELPER_DEPTH:
            return False
        for value, _guards in values:
            while (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr in VIEW_METHODS | _MOVES
            ):
                value = value.func.value
            if isinstance(value, ast.Name) and value is not tensor and value.id in host.assignments:
                if not self._made_nonempty(value, host, depth + 1):
                    return False
                continue
            if isinstance(value, ast.Call) and call_name(value.func) in _LIKE and value.args:
                if not self._made_nonempty(value.args[0], host, depth + 1):
                    return False
                continue
            if not (isinstance(value, ast.Call) and call_name(value.func) in _CREATORS):
                return False
            sizes = _size_arguments(value)
            if not sizes:
                return False
            for size in sizes:
                n = self._literal_int(size, host)
                if n is None or n <= 0:
                    return False
        return True

    def _literal_int(self, node: ast.AST, host: HostFunction) -> int | None:
        found = {int_literal(v) for v, _ in self._host.host_values(node, host)}
        if len(found) == 1:
            return found.pop()
        return None

    def run_by_tests(self, host: HostFunction | None) -> bool:
        """Is `host` a test function pytest collects (`test*`, at module level or in a
        `Test*` class), or a helper only such functions (or such helpers) call? Its inputs are
        the test's own cases. (Whether the module is a test module is the caller's to
        know: the index does not see file names.)"""
        return self._run_by_tests(host, 0)

    def _run_by_tests(self, host: HostFunction | None, depth: int) -> bool:
        if host is None or host is self._module or depth > MAX_HELPER_DEPTH:
            return False
        if _collected(host, self._core):
            return True
        callers = self._core.calls_to(host)
        return bool(callers) and all(
            caller is not host and self._run_by_tests(caller, depth + 1)
            for _call, caller in callers
        )

    # -- guards -------------------------------------------------------------------------------
    def guarded(self, value: EmptyValue, launch: ast.Call, host: HostFunction | None) -> bool:
        """Does a guard exclude the empty case before `launch` (in `host`), or before every
        call that brought the value into the launcher?"""
        if host is None:
            return False
        if self._covers(facts_before(host, launch), host, value):
            return True
        for test, taken, where in value.facts:
            if where is not None and self._covers([(test, taken)], where, value):
                return True
        for call, caller in value.sites:
            if self._covers(facts_before(caller, call), caller, value):
                return True
        # a launch helper whose callers in the module all check before calling it
        callers = self._core.calls_to(host) if host is not self._module else []
        return bool(callers) and all(
            self._covers(facts_before(caller, call), caller, value, through=(call, host))
            for call, caller in callers
        )

    def _covers(
        self,
        facts: list[tuple[ast.AST, bool]],
        where: HostFunction,
        value: EmptyValue,
        through: tuple[ast.Call, HostFunction] | None = None,
    ) -> bool:
        subjects = [s for test, holds in facts for s in nonzero_subjects(test, holds)]
        if not subjects:
            return False
        targets: list[tuple[ast.AST, HostFunction | None]] = list(value.path)
        if through is not None:
            # the launcher's parameters are what this caller passes
            call, launcher = through
            for node, node_host in value.path:
                if node_host is not launcher:
                    continue
                for name in _names(node):
                    if name in launcher.params:
                        arg = argument_for(call, name, launcher.params.index(name))
                        if arg is not None:
                            targets.append((_substitute(node, name, arg), where))
        for subject in subjects:
            for node, node_host in targets:
                if node_host is not where and not (
                    node_host is self._module or where is self._module
                ):
                    continue
                if self._same(subject, node, where):
                    return True
        return False

    def _same(self, subject: ast.AST, node: ast.AST, host: HostFunction) -> bool:
        """Is a guarded `subject` the count `node`, or the tensor `node` is a size of?"""
        if expr_key(subject) == expr_key(node):
            return True
        if isinstance(subject, ast.Name) and isinstance(node, ast.Name):
            return subject.id == node.id
        if isinstance(subject, ast.Name):
            values = self._host.host_values(subject, host)
            key = expr_key(node)
            if any(expr_key(v) == key for v, _ in values):
                return True
        guarded_tensor = _counted_tensor(subject)
        if guarded_tensor is None:
            return False
        sized = _sized_tensor(node)
        if sized is None:
            return False
        return bool(self._roots(guarded_tensor, host) & self._roots(sized, host))

    def _roots(self, tensor: ast.AST, host: HostFunction, depth: int = 0) -> set[str]:
        """The names a tensor expression is a view of: `x.view(-1, D)` -> {x} and what
        `x` was assigned from."""
        while (
            isinstance(tensor, ast.Call)
            and isinstance(tensor.func, ast.Attribute)
            and tensor.func.attr in VIEW_METHODS
        ):
            tensor = tensor.func.value
        if not isinstance(tensor, ast.Name):
            return {show(tensor)}
        found = {tensor.id}
        if depth < MAX_HELPER_DEPTH and tensor.id in host.assignments:
            for value in host.assignments[tensor.id]:
                if not isinstance(value, TupleElement):
                    found |= self._roots(value, host, depth + 1)
        return found


_MODEL_WORDS = ("head", "expert", "hidden", "vocab", "dim", "channel", "layer")
_VARYING_WORDS = ("token", "seq", "batch", "row", "len", "total")


def _fixed_by_model(name: str) -> bool:
    """A count a name says the model fixes (`num_idx_heads`, `n_experts`, `head_dim`):
    consulted only where a shape does not say what its dimension counts."""
    lowered = name.lower()
    return is_head_name(name) or (
        any(w in lowered for w in _MODEL_WORDS) and not any(w in lowered for w in _VARYING_WORDS)
    )


def _collected(host: HostFunction, core: CoreFacts) -> bool:
    """A function pytest collects by default: `test*` in the module's own scope, or a
    method of a `Test*` class (classes are not hosts: the method's qualified place is
    read from the tree)."""
    if not host.name.startswith("test"):
        return False
    if id(host.node) in core.module_scope:
        return True
    for stmt in core.tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
            if any(node is host.node for node in stmt.body):
                return True
    return False


def _size_arguments(call: ast.Call) -> list[ast.AST]:
    """The sizes a tensor-making call is given: `randn(4, 8)`, `empty((4, 8))`,
    `full((4, 8), 0.5)`, `randint(0, 9, (4, 8))`, `size=(4, 8)`."""
    for kw in call.keywords:
        if kw.arg == "size":
            sizes = kw.value
            return list(sizes.elts) if isinstance(sizes, (ast.Tuple, ast.List)) else [sizes]
    args = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(args) != len(call.args):
        return []
    name = call_name(call.func)
    if name == "full":
        args = args[:1]
    elif name == "randint":
        args = [a for a in args if isinstance(a, (ast.Tuple, ast.List))][:1]
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        return list(args[0].elts)
    return args


def _counted_tensor(subject: ast.AST) -> ast.AST | None:
    """The tensor a guard counts the elements of: `x.numel()`, `x.nelement()`,
    `x.shape` (`0 in x.shape`), `len(x)`."""
    if (
        isinstance(subject, ast.Call)
        and isinstance(subject.func, ast.Attribute)
        and subject.func.attr in _COUNTS
    ):
        return subject.func.value
    if isinstance(subject, ast.Attribute) and subject.attr == "shape":
        return subject.value
    return None


def _sized_tensor(node: ast.AST) -> ast.AST | None:
    """The tensor a count is a size of: `x.shape[i]`, `x.size(i)`, `x.numel()`, an
    element of `x.shape` unpacked."""
    if isinstance(node, TupleElement):
        node = node.value
        if isinstance(node, ast.Subscript):  # `M, N = x.shape[-2:]`
            node = node.value
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in _COUNTS or node.func.attr == "size":
            return node.func.value
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def _substitute(node: ast.AST, name: str, value: ast.AST) -> ast.AST:
    if isinstance(node, ast.Name) and node.id == name:
        return value

    class _Swap(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            return value if n.id == name else n

    import copy

    try:
        return _Swap().visit(copy.deepcopy(node))
    except (TypeError, RecursionError):  # a marker node that cannot be copied
        return node
