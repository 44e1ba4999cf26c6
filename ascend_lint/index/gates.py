"""Gate accesses: how a kernel or helper addresses one pointer parameter stored
`[B, T, HV]` (a gate `g` it reads, or an output `dg` it writes along time), use by use,
and where its sequence starts come from.

For one pointer parameter, the names that hold addresses into it (the parameter after
`g += ...`, `p = g + ...`, block pointers over it, `tl.advance` of them, pointers a
helper returns), and every statement that touches one, as a `GateSite`:

* `offset`: `g += OFF`, `p = g + OFF`, `return g + OFF`;
* `block`:  a 1-D `tl.make_block_ptr` over it (its base terms and its stride);
* `load`:   `tl.load(g + ...)` with address arithmetic (scalar or 1-D vector);
* `store`:  `tl.store(dg + ..., x)` or `tl.atomic_*(dg + ..., x)`, the same;
* `helper`: the pointer handed to a `@triton.jit` helper.

Accesses that need nothing (`tl.load(p_g)`, `tl.store(p_dg, x)`, `tl.advance(p_g, ...)`,
`g.dtype`) are not sites; `GateUses.writes` says whether any access writes. Any other
use (a 2-D tile, the pointer as a stored value or on the right of `+`, a call the index
cannot resolve) makes the answer None: the tensor is not accessed in a shape whose
re-addressing is mechanical.

Also here: how a sequence start is defined (`sequence_start`) and what is computed
from the starts; what each summand of an address counts on each path, followed through
the definitions that reach it (`time_math_term`: a position along time times the head
count, or whole rows; `fixed_length_start`: a start that is the batch row `i_b * T` on
the fixed-length path); and what the host does with a launch argument (may it be None,
does it hold nothing yet, do the kernel's decorators look at it), the questions the
gate layout fix asks before it rewrites a launcher.

Depends on: the core facts (helper bindings, aliases), `host` (what a launch argument
holds), `sequences` (token offsets and lengths, callers' included), `quantities` (what
a launcher passes for a row count) and, per kernel, the value model (`on_paths`).
Nothing else of the index depends on this object.

Costs: one walk over the function's statements per (function, parameter), cached;
the readers of each local once per function; the starts and what derives from them
once per function; the None tests of a host function once per host function; the
per-path expansion only for the addresses of transposed tensors the rules ask about,
memoised per (expression, statement).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.index.aliases import LANGUAGE
from ascend_lint.index.context import Branch
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import HostFunction
from ascend_lint.index.naming import is_head_count, is_length, is_sequence_length
from ascend_lint.index.quantities import QuantityFacts, Role
from ascend_lint.index.sequences import SequenceFacts, broadcasts, strip_casts, table_read
from ascend_lint.index.syntax import (
    MAX_HELPER_DEPTH,
    additive_terms,
    children,
    factors,
    names_in,
    own_nodes,
    walk,
)
from ascend_lint.index.values import PathProduct, ValuePath, kernel_values, pointer_root

_LOAD = f"{LANGUAGE}.load"
_STORE = f"{LANGUAGE}.store"
_ATOMIC = f"{LANGUAGE}.atomic_"
_MAKE_BLOCK_PTR = f"{LANGUAGE}.make_block_ptr"
_ADVANCE = f"{LANGUAGE}.advance"
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)
_METADATA = frozenset({"dtype", "type", "shape"})
_BLOCK_PTR_PARAMS = ("base", "shape", "strides", "offsets", "block_shape", "order")


@dataclass(frozen=True)
class GateSite:
    """One address computation over the gate that a layout change has to rewrite."""

    stmt: ast.stmt
    kind: str  # "offset" | "block" | "load" | "store" | "helper"
    # The address: a sum whose first term is the pointer (`g + bos * HV + i_h`), or for
    # `g += OFF` the offset alone; None when the pointer is used bare (`make_block_ptr(g, ...)`).
    address: ast.AST | None
    pointer_first: bool
    stride: ast.AST | None = None  # block: the one stride
    call: ast.Call | None = None  # block, load, helper: the call
    callee: JitFunction | None = None  # helper: the function called ...
    callee_param: str | None = None  # ... and its parameter that receives the pointer


@dataclass(frozen=True)
class GateUses:
    pointers: frozenset[str]
    sites: tuple[GateSite, ...]
    returns_pointer: bool  # a helper that hands back an address into the gate
    writes: bool = False  # a store or an atomic through one of the pointers (here only)


@dataclass(frozen=True)
class SequenceStart:
    """Where a sequence-start local (`bos`) comes from: loaded from an offsets table
    (packed varlen storage), a batch index scaled by the length (`bos = i_b * T`), or
    one of the two on each side of one `if`."""

    name: str
    packed: bool
    batch_index: str | None  # `i_b` of `bos = i_b * T`
    length: str | None  # `T` of `bos = i_b * T`
    branch: Branch | None  # the side that loads from the table, when both exist


def block_ptr_arg(call: ast.Call, name: str) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    i = _BLOCK_PTR_PARAMS.index(name)
    return call.args[i] if i < len(call.args) else None


def _one_element(node: ast.AST | None) -> ast.AST | None:
    if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 1:
        return node.elts[0]
    return None


class GateFacts:
    """Gate accesses, sequence starts and what the host does with a launch argument
    (see the module doc)."""

    def __init__(
        self,
        core: CoreFacts,
        host: HostFacts,
        sequences: SequenceFacts,
        quantities: QuantityFacts,
    ):
        self._aliases = core.aliases
        self._helper_binding = core.helper_binding
        self._launches_of = core.launches_of
        self._host_values = host.host_values
        self._sequences = sequences
        self._quantities = quantities
        self._row_extent_cache: dict[tuple[int, str], bool] = {}
        self._gate_cache: dict[tuple[int, str], GateUses | None] = {}
        self._gate_pointer_cache: dict[tuple[int, str], set[str]] = {}
        self._readers_cache: dict[int, dict[str, list[str]]] = {}
        self._derived_cache: dict[tuple[int, str], set[str]] = {}
        self._row_counts_cache: dict[int, dict[str, str]] = {}
        self._none_tests_cache: dict[int, frozenset[str]] = {}

    def gate_pointers(self, fn: JitFunction, param: str, depth: int = 0) -> set[str]:
        """`param` and the locals holding addresses into it: sums rooted at one, block
        pointers over one, and what a helper returns when it returns such an address."""
        key = (id(fn), param)
        cached = self._gate_pointer_cache.get(key)
        if cached is None:
            cached = self._gate_pointer_cache[key] = self._gate_pointers(fn, param, depth)
        return cached

    def _gate_pointers(self, fn: JitFunction, param: str, depth: int) -> set[str]:
        # To the end (an alias it missed would keep its legacy addressing), visiting only
        # the locals whose values read a name just found to be an address.
        readers = self._readers(fn)
        pointers = {param}
        frontier = [param]
        while frontier:
            for name in readers.get(frontier.pop(), ()):
                if name in pointers:
                    continue
                if any(self._is_address(fn, v, pointers, depth) for _, v in fn.definitions[name]):
                    pointers.add(name)
                    frontier.append(name)
        return pointers

    def _readers(self, fn: JitFunction) -> dict[str, list[str]]:
        """name -> the locals one of whose assignments reads it."""
        cached = self._readers_cache.get(id(fn))
        if cached is None:
            cached = {}
            for name, defs in fn.definitions.items():
                for read in {n for _, v in defs for n in names_in(v)}:
                    cached.setdefault(read, []).append(name)
            self._readers_cache[id(fn)] = cached
        return cached

    def _is_address(self, fn: JitFunction, value: ast.AST, pointers: set[str], depth: int) -> bool:
        if isinstance(value, (ast.BinOp, ast.Name)):
            return pointer_root(value) in pointers
        if not isinstance(value, ast.Call):
            return False
        qual = self._aliases.resolve(value.func)
        if qual in (_MAKE_BLOCK_PTR, _ADVANCE):
            base = block_ptr_arg(value, "base") if qual == _MAKE_BLOCK_PTR else value.args[0]
            return base is not None and pointer_root(base) in pointers
        binding = self._helper_binding(value) if qual is None else None
        if binding is not None and depth < MAX_HELPER_DEPTH:
            for p, exprs in binding.args.items():
                if any(pointer_root(e) in pointers for e in exprs):
                    uses = self.gate_uses(binding.callee, p, depth + 1)
                    if uses is not None and uses.returns_pointer:
                        return True
        return False

    def gate_uses(self, fn: JitFunction, param: str, depth: int = 0) -> GateUses | None:
        """Every use of the addresses into `param`, or None if one of them is of a kind
        a mechanical re-addressing does not understand (see the module docstring)."""
        key = (id(fn), param)
        if key in self._gate_cache:
            return self._gate_cache[key]
        self._gate_cache[key] = None  # a helper that recurses into itself is not understood
        result = self._gate_uses(fn, param, depth)
        self._gate_cache[key] = result
        return result

    def _gate_uses(self, fn: JitFunction, param: str, depth: int) -> GateUses | None:
        pointers = self.gate_pointers(fn, param, depth)
        sites: dict[int, GateSite] = {}
        returns_pointer = writes = False
        for stmt, (reads, _writes) in zip(fn.statements, fn.statement_names()):
            if not reads & pointers and not (
                isinstance(stmt, ast.AugAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id in pointers
            ):
                continue
            if not isinstance(stmt, _SIMPLE):
                return None  # a loop or branch test that reads the gate
            if isinstance(stmt, ast.AugAssign):
                if not (
                    isinstance(stmt.target, ast.Name)
                    and stmt.target.id in pointers
                    and isinstance(stmt.op, ast.Add)
                    and not names_in(stmt.value) & pointers
                ):
                    return None
                sites[id(stmt)] = GateSite(stmt, "offset", stmt.value, False)
                continue
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                if self._is_address(fn, stmt.value, pointers, depth):
                    returns_pointer = True
            parents = {
                id(child): node for node in walk(stmt) for child in children(node)
            }  # a simple statement: no nested bodies
            for node in own_nodes(stmt):
                if not (
                    isinstance(node, ast.Name)
                    and node.id in pointers
                    and isinstance(node.ctx, ast.Load)
                ):
                    continue
                site = self._classify(fn, stmt, node, parents, depth)
                if site is None:
                    return None
                if site is _STORED or (isinstance(site, GateSite) and site.kind == "store"):
                    writes = True
                if isinstance(site, GateSite):
                    sites.setdefault(id(site.call or site.address), site)
        ordered = sorted(sites.values(), key=lambda s: fn.order_of(s.stmt))
        return GateUses(frozenset(pointers), tuple(ordered), returns_pointer, writes)

    def _classify(
        self,
        fn: JitFunction,
        stmt: ast.stmt,
        name: ast.Name,
        parents: dict[int, ast.AST],
        depth: int,
    ) -> GateSite | bool | object | None:
        """The site a pointer name takes part in; True for a read and `_STORED` for a
        write that need no change, None for a use that is not understood."""
        expr: ast.AST = name
        parent = parents.get(id(expr))
        while isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub)):
            if parent.left is not expr:
                return None  # the pointer on the right of `+` or `-`
            expr, parent = parent, parents.get(id(parent))
        bare = expr is name
        address = None if bare else expr
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.Return)) and parent is stmt:
            if isinstance(parent, ast.Assign) and not (
                len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)
            ):
                return None
            return True if bare else GateSite(stmt, "offset", expr, True)
        if isinstance(parent, ast.Attribute) and bare and parent.attr in _METADATA:
            return True
        call = parent
        if isinstance(parent, ast.keyword):
            call = parents.get(id(parent))
        if not isinstance(call, ast.Call) or expr is call.func:
            return None
        qual = self._aliases.resolve(call.func)
        if qual == _MAKE_BLOCK_PTR:
            if block_ptr_arg(call, "base") is not expr:
                return None
            stride = _one_element(block_ptr_arg(call, "strides"))
            if stride is None or _one_element(block_ptr_arg(call, "shape")) is None:
                return None  # a 2-D tile of the gate
            return GateSite(stmt, "block", address, not bare, stride=stride, call=call)
        if qual == _LOAD:
            if not (call.args and call.args[0] is expr):
                return None
            if bare:
                return True
            if broadcasts(expr):
                return None
            return GateSite(stmt, "load", expr, True, call=call)
        if qual == _STORE or (qual or "").startswith(_ATOMIC):
            if _written_pointer(call) is not expr:
                return None  # the address itself stored as a value
            if bare:
                return _STORED
            if broadcasts(expr):
                return None
            return GateSite(stmt, "store", expr, True, call=call)
        if qual == _ADVANCE:
            return True if bare and call.args and call.args[0] is expr else None
        if qual is not None:
            return None  # anything else of triton's
        binding = self._helper_binding(call)
        if binding is not None:
            bound = [p for p, exprs in binding.args.items() if any(e is expr for e in exprs)]
            if len(bound) != 1 or depth >= MAX_HELPER_DEPTH:
                return None
            return GateSite(
                stmt,
                "helper",
                address,
                not bare,
                call=call,
                callee=binding.callee,
                callee_param=bound[0],
            )
        return None

    def stores_through(self, fn: JitFunction, param: str) -> bool:
        """Does `fn` write memory through an address into `param` (a store, an atomic)?
        Looser than `GateUses.writes`: any address expression that mentions a pointer."""
        pointers = self.gate_pointers(fn, param)
        for call, _stmt in fn.calls:
            qual = self._aliases.resolve(call.func) or ""
            if qual == _STORE or qual.startswith(_ATOMIC):
                target = _written_pointer(call)
                if target is not None and names_in(target) & pointers:
                    return True
        return False

    def gate_param(self, fn: JitFunction, pointer: str) -> str | None:
        """The pointer parameter whose addresses `pointer` holds, if exactly one."""
        if pointer in fn.params:
            return pointer
        # Only a parameter some address is rooted at can be the one.
        candidates = kernel_values(fn, self._aliases).pointers & set(fn.params)
        found = [p for p in fn.params if p in candidates and pointer in self.gate_pointers(fn, p)]
        return found[0] if len(found) == 1 else None

    def sequence_start(self, fn: JitFunction, name: str) -> SequenceStart | None:
        """How `name` is defined when it is a sequence start; None when it is not one,
        or when its definitions are not exactly the two documented ones."""
        defs = self._start_definitions(fn, name)
        if not defs or name in fn.params:
            return None
        seq = self._sequences.of(fn)
        packed_at: Branch | None = None
        packed = False
        batch: tuple[str, str] | None = None
        batch_at: Branch | None = None
        for raw, branches, from_table in defs:
            value = strip_casts(raw, self._aliases)
            innermost = branches[-1] if branches else None
            if from_table:
                if packed:
                    return None
                packed, packed_at = True, innermost
                continue
            left, right = _batch_operands(value, self._aliases)
            if (
                isinstance(left, ast.Name)
                and isinstance(right, ast.Name)
                and (right.id in seq.lengths or is_sequence_length(right.id))
                and batch is None
            ):
                # `i_b * T`, or `tl.cast(i_b, tl.int64) * T` as an int64 fix writes it
                batch, batch_at = (left.id, right.id), innermost
                continue
            return None
        if packed and batch is not None:
            if (
                packed_at is None
                or batch_at is None
                or packed_at.node is not batch_at.node
                or packed_at.taken == batch_at.taken
            ):
                return None
            return SequenceStart(name, True, batch[0], batch[1], packed_at)
        if packed:
            return SequenceStart(name, True, None, None, None)
        if batch is not None:
            return SequenceStart(name, False, batch[0], batch[1], None)
        return None

    # -- what an address term counts, path by path ------------------------------------
    def time_math_term(
        self, fn: JitFunction, expr: ast.AST, order: int, pointers: set[str]
    ) -> ast.AST | None:
        """The summand of the address `expr` (read at statement `order`) that is
        [B, T, HV] time math on some path: a product written with a head count factor
        whose other factors, on that path, count no whole rows. `bos * HV` is one where `bos` is a
        packed offset (on the varlen path); `i_b * T * HV` (a batch step, `bos = i_b * T`)
        and `i_k * all * HV` with `all = B * T` (whole planes of an axis before the
        batch) are the same element counts in [B, HV, T] storage and are not. Locals are
        followed through the definitions that reach the read on each path (`values`)."""
        seq = self._sequences.of(fn)
        keep = frozenset(pointers) | frozenset(seq.lengths)
        values = kernel_values(fn, self._aliases)
        for term in additive_terms(expr):
            written = factors(term)
            if len(written) < 2 or not any(
                isinstance(f, ast.Name) and is_head_count(f.id) for f in written
            ):
                # The head count scales the summand as written (`bos * HV`); one met only
                # inside a local (`index * stride` with `stride = H * K * V`, a whole
                # state per slot) says nothing about the time axis.
                continue
            paths = values.on_paths(term, order, keep)
            if paths is None:  # past the expansion's bounds: the summand as written
                paths = [ValuePath(frozenset(), (PathProduct(tuple(factors(term))),))]
            for path in paths:
                if any(self._scales_time(fn, p, pointers) for p in path.products):
                    return term
        return None

    def _scales_time(self, fn: JitFunction, product: PathProduct, pointers: set[str]) -> bool:
        """Is one product of an address a position along time times the head count?"""
        parts = product.factors  # a literal is a position too (`x + 1 * HV`: one row on)
        if any(isinstance(f, ast.Constant) and f.value == 0 for f in parts):
            return False
        heads = [f for f in parts if isinstance(f, ast.Name) and is_head_count(f.id)]
        if not heads:
            return False
        others = [f for f in parts if f is not heads[0]]
        if not others:
            return False
        lengths = self._sequences.of(fn).lengths
        names = [f.id for f in others if isinstance(f, ast.Name)]
        if any(is_length(n) or n in lengths for n in names):
            return False  # whole rows: a batch step `i_b * T * HV`
        # an index times a row count the launcher passes (`i_k * total * HV`): whole planes
        return not (len(others) > 1 and any(self._counts_rows(fn, n, pointers) for n in names))

    def _counts_rows(self, fn: JitFunction, name: str, pointers: set[str]) -> bool:
        """Is parameter `name` a runtime count of rows (tokens, elements) at every launch?"""
        key = (id(fn), name)
        known = self._row_extent_cache.get(key)
        if known is not None:
            return known
        found = False
        if name in fn.params and name not in fn.constexpr_params and name not in pointers:
            launches = self._launches_of(fn)
            roles = [
                q.role
                for binding in launches
                for expr in binding.args.get(name, [])
                for q in self._quantities.of(expr, binding.host, name)
            ]
            found = bool(roles) and all(role is Role.LENGTH for role in roles)
        self._row_extent_cache[key] = found
        return found

    def fixed_length_start(
        self, fn: JitFunction, offset: ast.Name, order: int
    ) -> tuple[ast.AST, str] | None:
        """Where statement `order` reads the token offset `offset` (a bare summand of a
        row base): on a path where it is no offsets-table read (the fixed-length path),
        does it step the batch by a sequence length without the head count
        (`bos = i_b * T`)? Then (that definition's value, the test that selects the
        varlen path), else None. A start that is 0 on that path, with the batch step
        in another summand (`i_b * HV * T`), or whose batch term carries the head count
        (`bos_bh = i_b * HV * T`) is right in [B, HV, T] storage."""
        seq = self._sequences.of(fn)
        paths = kernel_values(fn, self._aliases).on_paths(offset, order, frozenset(seq.lengths))
        if not paths:
            return None
        params = set(fn.params)
        varlen: list[PathProduct] = []
        fixed: list[PathProduct] = []
        for path in paths:
            read = [p for p in path.products if self._table_read(p, seq.offsets_tables, params)]
            if read:
                varlen += read
                continue
            for product in path.products:
                parts = [f for f in product.factors if not isinstance(f, ast.Constant)]
                names = [f.id for f in parts if isinstance(f, ast.Name)]
                if (
                    len(parts) > 1
                    and product.through
                    and any(is_length(n) or n in seq.lengths for n in names)
                    and not any(is_head_count(n) for n in names)
                ):
                    fixed.append(product)
        if not fixed or not varlen:
            return None
        test = self._varlen_test(fn, varlen[0].through, fixed[0].through)
        if test is None:
            return None
        value = fixed[0].through[0].value
        return (value, test) if value is not None else None

    def _table_read(self, product: PathProduct, tables: set[str], params: set[str]) -> bool:
        return any(
            (read := table_read(f, self._aliases, params)) is not None and read.table in tables
            for f in product.factors
        )

    @staticmethod
    def _varlen_test(fn: JitFunction, varlen, fixed) -> str | None:
        """The test, as text, whose side loads the offset: that of the table read's
        definition, else the other side of the fixed-length one's."""
        for chain, on_varlen in ((varlen, True), (fixed, False)):
            if chain and chain[0].order >= 0:
                branches = fn.context(fn.statements[chain[0].order]).branches
                if branches:
                    test, taken = ast.unparse(branches[-1].test), branches[-1].taken
                    if taken == on_varlen:
                        return test
                    return f"not ({test})" if not test.startswith("not ") else test[4:]
        return None

    def _start_definitions(
        self, fn: JitFunction, name: str
    ) -> list[tuple[ast.AST, tuple[Branch, ...], bool]]:
        """Each definition of `name`: (its value, the compile-time branches around it,
        whether it reads the kernel's offsets table)."""
        tables = self._sequences.of(fn).offsets_tables
        params = set(fn.params)
        out = []
        for order, raw in fn.definitions.get(name, ()):
            read = table_read(raw, self._aliases, params)
            branches = fn.context(fn.statements[order]).branches
            out.append((raw, branches, read is not None and read.table in tables))
        return out

    # -- sequence starts and what is computed from them -------------------------------
    def sequence_starts(self, fn: JitFunction) -> set[str]:
        """The token offsets of `fn` that `sequence_start` can describe."""
        return {
            n
            for n in self._sequences.of(fn).token_offsets
            if self.sequence_start(fn, n) is not None
        }

    def start_derived(self, fn: JitFunction) -> set[str]:
        """Every token offset and the locals computed from one (lengths, differences of
        starts, excepted)."""
        return self._derived_from(fn, set(self._sequences.of(fn).token_offsets), "derived")

    def batch_derived(self, fn: JitFunction) -> set[str]:
        """Locals computed from a token offset that is not a packed varlen offset alone:
        in packed storage a global token index is a time index like any other, in
        [B, T] storage (`bos = i_b * T`, or either) it carries the batch."""
        cached = self._derived_cache.get((id(fn), "batch"))
        if cached is not None:
            return cached  # without describing every start again
        roots = set()
        for name in self._sequences.of(fn).token_offsets:
            start = self.sequence_start(fn, name)
            if start is None or not start.packed or start.batch_index is not None:
                roots.add(name)
        return self._derived_from(fn, roots, "batch")

    def _derived_from(self, fn: JitFunction, roots: set[str], kind: str) -> set[str]:
        key = (id(fn), kind)
        cached = self._derived_cache.get(key)
        if cached is not None:
            return cached
        lengths = self._sequences.of(fn).lengths
        derived = set(roots)
        deps = fn.dependencies()
        while True:  # to the end, not a bounded number of rounds: a missed name is unsafe
            grown = {
                name
                for name, reads in deps.items()
                if name not in derived and name not in lengths and reads & derived
            }
            if not grown:
                break
            derived |= grown
        self._derived_cache[key] = derived
        return derived

    def whole_row_counts(self, fn: JitFunction) -> dict[str, str]:
        """Locals that count whole sequences of a stored length, with that length
        (`all = B * T` -> {"all": "T"}, computed before a varlen branch rebinds `T`, in
        no loop). `all * HV` elements are whole `[T, HV]` planes, as many as in `[HV, T]`
        storage: an offset over a leading axis (`dg += i_k * all * HV`) is the same in
        both layouts, not [B, T, HV] math."""
        cached = self._row_counts_cache.get(id(fn))
        if cached is not None:
            return cached
        counts: dict[str, str] = {}
        for name in self._sequences.of(fn).token_offsets:
            start = self.sequence_start(fn, name)
            if start is None or start.packed or start.length is None or name in fn.params:
                continue
            rebinds = [order for order, _ in fn.definitions.get(start.length, ())]
            if all(
                not fn.context(fn.statements[order]).loops and all(order < r for r in rebinds)
                for order, _ in fn.definitions.get(name, ())
            ):
                counts[name] = start.length
        self._row_counts_cache[id(fn)] = counts
        return counts

    # -- what the host does with a launch argument ------------------------------------
    def may_be_none(self, host: HostFunction | None, expr: ast.AST) -> bool:
        """Can a host argument be None where it is passed? Yes unless every value the host
        gives it is known and not None: a `None` among them (`x if g is not None else
        None`), a parameter without a non-optional annotation (`g=None`, `g`,
        `g: Optional[...]`) that is not used unconditionally first (`B, T, H = g.shape`),
        or a comparison of it with None."""
        if host is None:
            return True
        node = host.node
        arguments: dict[str, ast.arg] = {}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            arguments = {a.arg: a for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        for value, _guards in self._host_values(expr, host):
            if any(isinstance(n, ast.Constant) and n.value is None for n in walk(value)):
                return True
            if isinstance(value, ast.Name) and _used_unconditionally(node, value.id):
                continue  # `B, T, HV = g.shape` already fails for None
            if isinstance(value, ast.Name) and value.id in host.params:
                arg = arguments.get(value.id)
                annotation = ast.unparse(arg.annotation) if arg and arg.annotation else None
                if annotation is None or "None" in annotation or "Optional" in annotation:
                    return True
        return ast.unparse(expr) in self._compared_with_none(host)

    def _compared_with_none(self, host: HostFunction) -> frozenset[str]:
        """The expressions (as text) a host function compares with None, found once."""
        cached = self._none_tests_cache.get(id(host))
        if cached is None:
            cached = self._none_tests_cache[id(host)] = frozenset(
                ast.unparse(n.left)
                for n in walk(host.node)
                if isinstance(n, ast.Compare)
                and any(isinstance(c, ast.Constant) and c.value is None for c in n.comparators)
            )
        return cached

    def holds_nothing_yet(self, host: HostFunction | None, expr: ast.AST) -> bool:
        """Is the launch argument `expr` a host local allocated uninitialised
        (`torch.empty(...)`, `x.new_empty(...)`, `torch.empty_like(x)`, or None) that
        nothing reads or writes before the launch (metadata such as `.shape` aside)? Its
        content is undefined there, so a copy of it in another layout need not carry it."""
        if host is None or not isinstance(expr, ast.Name) or expr.id in host.params:
            return False
        values = host.assignments.get(expr.id, [])
        if len(values) != 1 or not _uninitialised(values[0]):
            return False
        allocated = (values[0].end_lineno, values[0].end_col_offset)
        launched = (expr.lineno, expr.col_offset)
        uses, harmless = [], set()  # every read of the name; those of metadata or `is None`
        for node in walk(host.node):
            if isinstance(node, ast.Name) and node.id == expr.id and node is not expr:
                uses.append(node)
            elif isinstance(node, ast.Attribute) and node.attr in _HOST_METADATA:
                harmless.add(id(node.value))
            elif isinstance(node, ast.Compare) and all(
                isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops
            ):
                harmless.update(id(operand) for operand in (node.left, *node.comparators))
        return all(
            id(node) in harmless or not allocated < (node.lineno, node.col_offset) < launched
            for node in uses
        )

    @staticmethod
    def hooks_test_none(fn: JitFunction, param: str) -> bool:
        """Does a decorator compare the argument with None
        (`@triton.heuristics({'USE_G': lambda args: args['g'] is not None})`)?"""
        for decorator in fn.node.decorator_list:
            for n in walk(decorator):
                if (
                    isinstance(n, ast.Compare)
                    and isinstance(n.left, ast.Subscript)
                    and isinstance(n.left.slice, ast.Constant)
                    and n.left.slice.value == param
                ):
                    return True
        return False

    @staticmethod
    def hooks_read(fn: JitFunction, param: str) -> bool:
        """Does a decorator look at the argument beyond `args['g'] is None` (a shape, a
        stride), which a copy in another layout would change?"""
        for decorator in fn.node.decorator_list:
            compared: set[int] = set()
            lookups: list[ast.Subscript] = []  # `args['g']`
            for node in walk(decorator):
                if isinstance(node, ast.Compare) and all(
                    isinstance(c, ast.Constant) and c.value is None for c in node.comparators
                ):
                    compared.add(id(node.left))
                elif (
                    isinstance(node, ast.Subscript)
                    and isinstance(node.slice, ast.Constant)
                    and node.slice.value == param
                ):
                    lookups.append(node)
            if any(id(node) not in compared for node in lookups):
                return True
        return False


_HOST_METADATA = frozenset({"shape", "dtype", "device", "stride", "size", "numel", "dim", "ndim"})
_EMPTY_ALLOCATORS = frozenset({"empty", "empty_like", "empty_strided"})


def _batch_operands(value: ast.AST, aliases) -> tuple[ast.AST | None, ast.AST | None]:
    """The two operands of a product, casts stripped from each (`tl.cast(i_b, ...) * T`)."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        return strip_casts(value.left, aliases), strip_casts(value.right, aliases)
    return None, None


def _uninitialised(value: ast.AST) -> bool:
    """`torch.empty(...)` and friends, `x.new_empty(...)`, None, or a choice of those."""
    if isinstance(value, ast.IfExp):
        return _uninitialised(value.body) and _uninitialised(value.orelse)
    if isinstance(value, ast.Constant):
        return value.value is None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    func = value.func
    if func.attr == "new_empty":
        return True
    return (
        func.attr in _EMPTY_ALLOCATORS
        and isinstance(func.value, ast.Name)
        and func.value.id == "torch"
    )


_STORED = object()  # `_classify`: a write through the bare pointer (`tl.store(p_dg, x)`)


def _written_pointer(call: ast.Call) -> ast.AST | None:
    """The address a `tl.store` / `tl.atomic_*` call writes."""
    for kw in call.keywords:
        if kw.arg == "pointer":
            return kw.value
    return call.args[0] if call.args else None


def _used_unconditionally(host: ast.AST, name: str) -> bool:
    """Does a statement of the function's own body (not under an `if`, a conditional
    expression or a boolean operator) read an attribute of `name` (`g.shape`)?"""
    body = getattr(host, "body", [])
    for stmt in body if isinstance(body, list) else []:
        if isinstance(stmt, (ast.If, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack: list[ast.AST] = [stmt]
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.IfExp, ast.BoolOp, ast.Lambda, ast.If)):
                continue
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                if n.value.id == name:
                    return True
            stack.extend(children(n))
    return False
