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
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ascend_lint.index.aliases import LANGUAGE, Aliases
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.naming import is_sequence_length
from ascend_lint.index.syntax import MAX_FIXPOINT_ROUNDS, additive_terms, names_in
from ascend_lint.index.values import pointer_names

if TYPE_CHECKING:
    from ascend_lint.index.model import KernelIndex

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
    for node in ast.walk(expr):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            if any(isinstance(e, ast.Constant) and e.value is None for e in node.slice.elts):
                return True
    return False


def _table_read(expr: ast.AST, aliases: Aliases, params: set[str]) -> tuple[str, str, int] | None:
    """`tl.load(P + e + 1)` -> ('P', 'e', 1): the table, its index without literals, the
    literal part of the index."""
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
            rest.append(ast.unparse(term))
    return terms[0].id, " + ".join(sorted(rest)), literal


@dataclass
class Sequences:
    """The sequence facts of one kernel."""

    offsets_tables: set[str] = field(default_factory=set)
    token_offsets: set[str] = field(default_factory=set)
    lengths: set[str] = field(default_factory=set)
    time_vectors: set[str] = field(default_factory=set)
    # name -> table it was read from, for values loaded from offsets tables
    table_reads: dict[str, str] = field(default_factory=dict)

    @classmethod
    def compute(cls, fn: JitFunction, aliases: Aliases) -> Sequences:
        facts = cls()
        params = set(fn.params)
        reads: dict[str, tuple[str, str, int]] = {}  # local -> (table, index, literal)
        for name, values in fn.assignments.items():
            for value in values:
                read = _table_read(value, aliases, params)
                if read is not None:
                    reads[name] = read
        spans = _spans(fn, aliases)
        for a, (table, index, lit) in reads.items():
            for b, (table_b, index_b, lit_b) in reads.items():
                if table == table_b and index == index_b and lit_b == lit + 1:
                    if (a, b) in spans or _bounded_by(fn, a, b):
                        facts.offsets_tables.add(table)
        for name, (table, _, _) in reads.items():
            if table in facts.offsets_tables:
                facts.token_offsets.add(name)
                facts.table_reads[name] = table
        facts._grow(fn, aliases)
        return facts

    def _grow(self, fn: JitFunction, aliases: Aliases) -> None:
        if not self.offsets_tables:
            # No table to learn from: a parameter spelled like a length is one.
            self.lengths |= {p for p in fn.params if is_sequence_length(p)}
        for _ in range(MAX_FIXPOINT_ROUNDS):
            size = (len(self.token_offsets), len(self.lengths), len(self.time_vectors))
            for name, values in fn.assignments.items():
                for value in values:
                    self._learn(name, strip_casts(value, aliases), aliases)
            if size == (len(self.token_offsets), len(self.lengths), len(self.time_vectors)):
                break
        self._bounded_vectors(fn, aliases)

    def _learn(self, name: str, value: ast.AST, aliases: Aliases) -> None:
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub):
            left, right = (names_in(value.left), names_in(value.right))
            if left & self.token_offsets and right & self.token_offsets:
                self.lengths.add(name)  # eos - bos
                return
        terms = additive_terms(value)
        if any(_scaled_by(t, self.lengths) for t in terms) and not _has_arange(value, aliases):
            self.token_offsets.add(name)  # i_b * T (+ T)
            return
        if _has_arange(value, aliases) and not broadcasts(value):
            mentioned = names_in(value)
            if mentioned & (self.token_offsets | self.time_vectors):
                self.time_vectors.add(name)  # bos + tl.arange(...), o_t + 1

    def _bounded_vectors(self, fn: JitFunction, aliases: Aliases) -> None:
        """1-D arange vectors compared with a length or token offset (`o_t < T`)."""
        vectors = {
            name
            for name, values in fn.assignments.items()
            if any(_has_arange(v, aliases) and not broadcasts(v) for v in values)
        }
        bounds = self.lengths | self.token_offsets
        for stmt in fn.statements:
            for node in ast.walk(stmt) if not isinstance(stmt, _BLOCKS) else ():
                if isinstance(node, ast.Compare) and len(node.ops) == 1:
                    sides = (node.left, node.comparators[0])
                    for mine, other in (sides, sides[::-1]):
                        if (
                            isinstance(mine, ast.Name)
                            and mine.id in vectors
                            and names_in(other) & bounds
                        ):
                            self.time_vectors.add(mine.id)


_BLOCKS = (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef)


def _scaled_by(term: ast.AST, lengths: set[str]) -> bool:
    """`i_b * T`: a product with a sequence length."""
    return (
        isinstance(term, ast.BinOp)
        and isinstance(term.op, ast.Mult)
        and bool(names_in(term) & lengths)
    )


def _has_arange(expr: ast.AST, aliases: Aliases) -> bool:
    return any(
        isinstance(n, ast.Call) and aliases.resolve(n.func) == _ARANGE for n in ast.walk(expr)
    )


def _bounded_by(fn: JitFunction, start: str, end: str) -> bool:
    """Is a value computed from `start` compared with `end` (`o = start + ...; o < end`)?"""
    derived = pointer_names(fn, {start})
    for stmt in fn.statements:
        for node in ast.walk(stmt) if not isinstance(stmt, _BLOCKS) else ():
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                left, right = names_in(node.left), names_in(node.comparators[0])
                if (left & derived and end in right) or (right & derived and end in left):
                    return True
    return False


def _spans(fn: JitFunction, aliases: Aliases) -> set[tuple[str, str]]:
    """(start, end) name pairs that delimit a span: `end - start`, `range(start, end)`."""
    found: set[tuple[str, str]] = set()
    for stmt in fn.statements:
        nodes = [stmt.iter] if isinstance(stmt, ast.For) else []
        if not isinstance(stmt, _BLOCKS):
            nodes = [stmt]
        elif isinstance(stmt, (ast.If, ast.While)):
            nodes.append(stmt.test)
        for root in nodes:
            for node in ast.walk(root):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
                    left = strip_casts(node.left, aliases)
                    right = strip_casts(node.right, aliases)
                    if isinstance(left, ast.Name) and isinstance(right, ast.Name):
                        found.add((right.id, left.id))
                elif (
                    isinstance(node, ast.Call)
                    and (
                        (isinstance(node.func, ast.Name) and node.func.id == "range")
                        or aliases.resolve(node.func) in _RANGES
                    )
                    and len(node.args) >= 2
                ):
                    a, b = (strip_casts(x, aliases) for x in node.args[:2])
                    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
                        found.add((a.id, b.id))
    return found


def address_terms(
    expr: ast.AST, fn: JitFunction, aliases: Aliases, keep: set[str], depth: int = 0
) -> list[list[ast.AST]]:
    """The summands of an address, each as its list of factors, with products distributed
    over sums and single-assignment locals replaced by their values (`p = g + o_t * H;
    tl.load(p)` reads as `g + o_t * H`). Names in `keep` stay names."""
    expr = strip_casts(expr, aliases)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return address_terms(expr.left, fn, aliases, keep, depth) + address_terms(
            expr.right, fn, aliases, keep, depth
        )
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        left = address_terms(expr.left, fn, aliases, keep, depth)
        right = address_terms(expr.right, fn, aliases, keep, depth)
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
        return address_terms(fn.assignments[expr.id][0], fn, aliases, keep, depth + 1)
    return [[expr]]


_MAX_TERMS = 64
_MAX_EXPANSION = 4


class SequenceQueries:
    """The queries of `KernelIndex` about sequences (mixed into it)."""

    def sequences(self: KernelIndex, fn: JitFunction) -> Sequences:
        """`fn.sequences()`, plus, for a `@triton.jit` helper, the helper parameters its
        callers bind to token offsets, sequence lengths and time vectors."""
        seq = fn.sequences(self.aliases)
        if id(fn) in self._sequences_done:
            return seq
        self._sequences_done.add(id(fn))
        learned = False
        for binding in self.helper_calls:
            if binding.callee is not fn or binding.caller is None:
                continue
            caller = self.sequences(binding.caller)
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
            seq._grow(fn, self.aliases)
        return seq
