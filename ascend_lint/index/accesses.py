"""Accesses: the global-memory reads and writes of a kernel, and what their addresses
are made of.

Per kernel (`of(fn)`): every `tl.load`, `tl.store` and `tl.atomic_*` with its
statement, its pointer expression and its mask, and whether it goes through a block
pointer. On top of them:

* `bases(fn, expr, order)`: the pointer parameters a pointer value may be offset from,
  through `+`/`-`, casts and hints, both arms of a `tl.where` or a conditional
  expression, `tl.advance`/`tl.make_block_ptr`, and the definitions that reach each
  read;
* `pointer_choices(fn)`: where one pointer value is chosen at run time between
  different tensors: a `tl.where` or `a if c else b` whose arms have different bases
  and whose value is used as an address, or a local assigned on both sides of a
  runtime `if` (different bases on the two paths) that an access reads after it. A
  choice under a compile-time test (`if HAS_X:`), arms from one tensor, and a pointer
  carried around a loop are not choices;
* `gathers(fn)`: the loads whose address holds a block of loaded lanes (an index
  vector read from memory, `lanes.loaded_block`), each with the term that holds it and
  whether those lanes vary along the access's innermost axis (one address per
  element) or only along an outer axis, the inner one contiguous (one row per index);
* `rows(fn)`: the 2-D (or wider) accesses that move rows of a contiguous innermost
  axis, with the expressions that size them: the tensor's row width (a block
  pointer's innermost `shape`, the bound a mask puts on the column vector), the pitch
  between rows (the stride of the next axis, the factor of the row vector) and the
  tile's innermost extent (`block_shape[-1]`, the column `tl.arange`'s extent), and
  the pointer parameter they address, for the rules that evaluate them under the
  kernel's configurations.

Which parameters are pointers: those the value model knows (`values.pointers`), and
those an arm of a choice is offset from (`tl.where(c, a + o, b + o)` makes `a` and `b`
pointers when its value is loaded through).

Depends on: the core facts and `lanes` (blocks, loaded lanes, consumers). Rules reach
it as `index.accesses`.

Costs: nothing until asked; the accesses of a kernel are one pass over its calls; a
base set is memoised per (expression, statement) and follows at most 16 definitions.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from ascend_lint.index.aliases import ATOMICS, LANGUAGE
from ascend_lint.index.constexpr import Definition
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.lanes import KernelLanes, LaneFacts, Memo
from ascend_lint.index.syntax import frozen_names, own_nodes, walk
from ascend_lint.index.values import kernel_values, pointer_root, strip_casts

_MAX_DEPTH = 16
_LOAD = f"{LANGUAGE}.load"
_STORE = f"{LANGUAGE}.store"
_MAKE_BLOCK_PTR = f"{LANGUAGE}.make_block_ptr"
_ADVANCE = f"{LANGUAGE}.advance"
_WHERE = f"{LANGUAGE}.where"
_HINTS = frozenset(
    f"{LANGUAGE}.{h}" for h in ("multiple_of", "max_contiguous", "max_constancy", "cast")
)


@dataclass(frozen=True)
class Access:
    """One global-memory access of a kernel."""

    call: ast.Call
    stmt: ast.stmt
    order: int
    kind: str  # "load", "store" or "atomic"
    pointer: ast.AST
    mask: ast.AST | None
    block_pointer: bool  # through `tl.make_block_ptr` / `tl.advance`


@dataclass(frozen=True)
class PointerChoice:
    """A pointer value chosen at run time between tensors."""

    node: ast.AST  # the `tl.where` call, the conditional expression, or the `if` test
    stmt: ast.stmt  # the statement that holds `node`
    how: str  # "where", "ifexp" or "if"
    bases: tuple[frozenset[str], ...]  # the pointer parameters on each side
    name: str | None  # for "if": the local chosen
    access: Access | None  # an access that reads the chosen value


@dataclass(frozen=True)
class Rows:
    """The row geometry of a 2-D access whose innermost axis is contiguous."""

    access: Access
    node: ast.AST  # where the sizes are written: the `make_block_ptr` call or the address
    base: str | None  # the pointer parameter addressed
    width: ast.AST | None  # elements of a tensor row the tile may cover
    pitch: ast.AST | None  # elements between the starts of two rows
    extent: ast.AST | None  # elements of the tile's innermost axis


@dataclass(frozen=True)
class Gather:
    """A load whose address holds a block of loaded lanes."""

    access: Access
    term: ast.AST  # the address term that holds the loaded lanes
    at: int  # the statement that evaluates `term`
    per_element: bool  # the loaded lanes vary along the innermost axis of the access


def _argument(call: ast.Call, name: str, position: int) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[position] if len(call.args) > position else None


class AccessFacts:
    """The accesses of every kernel of a module and what their addresses are made of."""

    def __init__(self, core: CoreFacts, lanes: LaneFacts):
        self.core = core
        self.lanes = lanes
        self.aliases = core.aliases
        self._accesses: dict[int, list[Access]] = {}
        self._pointer_params: dict[int, frozenset[str]] = {}
        self._bases = Memo()  # a value rebuilt from itself adds nothing meanwhile

    # -- the accesses ----------------------------------------------------------------------
    def of(self, fn: JitFunction) -> list[Access]:
        found = self._accesses.get(id(fn.node))
        if found is None:
            found = self._accesses[id(fn.node)] = self._collect(fn)
        return found

    def _collect(self, fn: JitFunction) -> list[Access]:
        out: list[Access] = []
        block_pointers = kernel_values(fn, self.aliases).block_pointers
        for call, stmt in fn.calls:
            qual = self.aliases.resolve(call.func)
            if qual == _LOAD:
                kind, mask_at = "load", 1
            elif qual == _STORE:
                kind, mask_at = "store", 2
            elif qual in ATOMICS:
                kind, mask_at = "atomic", 3 if qual.endswith("cas") else 2
            else:
                continue
            pointer = _argument(call, "pointer", 0)
            if pointer is None:
                continue
            through_block = (isinstance(pointer, ast.Name) and pointer.id in block_pointers) or (
                isinstance(pointer, ast.Call)
                and self.aliases.resolve(pointer.func) in (_MAKE_BLOCK_PTR, _ADVANCE)
            )
            out.append(
                Access(
                    call,
                    stmt,
                    fn.order_of(stmt),
                    kind,
                    pointer,
                    _argument(call, "mask", mask_at),
                    through_block,
                )
            )
        return out

    # -- bases -----------------------------------------------------------------------------
    def pointer_parameters(self, fn: JitFunction) -> frozenset[str]:
        """Parameters of `fn` that hold pointers (see the module doc)."""
        found = self._pointer_params.get(id(fn.node))
        if found is not None:
            return found
        params = set(fn.params) - fn.constexpr_params
        known = set(kernel_values(fn, self.aliases).pointers) & params
        for call, _stmt in fn.calls:
            if self.aliases.resolve(call.func) != _WHERE or len(call.args) != 3:
                continue
            for arm in call.args[1:]:
                root = pointer_root(strip_casts(arm, self.aliases))
                if root in params:
                    known.add(root)
        pointers = kernel_values(fn, self.aliases).pointers
        for name, values in fn.assignments.items():
            if name not in pointers:
                continue
            for value in values:
                for node in walk(value):
                    if isinstance(node, ast.IfExp):
                        for arm in (node.body, node.orelse):
                            root = pointer_root(strip_casts(arm, self.aliases))
                            if root in params:
                                known.add(root)
        found = self._pointer_params[id(fn.node)] = frozenset(known)
        return found

    def bases(self, fn: JitFunction, expr: ast.AST, order: int, depth: int = 0) -> frozenset[str]:
        """The pointer parameters `expr` may be offset from where statement `order` reads
        it (empty for a value that is no pointer)."""
        if depth > _MAX_DEPTH:
            return self._bases.truncated(frozenset())
        key = (id(fn.node), expr.id if isinstance(expr, ast.Name) else id(expr), order)
        return self._bases.get(key, frozenset(), lambda: self._bases_of(fn, expr, order, depth))

    def _bases_of(self, fn: JitFunction, expr: ast.AST, order: int, depth: int) -> frozenset[str]:
        expr = strip_casts(expr, self.aliases)
        if isinstance(expr, ast.Name):
            out: set[str] = set()
            for b in fn.reaching(expr.id, order):
                out |= self._binding_bases(fn, b, depth + 1)
            return frozenset(out)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            return self.bases(fn, expr.left, order, depth + 1) | self.bases(
                fn, expr.right, order, depth + 1
            )
        if isinstance(expr, ast.Subscript):
            return self.bases(fn, expr.value, order, depth + 1)
        if isinstance(expr, ast.IfExp):
            return self.bases(fn, expr.body, order, depth + 1) | self.bases(
                fn, expr.orelse, order, depth + 1
            )
        if isinstance(expr, ast.Call):
            qual = self.aliases.resolve(expr.func)
            if qual == _WHERE and len(expr.args) == 3:
                return self.bases(fn, expr.args[1], order, depth + 1) | self.bases(
                    fn, expr.args[2], order, depth + 1
                )
            if qual in (_MAKE_BLOCK_PTR, _ADVANCE) or qual in _HINTS:
                first = _argument(expr, "base", 0) if qual == _MAKE_BLOCK_PTR else None
                first = first if first is not None else (expr.args[0] if expr.args else None)
                return self.bases(fn, first, order, depth + 1) if first is not None else frozenset()
        return frozenset()

    def _binding_bases(self, fn: JitFunction, binding: Definition, depth: int) -> frozenset[str]:
        if binding.order < 0:
            if binding.name in self.pointer_parameters(fn):
                return frozenset({binding.name})
            return frozenset()
        if binding.value is None:
            return frozenset()
        return self.bases(fn, binding.value, binding.order, depth)

    # -- run-time choices between tensors ---------------------------------------------------
    def pointer_choices(self, fn: JitFunction) -> list[PointerChoice]:
        """Where a pointer value is chosen at run time between different tensors (see the
        module doc), in source order."""
        lanes = self.lanes.of(fn)
        found: list[PointerChoice] = []
        for call, stmt in fn.calls:
            if self.aliases.resolve(call.func) != _WHERE or len(call.args) != 3:
                continue
            order = fn.order_of(stmt)
            choice = self._arms(fn, call, call.args[0], call.args[1:], stmt, order, lanes, "where")
            if choice is not None:
                found.append(choice)
        for order, stmt in enumerate(fn.statements):
            if isinstance(stmt, (ast.If, ast.For, ast.While)):
                continue  # their own expressions: tests and ranges, no pointer chosen there
            for node in own_nodes(stmt):
                if isinstance(node, ast.IfExp):
                    choice = self._arms(
                        fn, node, node.test, [node.body, node.orelse], stmt, order, lanes, "ifexp"
                    )
                    if choice is not None:
                        found.append(choice)
        found += self._branch_choices(fn)
        return sorted(found, key=lambda c: (c.node.lineno, c.node.col_offset))

    def _arms(
        self,
        fn: JitFunction,
        node: ast.AST,
        test: ast.AST,
        arms: list[ast.AST],
        stmt: ast.stmt,
        order: int,
        lanes: KernelLanes,
        how: str,
    ) -> PointerChoice | None:
        sides = tuple(self.bases(fn, arm, order) for arm in arms)
        if not all(sides) or len(set().union(*sides)) < 2 or len(set(sides)) < 2:
            return None
        if not fn.is_runtime(test, self.aliases, at=stmt):
            return None
        if "address" not in lanes.consumers(node):
            return None
        return PointerChoice(node, stmt, how, sides, None, None)

    def _branch_choices(self, fn: JitFunction) -> list[PointerChoice]:
        """Locals assigned different tensors on the two sides of a runtime `if` and read
        by an access after it: one choice per (`if`, local), at its first such access."""
        found: dict[tuple[int, str], PointerChoice] = {}
        # only a name with a definition under a runtime `if` can merge two tensors (the
        # other side may be its parameter binding, which `definitions` does not list)
        runtime: dict[int, bool] = {}  # id(`if`) -> is its test a runtime value?

        def under_runtime_if(order: int) -> bool:
            for branch in fn.context(fn.statements[order]).branches:
                known = runtime.get(id(branch.node))
                if known is None:
                    known = runtime[id(branch.node)] = fn.is_runtime(
                        branch.test, self.aliases, at=branch.node
                    )
                if known:
                    return True
            return False

        branched = {
            name
            for name, defs in fn.definitions.items()
            if any(under_runtime_if(order) for order, _ in defs)
        }
        if not branched:
            return []
        # the walk below follows assignments from the address: only one that mentions a
        # name some assignment chain draws from such a local can reach one
        tainted = _flows_from(fn, branched)
        for access in self.of(fn):
            if not frozen_names(access.pointer) & tainted:
                continue
            todo = [(n, access.order) for n in frozen_names(access.pointer)]
            seen: set[tuple[str, int]] = set()
            while todo:
                name, at = todo.pop()
                if (name, at) in seen or len(seen) > 64:
                    continue
                seen.add((name, at))
                reach = [b for b in fn.reaching(name, at) if b.order < at]
                merge = self._runtime_merge(fn, reach, at) if name in branched else None
                if merge is not None:
                    branch, sides = merge
                    key = (id(branch), name)
                    if key not in found:
                        found[key] = PointerChoice(branch.test, branch, "if", sides, name, access)
                for b in reach:
                    if b.value is not None and b.order >= 0:
                        todo += [(n, b.order) for n in frozen_names(b.value)]
        return list(found.values())

    def _runtime_merge(
        self, fn: JitFunction, reach: list[Definition], at: int
    ) -> tuple[ast.If, tuple[frozenset[str], ...]] | None:
        """The runtime `if` that makes the definitions in `reach` (of one name, read at
        statement `at`) give different tensors, and the bases on each path."""
        if len(reach) < 2:
            return None
        sides = {b.order: self._binding_bases(fn, b, 0) for b in reach}
        if not all(sides.values()) or len(set(sides.values())) < 2:
            return None
        read = fn.context(fn.statements[at])
        around = {(id(br.node), br.taken) for br in read.branches}
        for b in reach:
            if b.order < 0:
                continue
            for branch in fn.context(fn.statements[b.order]).branches:
                if (id(branch.node), branch.taken) in around:
                    continue
                if fn.is_runtime(branch.test, self.aliases, at=branch.node):
                    ordered = tuple(sides[d.order] for d in sorted(reach, key=lambda d: d.order))
                    return branch.node, tuple(dict.fromkeys(ordered))
        return None

    # -- gathers ---------------------------------------------------------------------------
    def gathers(self, fn: JitFunction) -> list[Gather]:
        """The loads whose address holds a block of loaded lanes (see the module doc)."""
        loads = [a for a in self.of(fn) if a.kind == "load"]
        called = bool(self.core.helper_calls_to(fn))
        # an index vector is loaded before the load it addresses (or by a calling kernel)
        if len(loads) < 2 and not called:
            return []
        # Loaded lanes come from a `tl.load` of a block (in the address itself, or
        # assigned to a local) or from a parameter a caller fills: an address that
        # mentions no name drawn from one (flow-insensitively) and shares no statement
        # with another load cannot hold any, whatever `lanes` would answer. A scalar
        # load (`bos = tl.load(cu_seqlens + i_n)`) offsets a block, it holds no lanes.
        lanes = self.lanes.of(fn)
        assigned = fn.statement_names()
        sources = {
            name
            for a in loads
            if a.block_pointer or lanes.is_block(a.pointer, a.order)
            for name in assigned[a.order][1]
        }
        if called:
            sources |= set(fn.params)
        loaded_names = _flows_from(fn, sources)
        per_statement = Counter(a.order for a in loads)
        found: list[Gather] = []
        for access in loads:
            if access.block_pointer:
                continue
            if per_statement[access.order] < 2 and not (
                frozen_names(access.pointer) & loaded_names
            ):
                continue
            if not lanes.loaded_block(access.pointer, access.order):
                continue
            if _one_lane(lanes.shape(access.pointer)):
                continue  # a block of one element: a single scalar load
            for term, at in self._terms(fn, access.pointer, access.order, 0):
                if not lanes.loaded_block(term, at):
                    continue
                found.append(Gather(access, term, at, self._per_element(fn, lanes, term, at)))
                break
        return found

    def _terms(
        self, fn: JitFunction, expr: ast.AST, order: int, depth: int
    ) -> list[tuple[ast.AST, int]]:
        """The summands of an address, a local with one reaching definition replaced by
        the summands of its value (`p = x + idx * D; tl.load(p)` reads as `x + idx * D`)."""
        expr = strip_casts(expr, self.aliases)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            return self._terms(fn, expr.left, order, depth) + self._terms(
                fn, expr.right, order, depth
            )
        if isinstance(expr, ast.Name) and depth < _MAX_DEPTH:
            # the definition that builds the address; `p += step` only moves it
            built = self._built_by(fn, expr.id, order)
            if len(built) == 1 and isinstance(built[0].value, ast.BinOp):
                value = built[0].value
                if isinstance(value.op, (ast.Add, ast.Sub)):
                    return self._terms(fn, value, built[0].order, depth + 1)
        return [(expr, order)]

    def _built_by(self, fn: JitFunction, name: str, order: int) -> list[Definition]:
        """The definitions that build the value of `name` read at statement `order`,
        looking through the ones that only move it (`p += step`) and `p = None`."""
        lanes = self.lanes.of(fn)
        found: list[Definition] = []
        todo = list(lanes.reaching(name, order))
        seen: set[int] = set()
        while todo:
            b = todo.pop()
            if id(b) in seen or b.order < 0 or b.value is None or _is_none(b.value):
                continue
            seen.add(id(b))
            if _moves(b.value, name) or self._advances(b.value, name):
                todo += [d for d in lanes.reaching(name, b.order) if d.order != b.order]
            else:
                found.append(b)
        return found

    # -- rows ------------------------------------------------------------------------------
    def rows(self, fn: JitFunction) -> list[Rows]:
        """The row geometry of the 2-D accesses of `fn` (see the module doc)."""
        lanes = self.lanes.of(fn)
        found: list[Rows] = []
        # a pointer tile of rows broadcasts a row and a column vector: `x[:, None]`
        broadcasts = any(
            isinstance(node, ast.Subscript) and _adds_axis(node.slice)
            for stmt in fn.statements
            for node in own_nodes(stmt)
        )
        for access in self.of(fn):
            if access.block_pointer:
                made = self._block_pointer_of(fn, access.pointer, access.order)
                if made is not None:
                    rows = self._block_rows(fn, access, made)
                    if rows is not None:
                        found.append(rows)
                continue
            rows = self._tile_rows(fn, lanes, access) if broadcasts else None
            if rows is not None:
                found.append(rows)
        return found

    def _block_pointer_of(self, fn: JitFunction, pointer: ast.AST, order: int) -> ast.Call | None:
        """The `tl.make_block_ptr` call a block pointer comes from (through `tl.advance`
        and locals with one building definition)."""
        for _ in range(_MAX_DEPTH):
            if isinstance(pointer, ast.Call):
                qual = self.aliases.resolve(pointer.func)
                if qual == _MAKE_BLOCK_PTR:
                    return pointer
                if qual == _ADVANCE and pointer.args:
                    pointer = pointer.args[0]
                    continue
                return None
            if not isinstance(pointer, ast.Name):
                return None
            built = self._built_by(fn, pointer.id, order)
            if len(built) != 1:
                return None
            pointer, order = built[0].value, built[0].order
        return None

    def _block_rows(self, fn: JitFunction, access: Access, made: ast.Call) -> Rows | None:
        shape = _argument(made, "shape", 1)
        strides = _argument(made, "strides", 2)
        block = _argument(made, "block_shape", 4)
        if not all(isinstance(t, (ast.Tuple, ast.List)) for t in (shape, strides, block)):
            return None
        assert isinstance(shape, (ast.Tuple, ast.List))
        assert isinstance(strides, (ast.Tuple, ast.List))
        assert isinstance(block, (ast.Tuple, ast.List))
        if len(strides.elts) < 2 or len(shape.elts) != len(strides.elts):
            return None
        if not _is_one(strides.elts[-1]) or len(block.elts) != len(strides.elts):
            return None  # a transposed view: its rows run along another axis
        base = _argument(made, "base", 0)
        params = self.bases(fn, base, access.order) if base is not None else frozenset()
        return Rows(
            access,
            made,
            next(iter(params)) if len(params) == 1 else None,
            shape.elts[-1],
            strides.elts[-2],
            block.elts[-1],
        )

    def _tile_rows(self, fn: JitFunction, lanes: KernelLanes, access: Access) -> Rows | None:
        """`x + r[:, None] * P + c[None, :]`: the rows of a pointer tile, `c` a
        `tl.arange` vector on the last axis with no factor, `r` a vector on the axis
        before it scaled by the pitch `P`."""
        terms = self._terms(fn, access.pointer, access.order, 0)
        column = next((t for t, at in terms if _is_last_axis_vector(t)), None)
        if column is None:
            return None
        pitch = None
        for term, _at in terms:
            if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
                factors = [term.left, term.right]
                rows = [f for f in factors if _is_row_vector(f)]
                if len(rows) == 1:
                    pitch = next(f for f in factors if f is not rows[0])
        if pitch is None:
            return None
        extent = self._arange_extent(fn, column, access.order)
        mask = access.mask
        if isinstance(mask, ast.Name):  # `m = (...) & (c[None, :] < D)` built before
            built = self._built_by(fn, mask.id, access.order)
            mask = built[0].value if len(built) == 1 else None
        width = self._mask_bound(mask, column) if mask is not None else None
        params = self.bases(fn, access.pointer, access.order)
        return Rows(
            access,
            access.pointer,
            next(iter(params)) if len(params) == 1 else None,
            width,
            pitch,
            extent,
        )

    def _arange_extent(self, fn: JitFunction, column: ast.AST, order: int) -> ast.AST | None:
        """The extent of the `tl.arange` a column vector `c[None, :]` is offset from."""
        vector = column.value if isinstance(column, ast.Subscript) else column
        for _ in range(_MAX_DEPTH):
            vector = strip_casts(vector, self.aliases)
            if isinstance(vector, ast.Call):
                if self.aliases.resolve(vector.func) == f"{LANGUAGE}.arange":
                    start, end = (_argument(vector, n, i) for i, n in enumerate(("start", "end")))
                    if start is not None and isinstance(start, ast.Constant) and start.value == 0:
                        return end
                return None
            if isinstance(vector, ast.BinOp) and isinstance(vector.op, ast.Add):
                # `start + tl.arange(0, B)`: the arange side has the extent
                vector = vector.right if _has_arange(vector.right, self.aliases) else vector.left
                continue
            if isinstance(vector, ast.Name):
                built = self._built_by(fn, vector.id, order)
                if len(built) != 1:
                    return None
                vector, order = built[0].value, built[0].order
                continue
            return None
        return None

    @staticmethod
    def _mask_bound(mask: ast.AST, column: ast.AST) -> ast.AST | None:
        """`W` of a mask holding `c[None, :] < W` (or `c < W`) for the column `c`."""
        vector = column.value if isinstance(column, ast.Subscript) else column
        name = vector.id if isinstance(vector, ast.Name) else None
        for node in walk(mask):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
                continue
            if not isinstance(node.ops[0], ast.Lt):
                continue
            left = node.left.value if isinstance(node.left, ast.Subscript) else node.left
            if name is not None and isinstance(left, ast.Name) and left.id == name:
                return node.comparators[0]
        return None

    def _advances(self, value: ast.AST | None, name: str) -> bool:
        """`p = tl.advance(p, ...)`: a block pointer moved from itself."""
        return (
            isinstance(value, ast.Call)
            and self.aliases.resolve(value.func) == _ADVANCE
            and bool(value.args)
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == name
        )

    def _per_element(self, fn: JitFunction, lanes: KernelLanes, term: ast.AST, at: int) -> bool:
        """Do the loaded lanes of `term` vary along the innermost axis of the access?
        `idx[:, None] * D` varies along rows only: each row is one contiguous copy."""
        return not self._outer_only(fn, lanes, term, at, 0)

    def _outer_only(
        self, fn: JitFunction, lanes: KernelLanes, expr: ast.AST, at: int, depth: int
    ) -> bool:
        """Is `expr` the same in every lane of the last axis (`r[:, None]`, a load
        through such an address, arithmetic of those and scalars)?"""
        if depth > _MAX_DEPTH:
            return False
        expr = strip_casts(expr, self.aliases)
        if isinstance(expr, ast.Subscript):
            items = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
            last = items[-1] if items else None
            return len(items) >= 2 and isinstance(last, ast.Constant) and last.value is None
        if isinstance(expr, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp)):
            blocks = [c for c in _operands(expr) if lanes.is_block(c, at)]
            return bool(blocks) and all(
                self._outer_only(fn, lanes, c, at, depth + 1) for c in blocks
            )
        if isinstance(expr, ast.Name):
            reach = [
                b
                for b in lanes.reaching(expr.id, at)
                if b.order >= 0 and b.value is not None and not _moves(b.value, expr.id)
            ]
            return bool(reach) and all(
                self._outer_only(fn, lanes, b.value, b.order, depth + 1) for b in reach
            )
        if isinstance(expr, ast.Call):
            member = lanes.member(expr)
            if member in ("full", "zeros"):
                return True  # the same value everywhere
            if member == "load":
                pointer = _argument(expr, "pointer", 0)
                return pointer is not None and self._outer_only(fn, lanes, pointer, at, depth + 1)
            if member in ("where", "maximum", "minimum", "clamp", "multiple_of", "max_contiguous"):
                blocks = [a for a in expr.args if lanes.is_block(a, at)]
                return bool(blocks) and all(
                    self._outer_only(fn, lanes, a, at, depth + 1) for a in blocks
                )
        return False


def _operands(expr: ast.AST) -> list[ast.AST]:
    if isinstance(expr, ast.BinOp):
        return [expr.left, expr.right]
    if isinstance(expr, ast.UnaryOp):
        return [expr.operand]
    if isinstance(expr, ast.Compare):
        return [expr.left, *expr.comparators]
    if isinstance(expr, ast.BoolOp):
        return list(expr.values)
    if isinstance(expr, ast.IfExp):
        return [expr.body, expr.orelse]
    return []


def _moves(value: ast.AST | None, name: str) -> bool:
    """`p = p + step` / `p += step`: a definition that moves `name` from itself."""
    return (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, (ast.Add, ast.Sub))
        and isinstance(value.left, ast.Name)
        and value.left.id == name
    )


def _axes(expr: ast.AST) -> list[ast.AST] | None:
    items = (
        expr.slice.elts
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Tuple)
        else None
    )
    return items


def _is_last_axis_vector(expr: ast.AST) -> bool:
    """`c[None, :]`: a vector laid along the last of two axes."""
    items = _axes(expr)
    return (
        items is not None
        and len(items) == 2
        and isinstance(items[0], ast.Constant)
        and items[0].value is None
        and isinstance(items[1], ast.Slice)
    )


def _is_row_vector(expr: ast.AST) -> bool:
    """`r[:, None]`: a vector laid along the first of two axes."""
    items = _axes(expr)
    return (
        items is not None
        and len(items) == 2
        and isinstance(items[0], ast.Slice)
        and isinstance(items[1], ast.Constant)
        and items[1].value is None
    )


def _adds_axis(index: ast.AST) -> bool:
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(i, ast.Constant) and i.value is None for i in items)


def _flows_from(fn: JitFunction, sources: set[str] | frozenset[str]) -> set[str]:
    """`sources` and every local some chain of assignments computes from one of them
    (flow-insensitive: every assignment of a name, wherever it sits)."""
    readers: dict[str, list[str]] = {}
    for name, reads in fn.dependencies().items():
        for read in reads:
            readers.setdefault(read, []).append(name)
    found = set(sources)
    frontier = list(sources)
    while frontier:
        for name in readers.get(frontier.pop(), ()):
            if name not in found:
                found.add(name)
                frontier.append(name)
    return found


def _is_one(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value == 1


def _has_arange(expr: ast.AST, aliases) -> bool:
    return any(
        isinstance(n, ast.Call) and aliases.resolve(n.func) == f"{LANGUAGE}.arange"
        for n in walk(expr)
    )


def _one_lane(shape) -> bool:
    """A known shape whose every dimension is the literal 1."""
    return bool(shape) and all(isinstance(d, ast.Constant) and d.value == 1 for d in shape)


def _is_none(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is None
