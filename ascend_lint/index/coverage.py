"""Grid coverage: which program-id axes a kernel splits its work over, and whether a
launch's grid reaches all of that work.

Per kernel (its `@triton.jit` helpers included, through the calls the core binds):

* `axis_reads`     the `tl.program_id(k)` axes it reads and uses, with the first read
                   of each (the line a message names);
* `loops_over_programs`  whether the kernel shares its work out over the grid itself
                   (the one answer the grid rules ask, ASC012 and ASC023 alike): a read
                   of the program count (`tl.num_programs`: a task loop, or rows in
                   chunks), or a loop whose header reads a program id (`range(pid, n,
                   step)` with the grid size passed in, `range(pid * per, ...)`);
* `tiles`          per axis, the block parameters a program id is multiplied by
                   (`pid * BLOCK_N`) and the parameters the values derived from it are
                   compared with (`offs < N`, `if pid >= n: return`): how many tiles
                   the axis has, in the kernel's own terms;
* `unbounded_task_loops`  task loops `for i in range(cdiv(total, nprog))` whose task
                   index `pid + i * nprog` is compared with nothing (no `task < total`
                   guard, mask or clamp): the last round reads and writes past the end.

Per launch, from the host value model (`quantities`): whether a block bound at the
launch provably holds the whole axis (`BLOCK=next_power_of_2(N)` with `N` the bound
the kernel compares against), and whether the tile count along an axis grows with the
problem while the grid's extent there is capped.

Depends on: the core (kernels, helper calls, calls by triton function), `host` (what a
launch argument holds) and `quantities` (what it counts, the grid's axes). Nothing else
of the index depends on this object.

Cost: on first use, one pass over a kernel's program-id calls for the axes it reads;
each axis's tiles, the program loops and the task loops are computed only when asked
(a launch asks for the tiles of few axes, a kernel launched elsewhere only for its task
loops), all kept per kernel, as are the helpers it reaches. The launch queries walk the
launch's arguments through the host value model, whose answers are memoised there.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ascend_lint.index.aliases import LANGUAGE, Aliases
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import CallBinding, HostFunction, argument_for
from ascend_lint.index.quantities import (
    Quantity,
    QuantityFacts,
    Role,
    as_min_or_max,
    power_of_two_operand,
)
from ascend_lint.index.syntax import (
    MAX_FIXPOINT_ROUNDS,
    MAX_HELPER_DEPTH,
    additive_terms,
    all_statements,
    call_name,
    factors,
    frozen_names,
    int_literal,
    names_in,
    show,
    walk,
)
from ascend_lint.index.values import (
    is_program_count_call,
    is_program_id_call,
    kernel_values,
    pointer_root,
    strip_casts,
)

_MAKE_BLOCK_PTR = f"{LANGUAGE}.make_block_ptr"
_CEIL_DIV = frozenset({"cdiv", "ceil_div", "ceildiv", "div_up"})
# Calls that bound an index as a guard does: `tl.minimum(task, n - 1)`, `tl.where(...)`.
_CLAMPS = frozenset({"minimum", "where", "clamp"})


@dataclass(frozen=True)
class AxisRead:
    """The first `tl.program_id(axis)` of a kernel (or of a helper it calls) whose value
    is used."""

    axis: int
    call: ast.Call
    stmt: ast.stmt
    fn: JitFunction  # the kernel or helper that holds the call


@dataclass
class AxisTiles:
    """How a kernel splits one program-id axis into tiles, in its own parameters."""

    blocks: set[str] = field(default_factory=set)  # `pid * BLOCK`: the tile's extent
    opaque: bool = False  # the id is multiplied by a local or an expression: extent unknown
    # a tile also starts from a runtime value (`OFFSET * B + pid * B`): the grid covers a
    # window the launcher moves, so its extent alone does not count the tiles
    shifted: bool = False
    # `offs < N`, or `N` of a block pointer's shape where the id sets its offset: the
    # parameter that bounds the axis, with the comparison or `make_block_ptr` call
    bounds: dict[str, ast.expr] = field(default_factory=dict)


@dataclass(frozen=True)
class UnboundedTaskLoop:
    loop: ast.For
    task: str  # the task index, `task = pid + i * nprog`
    total: ast.AST  # the task count the loop's trip count is divided from (kernel side)
    step: ast.AST  # `nprog`, the program count the loop divides by
    assignment: ast.Assign  # `task = pid + i * nprog`
    start: ast.AST  # `pid`, the program id term
    counter_read_elsewhere: bool  # `i` is read by more of the body than the assignment
    # `for i in range(ITERS)` with the trip count a parameter: the launcher's division
    # (`ITERS=triton.cdiv(n, cores)`) says whether the last round runs past the end
    trips_parameter: str | None = None


@dataclass
class _KernelCoverage:
    """One kernel's (or helper's) facts. Only the program-id reads are computed up front;
    the rest is filled in on first use, since a launch asks for tiles of few axes and a
    kernel launched from another module only for its task loops."""

    reads: dict[int, list[AxisRead]]
    pid_names: dict[int, set[str]]  # axis -> the locals set from its `program_id`
    every_pid: set[str]
    tiles: dict[int, AxisTiles] = field(default_factory=dict)
    loops_over_programs: bool | None = None
    runtime: frozenset[str] | None = None  # runtime parameters and what is computed from them
    unbounded: list[UnboundedTaskLoop] | None = None
    uses: dict[str, str] | None = None


def _axis_of(call: ast.Call) -> int | None:
    if call.args:
        return int_literal(call.args[0])
    for keyword in call.keywords:
        if keyword.arg == "axis":
            return int_literal(keyword.value)
    return None


def _closure(seeds: set[str], dependencies: dict[str, frozenset[str]]) -> set[str]:
    """`seeds` and every local computed from them."""
    derived = set(seeds)
    for _ in range(MAX_FIXPOINT_ROUNDS):
        grown = {n for n, deps in dependencies.items() if n not in derived and deps & derived}
        if not grown:
            break
        derived |= grown
    return derived


def _assigns_locals_only(stmt: ast.stmt) -> bool:
    """`a = ...`, `a, b = ...`, `a += ...`: a statement whose only effect is to set locals."""
    if isinstance(stmt, ast.Assign):
        return all(_is_local_target(t) for t in stmt.targets)
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return _is_local_target(stmt.target)
    return False


def _is_local_target(target: ast.AST) -> bool:
    # (a module function: a recursive closure is a reference cycle that keeps the lint's
    # tree alive until the cycle collector runs)
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_is_local_target(t) for t in target.elts)
    return isinstance(target, ast.Name)


def _divided_count(expr: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """`cdiv(total, step)`, `tl.cdiv(...)`, `(total + step - 1) // step` -> (total, step)."""
    if isinstance(expr, ast.Call) and call_name(expr.func) in _CEIL_DIV and len(expr.args) == 2:
        return expr.args[0], expr.args[1]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.FloorDiv):
        terms = additive_terms(expr.left)
        if len(terms) >= 2:
            return terms[0], expr.right
    return None


class CoverageFacts:
    """Program-id axes, task loops and tiles of kernels; their coverage at launches."""

    def __init__(self, core: CoreFacts, host: HostFacts, quantities: QuantityFacts):
        self._core = core
        self._host_values = host.host_values
        self._quantities = quantities
        self._cache: dict[int, _KernelCoverage] = {}
        self._helpers_cache: dict[int, list[JitFunction]] = {}
        self._remainders_cache: dict[int, list[ast.BinOp]] = {}

    # -- per kernel ----------------------------------------------------------------------
    def axis_reads(self, fn: JitFunction) -> dict[int, AxisRead]:
        """axis -> its first used read, in the kernel or in the helpers it calls."""
        reads = {axis: found[0] for axis, found in self._of(fn).reads.items()}
        for helper in self._helpers(fn):
            for axis, found in self._of(helper).reads.items():
                reads.setdefault(axis, found[0])
        return reads

    def live_axis_reads(self, binding: CallBinding) -> dict[int, AxisRead]:
        """As `axis_reads`, leaving out what the launch compiles away: a read under a
        constexpr branch the launch does not take (`if HAS_Y:` with `HAS_Y=False` bound,
        directly, through a host variable or a splatted dict), a read whose value is used
        only there (`pid_y = tl.program_id(1)` at the top, read under `if HAS_Y:`), and
        the reads of a helper the kernel calls only there."""
        kernel = binding.callee
        dead = self._dead_statements(binding, kernel)
        reads: dict[int, AxisRead] = {}
        for axis, found in self._of(kernel).reads.items():
            live = [r for r in found if self._read_is_live(kernel, r, dead)]
            if live:
                reads[axis] = live[0]
        live_helpers = self._live_helpers(kernel, dead)
        for helper in self._helpers(kernel):
            if id(helper) not in live_helpers:
                continue
            for axis, found in self._of(helper).reads.items():
                reads.setdefault(axis, found[0])
        return reads

    def _dead_statements(self, binding: CallBinding, fn: JitFunction) -> set[int]:
        """`id(stmt)` of the statements of `fn` under a constexpr branch the launch does
        not take."""
        verdicts: dict[int, bool] = {}  # id(branch node) + side -> taken
        dead: set[int] = set()
        for stmt in fn.statements:
            for branch in fn.context(stmt).branches:
                key = id(branch.node) * 2 + branch.taken
                taken = verdicts.get(key)
                if taken is None:
                    taken = verdicts[key] = self._taken(binding, (branch,))
                if not taken:
                    dead.add(id(stmt))
                    break
        return dead

    @staticmethod
    def _read_is_live(fn: JitFunction, read: AxisRead, dead: set[int]) -> bool:
        """Is the program id of `read` used by a statement the launch keeps? Followed
        through the locals computed from it to a statement that does more than assign
        one (a load, a store, a call, a branch or loop header, a return)."""
        if id(read.stmt) in dead:
            return False
        names = CoverageFacts._names_set_by(read.call, read.stmt)
        if not names:
            return True  # used inside the statement that reads it
        derived = set(names)
        order = fn.statement_order()
        statement_names = fn.statement_names()
        for _ in range(MAX_FIXPOINT_ROUNDS):
            grown = False
            for stmt in fn.statements:
                if id(stmt) in dead or stmt is read.stmt:
                    continue
                reads_here, writes = statement_names[order[id(stmt)]]
                if not reads_here & derived:
                    continue
                if not _assigns_locals_only(stmt):
                    return True  # a load, a store, a call, a header, a return
                if not writes <= derived:
                    derived |= writes
                    grown = True
            if not grown:
                break
        return False

    def _live_helpers(self, fn: JitFunction, dead: set[int]) -> set[int]:
        """`id` of the helpers `fn` reaches through calls the launch keeps (below the
        kernel itself every call counts: a helper's branches are not evaluated)."""
        live: set[int] = set()
        frontier = []
        for call, stmt in fn.calls:
            if id(stmt) in dead:
                continue
            bound = self._core.helper_binding(call)
            if bound is not None and id(bound.callee) not in live:
                live.add(id(bound.callee))
                frontier.append(bound.callee)
        for _ in range(MAX_HELPER_DEPTH):
            if not frontier:
                break
            nested = []
            for helper in frontier:
                for call, _stmt in helper.calls:
                    bound = self._core.helper_binding(call)
                    if bound is not None and id(bound.callee) not in live:
                        live.add(id(bound.callee))
                        nested.append(bound.callee)
            frontier = nested
        return live

    def _taken(self, binding: CallBinding, branches) -> bool:
        """False where a branch around a statement tests a flag the launch binds to a
        literal that selects the other side (`if HAS_Y:`, `if not HAS_Y:`, `if y is not
        None:` with `None` bound, `if A and HAS_Y:`)."""
        for branch in branches:
            value = self._constant_test(binding, branch.test)
            if value is not None and value != branch.taken:
                return False
        return True

    def _constant_test(self, binding: CallBinding, test: ast.AST) -> bool | None:
        """The value a constexpr test has at this launch, or None where not shown."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._constant_test(binding, test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [self._constant_test(binding, v) for v in test.values]
            decisive = isinstance(test.op, ast.Or)  # `or`: one True decides, `and`: one False
            if decisive in parts:
                return decisive
            return None if None in parts else not decisive
        is_none = None
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            is_none = isinstance(test.ops[0], ast.Is)
            test = test.left
        if not (isinstance(test, ast.Name) and test.id in binding.callee.params):
            return None
        values = [
            v
            for arg in binding.args.get(test.id, ())
            for v, _ in self._host_values(arg, binding.host)
        ]
        if not values or not all(isinstance(v, ast.Constant) for v in values):
            return None
        if is_none is None:
            found = {bool(v.value) for v in values}
        else:
            found = {(v.value is None) == is_none for v in values}
        return found.pop() if len(found) == 1 else None

    def loops_over_programs(self, fn: JitFunction) -> bool:
        return any(self._loops_over_programs_of(f) for f in (fn, *self._helpers(fn)))

    def _loops_over_programs_of(self, fn: JitFunction) -> bool:
        facts = self._of(fn)
        if facts.loops_over_programs is None:
            facts.loops_over_programs = self._loops_over_programs(fn, facts.every_pid)
        return facts.loops_over_programs

    def tiles(self, fn: JitFunction, axis: int) -> AxisTiles:
        """The kernel's own blocks and bounds along `axis` (empty where a helper reads it)."""
        facts = self._of(fn)
        if axis not in facts.pid_names:
            return AxisTiles()
        tiles = facts.tiles.get(axis)
        if tiles is None:
            tiles = facts.tiles[axis] = self._axis_tiles(fn, axis, facts.pid_names[axis])
        return tiles

    def unbounded_task_loops(self, fn: JitFunction) -> list[UnboundedTaskLoop]:
        """Task loops whose task index nothing bounds, with the trip count divided in
        the kernel (`range(tl.cdiv(total, nprog))`): wrong wherever the kernel runs."""
        return [loop for loop in self._all_unbounded(fn) if loop.trips_parameter is None]

    def unbounded_task_loops_at(self, binding: CallBinding) -> list[UnboundedTaskLoop]:
        """As `unbounded_task_loops`, and the loops whose trip count the launch passes
        as a ceiling division (`ITERS=triton.cdiv(n, cores)`): the last round's tasks
        run past `n` unless it is a multiple."""
        found = []
        forms = self._quantities.value_forms
        for loop in self._all_unbounded(binding.callee):
            if loop.trips_parameter is None:
                found.append(loop)
                continue
            passed = [
                forms(arg, binding.host) for arg in binding.args.get(loop.trips_parameter, ())
            ]
            if passed and all(f and all(form[0] == "ceil" for form in f) for f in passed):
                found.append(loop)
        return found

    def _all_unbounded(self, fn: JitFunction) -> list[UnboundedTaskLoop]:
        facts = self._of(fn)
        if facts.unbounded is None:
            facts.unbounded = self._unbounded(fn, facts.every_pid)
        return facts.unbounded

    def _helpers(self, fn: JitFunction) -> list[JitFunction]:
        """The `@triton.jit` helpers `fn` calls, transitively (depth-bounded); kept per
        kernel, since every query about a launch asks for them again."""
        cached = self._helpers_cache.get(id(fn))
        if cached is None:
            cached = self._helpers_cache[id(fn)] = self._reachable_helpers(fn)
        return cached

    def _reachable_helpers(self, fn: JitFunction) -> list[JitFunction]:
        found: dict[int, JitFunction] = {}
        frontier = [fn]
        for _ in range(MAX_HELPER_DEPTH):
            calls = [
                b.callee
                for f in frontier
                for call, _stmt in f.calls
                if (b := self._core.helper_binding(call)) is not None
            ]
            frontier = list(
                {id(c): c for c in calls if c is not fn and id(c) not in found}.values()
            )
            found.update((id(c), c) for c in frontier)
            if not frontier:
                break
        return list(found.values())

    def _of(self, fn: JitFunction) -> _KernelCoverage:
        cached = self._cache.get(id(fn))
        if cached is None:
            cached = self._cache[id(fn)] = self._compute(fn)
        return cached

    def _compute(self, fn: JitFunction) -> _KernelCoverage:
        reads_by_stmt = [reads for reads, _assigned in fn.statement_names()]
        order = fn.statement_order()
        seeds: dict[int, set[str]] = {}
        reads: dict[int, list[AxisRead]] = {}
        for call, stmt in fn.calls:
            if not is_program_id_call(call, self._core.aliases):
                continue
            axis = _axis_of(call)
            if axis is None:
                continue
            names = self._names_set_by(call, stmt)
            used = (
                not names  # `offs = tl.program_id(0) * B + ...` inside a larger expression
                or any(names & reads for reads in reads_by_stmt[order[id(stmt)] + 1 :])
                or any(names & reads for reads in reads_by_stmt[: order[id(stmt)]])
            )
            seeds.setdefault(axis, set()).update(names)
            if used:
                reads.setdefault(axis, []).append(AxisRead(axis, call, stmt, fn))
        every_pid = set().union(*seeds.values()) if seeds else set()
        return _KernelCoverage(reads=reads, pid_names=seeds, every_pid=every_pid)

    @staticmethod
    def _names_set_by(call: ast.Call, stmt: ast.stmt) -> set[str]:
        """The locals a statement sets from this `program_id` call: `pid = ...`,
        element-wise for `pid_n, pid_c = tl.program_id(0), tl.program_id(1)`."""
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            return set()
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        out: set[str] = set()
        for target in targets:
            if isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple):
                for t, v in zip(target.elts, stmt.value.elts):
                    if isinstance(t, ast.Name) and (v is call or any(n is call for n in walk(v))):
                        out.add(t.id)
            elif isinstance(target, ast.Name):
                out.add(target.id)
        return out

    def _axis_tiles(self, fn: JitFunction, axis: int, pid_names: set[str]) -> AxisTiles:
        tiles = AxisTiles()
        aliases = self._core.aliases
        for division, _stmt in fn.divisions:
            if names_in(division.left) & pid_names or any(
                is_program_id_call(node, aliases) and _axis_of(node) == axis
                for node in walk(division.left)
            ):
                # `pid // NUM_C * BLOCK + pid % NUM_C * CBLOCK`: the id is split into a
                # block and a sub-block (or heads and rows) before it is scaled, so no
                # one factor is the extent a program covers along this axis
                tiles.opaque = True
                break
        dependencies = fn.dependencies()
        derived = _closure(pid_names, dependencies)
        pointers = kernel_values(fn, aliases).pointers
        runtime = self._runtime_names(fn)
        seen: set[int] = set()

        def blocks_in(expr: ast.AST) -> None:
            """`pid * BLOCK` terms: the factors beside the id are the tile's extent."""
            if id(expr) in seen:
                return
            seen.add(id(expr))
            terms = additive_terms(expr)
            reads_id = [
                not pid_names.isdisjoint(frozen_names(t))
                or any(is_program_id_call(f, aliases) for f in factors(t))
                for t in terms
            ]
            if any(reads_id) and any(
                not runtime.isdisjoint(frozen_names(t)) for t, r in zip(terms, reads_id) if not r
            ):
                tiles.shifted = True
            for term in terms:
                parts = factors(term)
                is_id = [
                    not pid_names.isdisjoint(frozen_names(p)) or is_program_id_call(p, aliases)
                    for p in parts
                ]
                if not any(is_id) or len(parts) == 1:
                    continue
                for part, id_part in zip(parts, is_id):
                    if id_part:
                        continue
                    if isinstance(part, ast.Name) and part.id in fn.params:
                        tiles.blocks.add(part.id)
                    elif int_literal(part) is None:
                        tiles.opaque = True

        for name in derived:
            for value in fn.assignments.get(name, ()):
                if pointer_root(value) not in pointers:  # `x + pid * stride`: an address
                    blocks_in(value)

        def bound_parameter(expr: ast.AST) -> str | None:
            """A parameter the kernel never reassigns (a varlen `T = eos - bos` is not
            it), read directly or through a local that only copies it (`n = N`,
            `n = N.to(tl.int32)`)."""
            expr = strip_casts(expr, aliases)
            if not isinstance(expr, ast.Name):
                return None
            if expr.id in fn.params:
                return None if expr.id in fn.assignments else expr.id
            copies = fn.assignments.get(expr.id, [])
            if len(copies) == 1 and expr.id not in fn.loop_variables:
                copied = strip_casts(copies[0], aliases)
                if isinstance(copied, ast.Name) and copied.id in fn.params:
                    return None if copied.id in fn.assignments else copied.id
            return None

        for compare in fn.compares:
            sides = [compare.left, *compare.comparators]
            for a, b in zip(sides, sides[1:]):
                for tile, bound in ((a, b), (b, a)):
                    # `offs < N`, `(pid * B + tl.arange(0, B)) < N`
                    if not names_in(tile) & derived:
                        continue
                    blocks_in(tile)
                    param = bound_parameter(bound)
                    if param is not None:
                        tiles.bounds.setdefault(param, compare)
        for call, _stmt in self._core.calls_in(fn, _MAKE_BLOCK_PTR):
            # `tl.make_block_ptr(p, (M, N), strides, (pid * BM, 0), (BM, BN), order)`:
            # the boundary check bounds dimension i by the shape's i-th entry
            shape, offsets = argument_for(call, "shape", 1), argument_for(call, "offsets", 3)
            if not (isinstance(shape, ast.Tuple) and isinstance(offsets, ast.Tuple)):
                continue
            for extent, offset in zip(shape.elts, offsets.elts):
                if names_in(offset) & derived:
                    blocks_in(offset)
                    param = bound_parameter(extent)
                    if param is not None:
                        tiles.bounds.setdefault(param, call)
        return tiles

    def _runtime_names(self, fn: JitFunction) -> frozenset[str]:
        """The runtime (non-pointer) parameters and the locals computed from them; once
        per kernel."""
        facts = self._of(fn)
        if facts.runtime is None:
            pointers = kernel_values(fn, self._core.aliases).pointers
            facts.runtime = frozenset(
                _closure(set(fn.params) - fn.constexpr_params - pointers, fn.dependencies())
            )
        return facts.runtime

    def _loops_over_programs(self, fn: JitFunction, pid_names: set[str]) -> bool:
        """A read of the program count (`tl.num_programs` shares the work out in a task
        loop or in chunks), or a loop whose header reads a program id or a value computed
        from one (`range(pid, n, step)` with the grid size passed in, `range(pid * per,
        ...)`)."""
        aliases = self._core.aliases
        if any(is_program_count_call(call, aliases) for call, _stmt in fn.calls):
            return True
        derived = _closure(pid_names, fn.dependencies())
        for stmt in fn.statements:
            header = (
                stmt.iter
                if isinstance(stmt, ast.For)
                else stmt.test
                if isinstance(stmt, ast.While)
                else None
            )
            if header is None:
                continue
            if names_in(header) & derived or any(
                is_program_id_call(node, aliases) for node in walk(header)
            ):
                return True
        return False

    def _unbounded(self, fn: JitFunction, pid_names: set[str]) -> list[UnboundedTaskLoop]:
        """`for i in range(cdiv(total, nprog)): task = pid + i * nprog` (also a trip
        count kept in a local, a step computed from the program count such as
        `nprog * BLOCK`, more terms such as `+ tl.arange(0, BLOCK)`, and the strided form
        `for s in range(0, total, nprog): task = s + pid`) with no comparison, clamp or
        helper call that reads the task index."""
        aliases = self._core.aliases
        if not pid_names and not any(is_program_id_call(c, aliases) for c, _stmt in fn.calls):
            return []  # no term can read a program id: there is no task index to find
        dependencies = fn.dependencies()
        counts: set[str] | None = None  # locals computed from the program count: found
        # only for a loop whose trip count is divided by something (few are)
        found: list[UnboundedTaskLoop] = []
        order = fn.statement_order()
        for stmt in fn.statements:
            if not (
                isinstance(stmt, ast.For)
                and isinstance(stmt.target, ast.Name)
                and isinstance(stmt.iter, ast.Call)
                and call_name(stmt.iter.func) in ("range", "static_range")
            ):
                continue
            args = stmt.iter.args
            if len(args) == 3 and int_literal(args[0]) == 0:
                # `for start in range(0, total, nprog): task = start + pid`
                divided: tuple[ast.AST, ast.AST] | None = (args[1], args[2])
            else:
                if len(args) == 2 and int_literal(args[0]) == 0:
                    args = args[1:]
                if len(args) != 1:
                    continue
                trips = fn.assignments.get(args[0].id, []) if isinstance(args[0], ast.Name) else []
                divided = _divided_count(trips[0] if len(trips) == 1 else args[0])
            trips_parameter = None
            if divided is None:
                if not (
                    isinstance(args[0], ast.Name)
                    and args[0].id in fn.params
                    and args[0].id not in fn.assignments
                ):
                    continue
                # `for i in range(ITERS)`: the launcher divides the count; the step is
                # the one the task index multiplies the counter by
                trips_parameter = args[0].id
            counter = stmt.target.id
            first, last = fn.loop_spans.get(id(stmt), (order[id(stmt)] + 1, -1))
            body = fn.statements[first : last + 1]
            for inner in body:
                task = self._task_index(inner, counter, pid_names, aliases)
                if task is None:
                    continue
                name, start, simple, counted = task
                if divided is not None:
                    total, step = divided
                else:
                    beside = [f for f in factors(counted) if names_in(f) != {counter}]
                    if len(beside) != 1:
                        break
                    total, step = args[0], beside[0]
                steps = names_in(step)
                reads_count = any(is_program_count_call(n, aliases) for n in walk(step))
                if counts is None and not reads_count:
                    counts = _closure(self._program_counts(fn), dependencies)
                # the program count, or a grid size the launcher passes (runtime or constexpr)
                passed_in = not (reads_count or steps & counts)
                if passed_in and not (steps and steps <= set(fn.params)):
                    break
                if passed_in and not self._is_bare_id(fn, start, aliases):
                    break  # `pid * BLOCK + i * SUB`: sub-blocks of one program's tile
                if not self._guarded(fn, name, dependencies):
                    elsewhere = not simple or any(
                        counter in fn.statement_names()[order[id(other)]][0]
                        for other in body
                        if other is not inner
                    )
                    found.append(
                        UnboundedTaskLoop(
                            stmt, name, total, step, inner, start, elsewhere, trips_parameter
                        )
                    )
                break
        return found

    def _program_counts(self, fn: JitFunction) -> set[str]:
        """Locals whose value calls `tl.num_programs`, however spelled (`n =
        tl.num_programs(0)`, `stride = tl.num_programs(0) * BM`)."""
        aliases = self._core.aliases
        return {
            name
            for name, values in fn.assignments.items()
            if any(is_program_count_call(node, aliases) for v in values for node in walk(v))
        }

    @staticmethod
    def _is_bare_id(fn: JitFunction, term: ast.AST, aliases: Aliases) -> bool:
        """`tl.program_id(0)`, or a local every definition of which is it alone (a cast
        allowed)."""

        def bare(expr: ast.AST) -> bool:
            return is_program_id_call(strip_casts(expr, aliases), aliases)

        if isinstance(term, ast.Name):
            values = fn.assignments.get(term.id, [])
            return bool(values) and all(bare(v) for v in values)
        return bare(term)

    @staticmethod
    def _task_index(
        stmt: ast.stmt, counter: str, pid_names: set[str], aliases: Aliases
    ) -> tuple[str, ast.AST, bool, ast.AST] | None:
        """`task = pid + i * nprog` (any order of terms, more terms allowed) -> ('task',
        the program-id term, whether it is exactly `pid + i * step`, the counter's
        term `i * nprog`)."""
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.BinOp)
            and isinstance(stmt.value.op, ast.Add)
        ):
            return None
        terms = additive_terms(stmt.value)
        counts = [counter in names_in(t) for t in terms]
        if not any(counts):
            return None  # most sums in a loop body do not read its counter: skip the walks

        def reads_id(term: ast.AST) -> bool:
            return bool(names_in(term) & pid_names) or any(
                is_program_id_call(n, aliases) for n in walk(term)
            )

        ids_read = [reads_id(t) for t in terms]
        counted = [t for t, c, r in zip(terms, counts, ids_read) if c and not r]
        ids = [t for t, c, r in zip(terms, counts, ids_read) if r and not c]
        if not counted or not ids:
            return None
        start = ids[0]
        simple = len(terms) == 2 and (
            isinstance(start, ast.Name) or is_program_id_call(start, aliases)
        )
        return stmt.targets[0].id, start, simple, counted[0]

    def _guarded(self, fn: JitFunction, task: str, dependencies: dict[str, frozenset[str]]) -> bool:
        derived = _closure({task}, dependencies)
        if any(names_in(c) & derived for c in fn.compares):
            return True
        for call, _stmt in fn.calls:
            name = call_name(call.func)
            passes = any(names_in(a) & derived for a in (*call.args, *call.keywords))
            if passes and (name in _CLAMPS or name in fn.jit_names):
                return True  # a clamp, or a helper that may check it
        return False

    def parameter_uses(self, fn: JitFunction) -> dict[str, str]:
        """How the kernel uses each parameter it reads, by what it does with it:
        "grid" (it bounds the tiles of a program-id axis: `offs < T` with `offs` from
        `pid * BT`, a block pointer's shape there), "lanes" (it bounds a vector or a walk
        otherwise: `offs_d < D`, `range(0, S, BLOCK)`, a block pointer's shape), "index"
        (read, but only to compute indices or counts: `pid // N`, `h * S * D`, a task
        index decoded with `% M`), "unrolled" (as "index", and the count of a
        `tl.static_range` loop, which only a small number fixed by the model can be), or
        absent (not read, or handed to a helper, whose use is its own). Kept per kernel."""
        facts = self._of(fn)
        if facts.uses is None:
            facts.uses = self._parameter_uses(fn, facts)
        return facts.uses

    def _parameter_uses(self, fn: JitFunction, facts: _KernelCoverage) -> dict[str, str]:
        read = set().union(*(reads for reads, _assigned in fn.statement_names()))
        params = (set(fn.params) & read) - set(fn.assignments)
        for call, _stmt in fn.calls:
            if self._core.helper_binding(call) is not None:
                params -= names_in(call)
        uses: dict[str, str] = dict.fromkeys(params, "index")
        vectors = _closure(self._core.assigned_from(fn, f"{LANGUAGE}.arange"), fn.dependencies())
        vectors |= fn.loop_variables
        for compare in fn.compares:
            sides = [compare.left, *compare.comparators]
            if any(names_in(side) & vectors for side in sides):
                for side in sides:
                    if isinstance(side, ast.Name) and uses.get(side.id) == "index":
                        uses[side.id] = "lanes"
        for stmt in fn.statements:
            # `range(NT)`, `range(0, S, BLOCK)`: walked at run time, chunk by chunk (a
            # `tl.static_range` is unrolled: its count is the kernel's shape, not a walk)
            if not (isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Call)):
                continue
            kind = call_name(stmt.iter.func)
            if kind in ("range", "static_range") and stmt.iter.args:
                stop = stmt.iter.args[1] if len(stmt.iter.args) > 1 else stmt.iter.args[0]
                for name in names_in(stop) & set(uses):
                    if kind == "range":
                        uses[name] = "lanes"
                    elif uses[name] == "index":
                        uses[name] = "unrolled"
        for call, _stmt in self._core.calls_in(fn, _MAKE_BLOCK_PTR):
            shape = argument_for(call, "shape", 1)
            for name in names_in(shape) & set(uses):
                uses[name] = "lanes"
        for axis in facts.pid_names:
            for bound in self.tiles(fn, axis).bounds:
                if bound in uses:
                    uses[bound] = "grid"
        return uses

    # -- per launch ----------------------------------------------------------------------
    def covers_whole_axis(self, binding: CallBinding, axis: int) -> bool:
        """Does the block along `axis` hold the whole axis at this launch? A block bound
        to `next_power_of_2(E)` (or the `max` of it and a literal), however the host
        computes it (locals, a helper that returns it), where the kernel compares the
        axis's values with a parameter bound to `E` itself."""
        tiles = self.tiles(binding.callee, axis)
        forms = self._quantities.value_forms
        for block in tiles.blocks:
            rounded = [
                power_of_two_operand(form)
                for arg in binding.args.get(block, ())
                for form in forms(arg, binding.host)
            ]
            if not rounded or any(r is None for r in rounded):
                continue
            for bound in tiles.bounds:
                extents = [forms(arg, binding.host) for arg in binding.args.get(bound, ())]
                if extents and all(e & set(rounded) for e in extents):
                    return True
        return False

    def blocks_bound(self, binding: CallBinding, axis: int) -> bool:
        """Does the launch bind every block the kernel multiplies the axis's id by (so the
        tile's extent is the launch's to tell, not a starred or defaulted argument)?"""
        tiles = self.tiles(binding.callee, axis)
        return not tiles.opaque and all(binding.args.get(b) for b in tiles.blocks)

    def fixed_tile(self, binding: CallBinding, axis: int) -> bool:
        """Is the tile along `axis` a fixed size at this launch: every block bound to a
        literal or a model constant (not a count shared out over the grid)?"""
        if not self.blocks_bound(binding, axis) or self.tiles(binding.callee, axis).shifted:
            return False
        for block in self.tiles(binding.callee, axis).blocks:
            for arg in binding.args[block]:
                quantities = self._quantities.of(arg, binding.host, block)
                if not quantities or any(
                    q.role not in (Role.LITERAL, Role.MODEL) for q in quantities
                ):
                    return False
        return True

    def capped_extent(self, binding: CallBinding, extent: ast.AST) -> str | None:
        """The evidence that a grid extent is bounded by a core count or a cap (every
        value it can hold is: `num_cores`, `min(tiles, cores)`, `min(n, 48)`,
        `min(n, 65535)`), or None."""
        values = [v for v, _ in self._host_values(extent, binding.host)]
        why = []
        for value in values:
            quantities = self._quantities.of(value, binding.host)
            capped = [q for q in quantities if q.role == Role.CORES or q.cap is not None]
            if quantities and len(capped) == len(quantities):
                why.append(str(capped[0].why))
            elif (isinstance(value, ast.Call) and call_name(value.func) == "min") or (
                isinstance(value, ast.IfExp) and (as_min_or_max(value) or ("",))[0] == "min"
            ):
                why.append(f"`{show(value)}`, a cap")
            else:
                return None
        return why[0] if why else None

    def launched_in_chunks(self, binding: CallBinding) -> bool:
        """Is the launch inside a host loop whose variable its arguments read (`for off
        in range(0, NT, chunk): k[(min(chunk, NT - off),)](..., OFFSET=off)`)? Then the
        host loop, not the grid, covers the rest of the work."""
        host = binding.host
        if host is None:
            return False
        line = binding.call.lineno
        read = set().union(
            *(names_in(a) for a in binding.call.args),
            *(names_in(k.value) for k in binding.call.keywords),
        )
        body = host.node.body if isinstance(host.node.body, list) else []
        for stmt in all_statements(body):
            if (
                isinstance(stmt, (ast.For, ast.AsyncFor))
                and stmt.lineno < line <= (stmt.end_lineno or stmt.lineno)
                and names_in(stmt.target) & read
            ):
                return True
        return False

    def growing_tiles(self, binding: CallBinding, axis: int) -> tuple[str, Quantity] | None:
        """A bound of `axis` (`offs < N`) whose argument at this launch changes from call
        to call: (parameter, what it counts), or None."""
        for bound in self.tiles(binding.callee, axis).bounds:
            for arg in binding.args.get(bound, ()):
                for quantity in self._quantities.of(arg, binding.host, bound):
                    if quantity.role.per_call:
                        return bound, quantity
        return None

    def capped_count(self, binding: CallBinding, extent: ast.AST) -> Quantity | None:
        """What a grid extent capped at the grid limit counts, where every value it can
        hold is such a cap over a count that grows with the problem (`min(n_rows,
        65535)`, `n if n < 65535 else 65535`): the work the launcher has in mind, of which
        the grid covers only the first 65,535 tiles. None otherwise."""
        quantities = self._quantities.of(extent, binding.host)
        if quantities and all(q.cap is not None and q.role.per_call for q in quantities):
            return quantities[0]
        return None

    def dimension_use(self, binding: CallBinding, param: str) -> str | None:
        """How the kernel uses the value bound to `param` at this launch, as evidence of
        what a dimension of a host tensor is: "time" where the kernel walks it in tiles
        over the grid while holding another dimension of the same tensor whole (`[B, D,
        T]` with `tl.arange(0, D)`: the innermost is the time axis, D the features),
        "unrolled" where it only indexes with it and unrolls a loop over it (a head
        count of `[B, N, S, D]`), None where the kernel does not show."""
        kernel = binding.callee
        use = self.parameter_uses(kernel).get(param)
        if use == "unrolled":
            return "unrolled"
        if use != "grid":
            return None
        forms = self._quantities.value_forms
        tensors = {
            form[1]
            for arg in binding.args.get(param, ())
            for form in forms(arg, binding.host)
            if form[0] == "dim"
        }
        if not tensors:
            return None
        for whole in self._core.arange_extents(kernel):
            for arg in binding.args.get(whole, ()):
                for form in forms(arg, binding.host):
                    if form[0] == "dim" and form[1] in tensors and form[2] not in (0, -1):
                        rest = forms(binding.args[param][0], binding.host)
                        if all(f[0] == "dim" and f[2] != form[2] for f in rest):
                            return "time"
        return None

    def rounded_down(self, binding: CallBinding, axis: int, extent: ast.AST) -> bool:
        """Is the grid's extent along `axis` a count divided by the axis's block and
        rounded down (`n // BLOCK`) on every value it can hold, for a count that changes
        from call to call, with no remainder the launcher looks at (`n % BLOCK`)? Then
        the last partial tile has no program."""
        tiles = self.tiles(binding.callee, axis)
        if not tiles.blocks or not self.blocks_bound(binding, axis):
            return False
        forms = self._quantities.value_forms
        extent_forms = forms(extent, binding.host)
        if not extent_forms or any(f[0] != "floor" for f in extent_forms):
            return False
        blocks = {
            form
            for block in tiles.blocks
            for arg in binding.args[block]
            for form in forms(arg, binding.host)
        }
        if any(f[2] not in blocks or f[1][0] == "const" for f in extent_forms):
            return False
        counted = self._quantities.of(extent, binding.host)
        if not counted or not all(q.role.per_call for q in counted):
            return False
        divisors = {f[2] for f in extent_forms}
        return not any(
            forms(node.right, binding.host) & divisors for node in self._remainders(binding.host)
        )

    def _remainders(self, host: HostFunction | None) -> list[ast.BinOp]:
        """The `a % b` of a host function, kept per function."""
        if host is None:
            return []
        found = self._remainders_cache.get(id(host))
        if found is None:
            found = self._remainders_cache[id(host)] = [
                node
                for node in walk(host.node)
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)
            ]
        return found

    def is_core_count(self, binding: CallBinding, extent: ast.AST) -> bool:
        """Is a grid extent the core count itself (or capped by it), on every value?"""
        quantities = self._quantities.of(extent, binding.host)
        return bool(quantities) and all(q.role == Role.CORES for q in quantities)

    def unread_count(self, binding: CallBinding) -> tuple[str, Quantity] | None:
        """A parameter the kernel never reads, bound at this launch to a count that
        changes from call to call (`n_rows` passed to a kernel that takes its row from
        the program id alone): the work the launcher has in mind, which only a grid of
        that size would cover. (parameter, what it counts), or None."""
        kernel = binding.callee
        read = set().union(*(reads for reads, _assigned in kernel.statement_names()))
        for param in kernel.params:
            if param in read or param in kernel.constexpr_params:
                continue
            for arg in binding.args.get(param, ()):
                for quantity in self._quantities.of(arg, binding.host, param):
                    if quantity.role.per_call:
                        return param, quantity
        return None

    def multiple_of_grid(self, binding: CallBinding, loop: UnboundedTaskLoop) -> bool:
        """Is the loop's task count shown to be a multiple of the grid at this launch?
        The count's argument is the grid's extent itself, or both are literals and one
        divides the other."""
        if not (isinstance(loop.total, ast.Name) and loop.total.id in binding.args):
            return False
        shapes = self._quantities.grid_shapes(binding.call, binding.host)
        if not shapes or any(s is None or not s for s in shapes):
            return False
        forms = self._quantities.value_forms
        for arg in binding.args[loop.total.id]:
            counts = forms(arg, binding.host)
            for shape in shapes:
                extents = forms(shape[0], binding.host)
                if not counts or not extents:
                    return False
                if counts & extents:
                    continue
                for count in counts:
                    for extent in extents:
                        c = count[1] if count[0] == "const" else None
                        e = extent[1] if extent[0] == "const" else None
                        if not (isinstance(c, int) and isinstance(e, int)) or e == 0 or c % e:
                            return False
        return True
