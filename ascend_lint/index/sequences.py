"""Sequences: which values in a kernel are token positions, sequence lengths and
vectors along the time/token axis, and which pointer arguments are offsets tables.

Decided by use, not by name:

* an **offsets table** is a pointer argument read at `e` and `e + 1` whose two values
  delimit a span: one is subtracted from the other, or they bound a `range`
  (`cu_seqlens`, `cu_q_lens`, `query_start_loc`, `seq_offsets` ... whatever the name);
* a **token offset** is a value loaded from an offsets table, or a batch index scaled
  by a sequence length (`bos = i_b * T`);
* a **sequence length** is the difference of two token offsets (`T = eos - bos`), and a
  parameter the kernel overwrites with one (`T` in the varlen branch);
* a **time vector** is a 1-D `tl.arange`-derived vector that is offset by a token
  offset (`bos + o_t`) or bounded by a sequence length or token offset (`o_t < T`).

Names are the last tie-breaker: only in a kernel with no offsets table at all does a
parameter spelled like a length (`T`, `seq_len`) count as one.

`Sequences` holds one kernel's own evidence (`JitFunction.sequences`); `SequenceFacts`
adds, for a `@triton.jit` helper, what its callers bind to its parameters, and knows
the 1-D index vectors of each function (`vector_names`, `vector_locals`): the locals
assigned from a `tl.arange`, the helper parameters callers bind to one, and what is
computed from those. The two vector queries call each other (a helper's vectors are
its callers' vectors), so they live in one object.

Depends on: the core facts (helper calls and their bindings, the calls in a kernel).
`gates` receives this object.

Costs: one walk per kernel for its own facts (kept on the kernel), a fixpoint over its
definitions; the callers' facts are merged into a helper's once; the vectors of a
function once per function.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from ascend_lint.index.aliases import LANGUAGE, Aliases
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.naming import is_sequence_length
from ascend_lint.index.syntax import (
    MAX_FIXPOINT_ROUNDS,
    additive_terms,
    frozen_names,
    names_in,
    walk,
)
from ascend_lint.index.values import pointer_names

_LOAD = f"{LANGUAGE}.load"
_ARANGE = f"{LANGUAGE}.arange"
_RANGES = {f"{LANGUAGE}.range", f"{LANGUAGE}.static_range"}


def strip_casts(expr: ast.AST, aliases: Aliases) -> ast.AST:
    """`x.to(tl.int64)`, `tl.cast(x, ...)`, `x.to(tl.int32)` -> x."""
    while isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "to":
            expr = expr.func.value
        elif aliases.resolve(expr.func) == f"{LANGUAGE}.cast" and expr.args:
            expr = expr.args[0]
        else:
            break
    return expr


def broadcasts(expr: ast.AST) -> bool:
    """`x[:, None]`, `x[None, :]`: a 2-D tile, which has a unit-stride dimension."""
    for node in walk(expr):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            if any(isinstance(e, ast.Constant) and e.value is None for e in node.slice.elts):
                return True
    return False


@dataclass
class TableRead:
    """`tl.load(P + e + 1)`: the table `P`, the literal part of its index (1) and the
    other summands (`e`)."""

    table: str
    literal: int
    terms: list[ast.AST]

    @functools.cached_property
    def index(self) -> str:
        """The index without literals, as text: only asked of a start/end pair."""
        # A name is its own text: the common index (`i_n`) needs no unparsing.
        texts = [t.id if isinstance(t, ast.Name) else ast.unparse(t) for t in self.terms]
        return " + ".join(sorted(texts))


def table_read(expr: ast.AST, aliases: Aliases, params: set[str]) -> TableRead | None:
    """`tl.load(P + e + 1)` with `P` a parameter, else None."""
    expr = strip_casts(expr, aliases)
    if not (isinstance(expr, ast.Call) and aliases.resolve(expr.func) == _LOAD and expr.args):
        return None
    terms = additive_terms(expr.args[0])
    if not terms or not isinstance(terms[0], ast.Name) or terms[0].id not in params:
        return None
    literal = 0
    rest = []
    for term in terms[1:]:
        if isinstance(term, ast.Constant) and isinstance(term.value, int):
            literal += term.value
        else:
            rest.append(term)
    return TableRead(terms[0].id, literal, rest)


@dataclass
class _Definition:
    """One assignment, with what `Sequences` asks of it worked out once. The names of
    its parts are looked up only for a definition whose names meet the facts that test
    them (most never do), and then remembered."""

    name: str
    names: frozenset[str] | set[str]  # what any assignment of the name reads
    vector: bool  # a 1-D `tl.arange`-derived value
    arange: bool
    value: ast.AST  # the assigned value, casts stripped

    @functools.cached_property
    def difference(self) -> tuple[frozenset[str], frozenset[str]] | None:
        """The names of `a - b`."""
        value = self.value
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub):
            return frozen_names(value.left), frozen_names(value.right)
        return None

    @functools.cached_property
    def scaled(self) -> set[str]:
        """The names inside the products among its summands."""
        scaled: set[str] = set()
        if isinstance(self.value, ast.BinOp):
            for term in additive_terms(self.value):
                if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
                    scaled |= frozen_names(term)
        return scaled


@dataclass
class _Uses:
    """The comparisons, differences and ranges of one kernel, gathered in one walk."""

    compares: list[tuple[ast.AST, ast.AST, frozenset[str], frozenset[str]]]
    spans: set[tuple[str, str]]  # (start, end): `end - start`, `range(start, end)`


def _gather(fn: JitFunction, aliases: Aliases) -> _Uses:
    compares = [
        (c.left, c.comparators[0], frozen_names(c.left), frozen_names(c.comparators[0]))
        for c in fn.compares
        if len(c.ops) == 1
    ]
    spans: set[tuple[str, str]] = set()
    for node in fn.subtractions:
        left, right = strip_casts(node.left, aliases), strip_casts(node.right, aliases)
        if isinstance(left, ast.Name) and isinstance(right, ast.Name):
            spans.add((right.id, left.id))
    for call, _stmt in fn.calls:
        if len(call.args) >= 2 and (
            (isinstance(call.func, ast.Name) and call.func.id == "range")
            or aliases.resolve(call.func) in _RANGES
        ):
            a, b = (strip_casts(x, aliases) for x in call.args[:2])
            if isinstance(a, ast.Name) and isinstance(b, ast.Name):
                spans.add((a.id, b.id))
    return _Uses(compares, spans)


def _definitions(fn: JitFunction, aliases: Aliases) -> list[_Definition]:
    with_arange = {id(stmt) for call, stmt in fn.calls if aliases.resolve(call.func) == _ARANGE}
    deps = fn.dependencies()
    out = []
    for name, values in fn.definitions.items():
        for order, raw in values:
            value = strip_casts(raw, aliases)
            arange = id(fn.statements[order]) in with_arange and _has_arange(value, aliases)
            vector = arange and not broadcasts(value)
            out.append(_Definition(name, deps.get(name, set()), vector, arange, value))
    return out


def kernel_sequences(fn: JitFunction, aliases: Aliases) -> Sequences:
    """Offsets tables, token offsets, sequence lengths and time vectors of `fn` (its own
    evidence, built once; `SequenceFacts.of` adds what callers pass to helpers)."""
    model = fn.models.get(__name__)
    if model is None:
        model = fn.models[__name__] = Sequences.compute(fn, aliases)
    return model


@dataclass
class Sequences:
    """The sequence facts of one kernel."""

    offsets_tables: set[str] = field(default_factory=set)
    token_offsets: set[str] = field(default_factory=set)
    lengths: set[str] = field(default_factory=set)
    time_vectors: set[str] = field(default_factory=set)
    _defs: list[_Definition] = field(default_factory=list, repr=False)
    _uses: _Uses | None = field(default=None, repr=False)

    @classmethod
    def compute(cls, fn: JitFunction, aliases: Aliases) -> Sequences:
        facts = cls(_defs=_definitions(fn, aliases), _uses=_gather(fn, aliases))
        params = set(fn.params)
        reads: dict[str, TableRead] = {}  # local -> the table read it holds
        for name, values in fn.assignments.items():
            for value in values:
                read = table_read(value, aliases, params)
                if read is not None:
                    reads[name] = read
        for a, read in reads.items():
            for b, read_b in reads.items():
                if (
                    read.table == read_b.table
                    and read_b.literal == read.literal + 1
                    and read.index == read_b.index
                ):
                    if (a, b) in facts._uses.spans or facts._bounded_by(fn, a, b):
                        facts.offsets_tables.add(read.table)
        for name, read in reads.items():
            if read.table in facts.offsets_tables:
                facts.token_offsets.add(name)
        if not facts.offsets_tables:
            # No table to learn from: a parameter spelled like a length is one.
            facts.lengths |= {p for p in fn.params if is_sequence_length(p)}
        facts._grow()
        return facts

    def _bounded_by(self, fn: JitFunction, start: str, end: str) -> bool:
        """Is a value computed from `start` compared with `end` (`o = start + ...; o < end`)?"""
        derived = pointer_names(fn, {start})
        for left, right, left_names, right_names in self._uses.compares:
            if (left_names & derived and isinstance(right, ast.Name) and right.id == end) or (
                right_names & derived and isinstance(left, ast.Name) and left.id == end
            ):
                return True
        return False

    def _grow(self) -> None:
        """Spread the facts through assignments until nothing changes."""
        vectors = {d.name for d in self._defs if d.vector}
        for _ in range(MAX_FIXPOINT_ROUNDS):
            size = (len(self.token_offsets), len(self.lengths), len(self.time_vectors))
            for d in self._defs:
                # Every rule of `_learn` needs one of its names among the facts.
                if (
                    d.names & self.token_offsets
                    or d.names & self.lengths
                    or (d.vector and d.names & self.time_vectors)
                ):
                    self._learn(d)
            bounds = self.lengths | self.token_offsets
            for left, right, left_names, right_names in self._uses.compares:
                # 1-D arange vectors compared with a length or token offset, alone or
                # offset by a chunk start (`o_t < T`, `i_ti + o_i < T_cur`)
                for mine, other_names in ((left, right_names), (right, left_names)):
                    if not other_names & bounds:
                        continue
                    for term in additive_terms(mine):
                        if isinstance(term, ast.Name) and term.id in vectors:
                            self.time_vectors.add(term.id)
            if size == (len(self.token_offsets), len(self.lengths), len(self.time_vectors)):
                break

    def _learn(self, d: _Definition) -> None:
        # `d.names` holds every name of its parts: a definition that reads no token
        # offset (no length) has no difference of two (no product with one).
        if d.names & self.token_offsets and d.difference is not None:
            left, right = d.difference
            if left & self.token_offsets and right & self.token_offsets:
                self.lengths.add(d.name)  # eos - bos
                return
        if not d.arange and d.names & self.lengths and d.scaled & self.lengths:
            self.token_offsets.add(d.name)  # i_b * T (+ T)
            return
        if d.vector and d.names & (self.token_offsets | self.time_vectors):
            self.time_vectors.add(d.name)  # bos + tl.arange(...), o_t + 1


def _has_arange(expr: ast.AST, aliases: Aliases) -> bool:
    return any(isinstance(n, ast.Call) and aliases.resolve(n.func) == _ARANGE for n in walk(expr))


def address_terms(
    expr: ast.AST,
    fn: JitFunction,
    aliases: Aliases,
    keep: set[str],
    depth: int = 0,
    followed: list[ast.AST] | None = None,
) -> list[list[ast.AST]]:
    """The summands of an address, each as its list of factors, with products distributed
    over sums and single-assignment locals replaced by their values (`p = g + o_t * H;
    tl.load(p)` reads as `g + o_t * H`). Names in `keep` stay names. The values put in
    for locals are added to `followed`, when given: where else the address is written."""
    expr = strip_casts(expr, aliases)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return address_terms(expr.left, fn, aliases, keep, depth, followed) + address_terms(
            expr.right, fn, aliases, keep, depth, followed
        )
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        left = address_terms(expr.left, fn, aliases, keep, depth, followed)
        right = address_terms(expr.right, fn, aliases, keep, depth, followed)
        if len(left) * len(right) > _MAX_TERMS:
            return [[expr]]
        return [a + b for a in left for b in right]
    if (
        isinstance(expr, ast.Name)
        and expr.id not in keep
        and expr.id not in fn.params
        and depth < _MAX_EXPANSION
        and len(fn.assignments.get(expr.id, ())) == 1
    ):
        value = fn.assignments[expr.id][0]
        if followed is not None:
            followed.append(value)
        return address_terms(value, fn, aliases, keep, depth + 1, followed)
    return [[expr]]


_MAX_TERMS = 64
_MAX_EXPANSION = 4


class SequenceFacts:
    """Sequence facts with what callers pass to helpers, and where 1-D index vectors
    enter and flow (see the module doc)."""

    def __init__(self, core: CoreFacts):
        self._core = core
        self._aliases = core.aliases
        self._sequences_done: set[int] = set()
        self._vector_cache: dict[int, set[str]] = {}
        self._vector_locals_cache: dict[int, set[str]] = {}

    def of(self, fn: JitFunction) -> Sequences:
        """`kernel_sequences(fn)`, plus, for a `@triton.jit` helper, the helper parameters its
        callers bind to token offsets, sequence lengths and time vectors."""
        seq = kernel_sequences(fn, self._aliases)
        if id(fn) in self._sequences_done:
            return seq
        self._sequences_done.add(id(fn))
        learned = False
        for binding in self._core.helper_calls:
            if binding.callee is not fn or binding.caller is None:
                continue
            caller = self.of(binding.caller)
            for param, exprs in binding.args.items():
                for expr in exprs:
                    if not isinstance(expr, ast.Name):
                        continue
                    for mine, theirs in (
                        (seq.lengths, caller.lengths),
                        (seq.token_offsets, caller.token_offsets),
                        (seq.time_vectors, caller.time_vectors),
                    ):
                        if expr.id in theirs and param not in mine:
                            mine.add(param)
                            learned = True
        if learned:
            seq._grow()
        return seq

    def vector_names(self, fn: JitFunction) -> set[str]:
        """Locals assigned an expression with a `tl.arange` in it, and the parameters a
        caller binds to an expression computed from one (`_gather(p, o_t)` makes `o_t`
        of `_gather` a vector): where 1-D index vectors enter a function."""
        cached = self._vector_cache.get(id(fn))
        if cached is not None:
            return cached
        self._vector_cache[id(fn)] = names = self._core.assigned_from(fn, _ARANGE)
        for binding in self._core.helper_calls_to(fn):
            caller = binding.caller
            if caller is None:
                continue
            vectors = self.vector_locals(caller)  # what the caller's vectors flow into
            for param, exprs in binding.args.items():
                if any(names_in(e) & vectors for e in exprs):
                    names.add(param)
        return names

    def vector_locals(self, fn: JitFunction) -> set[str]:
        """`vector_names(fn)` and every local computed from one (`o = o_t * H`,
        `p = x + o`): the names that may hold a 1-D index vector, found once per
        function for the rules that ask (the set is shared: do not change it)."""
        found = self._vector_locals_cache.get(id(fn))
        if found is None:
            roots = self.vector_names(fn)
            found = pointer_names(fn, roots) if roots else set()
            self._vector_locals_cache[id(fn)] = found
        return found
