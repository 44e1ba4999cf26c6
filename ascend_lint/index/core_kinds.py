"""Core kinds: which of the device's core counts a launch grid is sized by, which kernels
use the cube unit, and the core counts of each target.

An Ascend AI core has one cube unit and two vector units. triton-ascend compiles a kernel
with no cube operation as a vector-only (`aiv`) kernel, one program per vector core, and
a kernel with `tl.dot` as a cube-vector (`mix`) kernel, one program per AI core that also
drives that core's two vector units (triton-ascend programming guide, "Multi-Core Task
Parallelism"). The driver reports both counts: `num_aicore` and `num_vectorcore`.

Knows:

* `kinds(expr, host)`: the core counts (`"ai"`, `"vector"`) a host value is, itself or
  as a cap (`min(n, cores)`): the driver's property keys (`props["num_vectorcore"]`,
  `props.get("num_aicore", 40)`, `getattr(props, "num_aicore")`), followed through the
  host's assignments, helpers' returns and module constants; where the value comes from
  another module, the name of the helper or of the unpacked value (`get_vectorcore_num()`,
  `num_aicore, num_vectorcore = get_device_properties()`), the last tie-breaker;
* `literal_count(expr, host)`: a program count written as a literal, itself or as a cap
  (`48`, `NUM_CORES = 48`, `min(n, 48)`), with the expression that holds it;
* `cube_use(fn)`: the first `tl.dot` / `tl.dot_scaled` in a kernel or in the
  `@triton.jit` helpers it calls;
* `TARGET_CORES`: the fewest AI and vector cores among the parts of each target.

Depends on: the core (kernels, helper calls, host functions), `host` (what a name
holds). Nothing else depends on this object.

Cost: nothing until asked; each question walks one host expression (memoised in the host
value model) or a kernel's calls and its helpers' once.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.index.aliases import LANGUAGE
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import HostFunction, TupleElement
from ascend_lint.index.syntax import MAX_HELPER_DEPTH, call_name, int_literal, property_key, show

AI = "ai"
VECTOR = "vector"
# A literal this large caps a grid at triton-ascend's grid limit (65,535 programs), far
# above any part's core count: it is no core count.
_GRID_LIMIT_CAP = 4096
_KEYS = {"num_aicore": AI, "num_vectorcore": VECTOR}
_CUBE_OPS = frozenset({f"{LANGUAGE}.dot", f"{LANGUAGE}.dot_scaled"})


@dataclass(frozen=True)
class CoreCounts:
    """The fewest cores among a target's parts, and which parts have that few."""

    ai: int
    vector: int
    parts: str


# A2 parts range from 24 AI / 48 vector cores down to 20 / 40 (910B3, 910B4: the
# "40-core part" of FlagGems PR #6539); the guide gives the 1:2 ratio. A3 and A5 are left
# out until their smallest parts are known: no literal is judged there.
TARGET_CORES: dict[str, CoreCounts] = {
    "ascend910b": CoreCounts(ai=20, vector=40, parts="910B3/910B4"),
}


def _kind_of_name(name: str) -> str | None:
    """A core kind a name spells: `num_vectorcore`, `get_vectorcore_num`, `num_aicore`,
    `get_aicore_num`, `num_vector_cores`, `num_ai_cores` (a helper or a value from another
    module, whose value is not shown)."""
    lowered = name.lower().replace("_", "")
    if "vectorcore" in lowered or "aivcore" in lowered or "aivnum" in lowered:
        return VECTOR
    if "aicore" in lowered or "cubecore" in lowered or "aicnum" in lowered:
        return AI
    return None


class CoreKindFacts:
    """Core counts in grids, cube use in kernels (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts):
        self._core = core
        self._host = host
        self._module = core.hosts[0]
        self._cube: dict[int, ast.Call | None] = {}

    # -- which core count a host value is -----------------------------------------------------
    def kinds(self, expr: ast.AST, host: HostFunction | None) -> dict[str, str]:
        """kind -> the expression that shows it, for each core count `expr` is (itself,
        or capped by it with `min`); empty where it is no core count."""
        found: dict[str, str] = {}
        self._kinds(expr, host, 0, found)
        return found

    def _kinds(self, expr, host, depth: int, found: dict[str, str]) -> None:
        if depth > 2 * MAX_HELPER_DEPTH:
            return
        kind = self._key_kind(expr)
        if kind is not None:
            found.setdefault(kind, show(expr))
            return
        if isinstance(expr, ast.Name):
            values = self._host.host_values(expr, host) if host is not None else [(expr, ())]
            if values != [(expr, ())]:
                for value, _guards in values:
                    self._kinds(value, host, depth + 1, found)
                return
            module = self._module.assignments.get(expr.id)
            if module and host is not self._module and (host is None or expr.id not in host.params):
                for value in module:
                    self._kinds(value, self._module, depth + 1, found)
                return
            named = _kind_of_name(expr.id)
            if named is not None:
                found.setdefault(named, f"`{expr.id}`")
            return
        if isinstance(expr, TupleElement):
            values = self._host.host_values(expr, host) if host is not None else [(expr, ())]
            if values != [(expr, ())]:
                for value, _guards in values:
                    self._kinds(value, host, depth + 1, found)
                return
            named = _kind_of_name(expr.name) if expr.name else None
            if named is not None:
                found.setdefault(named, f"`{expr.name}`")
            return
        if isinstance(expr, ast.IfExp):
            # `n if n < CORES else CORES`: capped by the cores
            self._kinds(expr.body, host, depth + 1, found)
            self._kinds(expr.orelse, host, depth + 1, found)
            return
        if isinstance(expr, ast.Call):
            name = call_name(expr.func) or ""
            if name == "min" and isinstance(expr.func, ast.Name):
                for arg in expr.args:
                    self._kinds(arg, host, depth + 1, found)
                return
            if name == "int" and isinstance(expr.func, ast.Name) and expr.args:
                self._kinds(expr.args[0], host, depth + 1, found)
                return
            if not isinstance(expr.func, ast.Attribute) and host is not None:
                values = self._host.host_values(expr, host)
                if values != [(expr, ())]:  # a helper of this module: its returns
                    for value, _guards in values:
                        self._kinds(value, host, depth + 1, found)
                    return
            named = _kind_of_name(name)
            if named is None and expr.args and isinstance(expr.args[0], ast.Constant):
                # `get_num_cores("vector")`
                if "core" in name.lower() and isinstance(expr.args[0].value, str):
                    named = _kind_of_name(f"{expr.args[0].value}core")
            if named is not None:
                found.setdefault(named, f"`{show(expr)}`")

    @staticmethod
    def _key_kind(node: ast.AST) -> str | None:
        """`props["num_vectorcore"]`, `props.get("num_aicore", 40)`, `props.num_aicore`,
        `getattr(props, "num_vectorcore")`."""
        key = property_key(node)
        return _KEYS.get(key) if isinstance(key, str) else None

    # -- literal program counts ---------------------------------------------------------------
    def literal_count(self, expr: ast.AST, host: HostFunction | None) -> tuple[int, str] | None:
        """(n, where) when every value of `expr` is the literal `n` or is capped by it
        (`min(tasks, 48)`), with the expression that writes it."""
        found: set[tuple[int, str]] = set()
        values = self._host.host_values(expr, host) if host is not None else [(expr, ())]
        for value, _guards in values:
            got = self._literal(value, host, 0)
            if got is None:
                return None
            found.add(got)
        counts = {n for n, _ in found}
        if len(counts) != 1 or counts.pop() >= _GRID_LIMIT_CAP:
            return None
        return min(found)

    def _literal(self, value: ast.AST, host, depth: int) -> tuple[int, str] | None:
        if depth > MAX_HELPER_DEPTH:
            return None
        n = int_literal(value)
        if n is not None and not isinstance(getattr(value, "value", None), bool):
            return n, show(value)
        if isinstance(value, ast.Name):
            if host is not None and value.id in host.assignments:
                found = {
                    self._literal(v, host, depth + 1)
                    for v, _ in self._host.host_values(value, host)
                }
                if len(found) == 1 and None not in found:
                    n, where = found.pop()  # type: ignore[misc]
                    return n, where if where.startswith(value.id) else f"{value.id} = {where}"
                return None
            module = self._module.assignments.get(value.id)
            if module and len(module) == 1 and (host is None or value.id not in host.params):
                got = self._literal(module[0], self._module, depth + 1)
                if got is not None:
                    return got[0], f"{value.id} = {got[1]}"
            return None
        if isinstance(value, ast.Call) and call_name(value.func) == "min":
            caps = [self._literal(a, host, depth + 1) for a in value.args]
            caps = [c for c in caps if c is not None and c[0] < _GRID_LIMIT_CAP]
            return min(caps) if caps else None
        return None

    # -- kernels on the cube unit -------------------------------------------------------------
    def cube_use(self, fn: JitFunction) -> ast.Call | None:
        """The first `tl.dot` (or `tl.dot_scaled`) of `fn` or of a helper it calls."""
        if id(fn) in self._cube:
            return self._cube[id(fn)]
        self._cube[id(fn)] = None  # a helper that calls back: nothing meanwhile
        found = None
        for qual in _CUBE_OPS:
            calls = self._core.calls_in(fn, qual)
            if calls:
                found = calls[0][0]
                break
        if found is None:
            for call, _stmt in fn.calls:
                binding = self._core.helper_binding(call)
                if binding is not None and binding.callee is not fn:
                    inner = self.cube_use(binding.callee)
                    if inner is not None:
                        found = inner
                        break
        self._cube[id(fn)] = found
        return found
