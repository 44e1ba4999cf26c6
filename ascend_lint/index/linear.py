"""Linear forms: what an integer value of a kernel is made of, where a statement reads it.

A form is a sum of integer multiples of products of atoms, plus a literal:
`x + (o - 1) * D` with `o = i * BLOCK + tl.arange(0, BLOCK)` is
`x + i*BLOCK*D + lane*D - D`. Names are read through the definitions that reach the
statement (the value model's `reaching`), casts are looked through, and whatever is
not sums, literal multiples and products of those is an atom. Two forms are equal when
the values are: `x + o - 1` (parsed `(x + o) - 1`) and `x + (o - 1)` have one form, and
so do `off = o - 1; x + off`.

An atom is a value the form does not take apart, with an identity that says when two
reads are the same value:

* `arg`: a kernel parameter, where no assignment has replaced it;
* `lane`: the lanes of a `tl.arange(a, b)` (the form is `a + lane`), one atom per extent
  `b - a` and statement (two `tl.arange` of one extent in different statements are
  different vectors: they may be broadcast along different axes);
* `pid`, `programs`: `tl.program_id(axis)`, `tl.num_programs(axis)`;
* `load`: the value one `tl.load` (or atomic) call returns, one atom per call;
* `loop`: the target of a `for` loop, per loop;
* `merge`: a name several definitions reach (a branch, a loop-carried update), one atom
  per set of definitions;
* `unpacked`: a name unpacked from a value the index cannot split (`a, b = f(x)`);
* `global`: a name with no definition in the kernel (a module constant);
* `opaque`: anything else (`tl.maximum(o, 0)`, `o // 2`, a tuple element): one atom per
  text and definitions it reads, so two spellings of one expression over the same
  definitions are one value.

What an atom's values are (its bounds) is not known here: `bounds` answers that.

Depends on: the kernel scan (`kernels`), its reaching definitions (`constexpr`) and the
call helpers of `values`. `bounds` holds one `KernelForms` per kernel and answers
`linear_form(fn, expr, order)`; nothing else builds forms.

Costs: one form per (expression, statement), kept per kernel; a name's form is its
definition's, built once. A form keeps at most 48 products of at most 6 atoms; a value
past that is an opaque atom.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from ascend_lint.index.aliases import LANGUAGE, Aliases
from ascend_lint.index.constexpr import Definition
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.syntax import children, frozen_names
from ascend_lint.index.values import (
    KernelValues,
    is_program_count_call,
    is_program_id_call,
    kernel_values,
    strip_casts,
)

MAX_MONOMIALS = 48
MAX_DEGREE = 6
_ARANGE = f"{LANGUAGE}.arange"
_LOAD = f"{LANGUAGE}.load"


def is_load_or_atomic(qual: str | None) -> bool:
    """`tl.load`, `tl.atomic_add`, ...: a value read from memory (an atomic returns the
    old value at its pointer)."""
    return qual is not None and (qual == _LOAD or qual.startswith(f"{LANGUAGE}.atomic_"))


class Atom:
    """A value a form does not take apart (see the module doc). Equal atoms are one
    value: `kind` and `key` say which; the other fields say where it comes from."""

    __slots__ = (
        "_hash",
        "definitions",
        "extent",
        "key",
        "kind",
        "name",
        "node",
        "order",
        "sort_key",
    )

    def __init__(
        self,
        kind: str,
        key: tuple,
        name: str = "",
        node: ast.AST | None = None,
        order: int = -1,  # the statement that reads it
        extent: Form | None = None,  # of a lane
        definitions: tuple[Definition, ...] = (),
    ):
        self.kind = kind
        self.key = key
        self.name = name
        self.node = node
        self.order = order
        self.extent = extent
        self.definitions = definitions
        self.sort_key = f"{kind}:{key!r}"
        self._hash = hash((kind, key))

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Atom)
            and self._hash == other._hash
            and self.kind == other.kind
            and self.key == other.key
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Atom({self.kind}, {self.name or self.sort_key})"


Monomial = tuple[Atom, ...]  # sorted by `sort_key`; () is the literal part


def _product(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    return tuple(sorted(a + b, key=_sort_key))


def _sort_key(atom: Atom) -> str:
    return atom.sort_key


def _quotient(m: Monomial, d: Monomial) -> Monomial | None:
    """`m / d` when `d` divides `m` (as multisets of atoms), else None."""
    if len(d) > len(m):
        return None
    rest = list(m)
    for atom in d:
        try:
            rest.remove(atom)
        except ValueError:
            return None
    return tuple(rest)  # what is left of a sorted tuple stays sorted


class Form:
    """An integer polynomial over atoms: {monomial: coefficient}, no zero coefficients.
    Immutable and hashable; arithmetic returns new forms (`*` returns None past the
    size limits)."""

    __slots__ = ("_atoms", "_hash", "_monomials", "terms")

    def __init__(self, terms: dict[Monomial, int]):
        self.terms = {m: c for m, c in terms.items() if c}
        self._hash: int | None = None
        self._atoms: frozenset[Atom] | None = None
        self._monomials: list[tuple[Monomial, int]] | None = None

    @classmethod
    def constant(cls, value: int) -> Form:
        return cls({(): value})

    @classmethod
    def of(cls, atom: Atom) -> Form:
        return cls({(atom,): 1})

    # -- what it is ------------------------------------------------------------------------
    @property
    def literal(self) -> int:
        return self.terms.get((), 0)

    @property
    def is_constant(self) -> bool:
        return all(not m for m in self.terms)

    def single_atom(self) -> Atom | None:
        """The atom when the form is exactly one atom (`slot`, not `slot - 1`)."""
        if len(self.terms) == 1:
            ((m, c),) = self.terms.items()
            if c == 1 and len(m) == 1:
                return m[0]
        return None

    def atoms(self) -> frozenset[Atom]:
        if self._atoms is None:
            self._atoms = frozenset(a for m in self.terms for a in m)
        return self._atoms

    def monomials(self) -> list[tuple[Monomial, int]]:
        """The non-literal terms, fewest atoms first, in a stable order."""
        if self._monomials is None:
            self._monomials = sorted(
                ((m, c) for m, c in self.terms.items() if m),
                key=lambda mc: (len(mc[0]), [a.sort_key for a in mc[0]]),
            )
        return self._monomials

    def shares_atoms(self, other: Form) -> bool:
        return bool(self.atoms() & other.atoms())

    # -- arithmetic ------------------------------------------------------------------------
    def __add__(self, other: Form) -> Form:
        out = dict(self.terms)
        for m, c in other.terms.items():
            out[m] = out.get(m, 0) + c
        return Form(out)

    def __sub__(self, other: Form) -> Form:
        return self + other.scale(-1)

    def __neg__(self) -> Form:
        return self.scale(-1)

    def scale(self, k: int) -> Form:
        return Form({m: k * c for m, c in self.terms.items()})

    def plus(self, k: int) -> Form:
        return self + Form.constant(k)

    def times(self, other: Form) -> Form | None:
        """The product, or None past `MAX_MONOMIALS` / `MAX_DEGREE`."""
        out: dict[Monomial, int] = {}
        for ma, ca in self.terms.items():
            for mb, cb in other.terms.items():
                if len(ma) + len(mb) > MAX_DEGREE:
                    return None
                m = _product(ma, mb)
                out[m] = out.get(m, 0) + ca * cb
        if len(out) > MAX_MONOMIALS:
            return None
        return Form(out)

    def over(self, divisor: Form) -> Form | None:
        """`self / divisor` for a divisor of one term that divides every term of `self`
        exactly (`(o_t - m) * D + m * D` over `D` is `o_t`), else None."""
        if len(divisor.terms) != 1:
            return None
        ((d, k),) = divisor.terms.items()
        out: dict[Monomial, int] = {}
        for m, c in self.terms.items():
            q = _quotient(m, d)
            if q is None or c % k:
                return None
            out[q] = c // k
        return Form(out)

    def quotient(self, by: Form, pivot: Monomial) -> Form | None:
        """F of `divide`, alone (cheap: no product), or None."""
        g = by.terms.get(pivot)
        if not g or not pivot:
            return None
        quotient: dict[Monomial, int] = {}
        for m, c in self.terms.items():
            q = _quotient(m, pivot)
            if q is None:
                continue
            if c % g:
                return None
            quotient[q] = quotient.get(q, 0) + c // g
        found = Form(quotient)
        return found if found.terms else None

    def divide(self, by: Form, pivot: Monomial) -> tuple[Form, Form] | None:
        """(F, R) with `self == F * by + R`, F gathered from the terms of `self` that
        `pivot` (a term of `by`) divides: `(o - 1) * D + d` by `o - 1` on `o` is
        (D, d). None when no term is divisible, a coefficient does not divide, or the
        product is past the limits."""
        factor = self.quotient(by, pivot)
        return None if factor is None else self.minus_times(factor, by)

    def minus_times(self, factor: Form, by: Form) -> tuple[Form, Form] | None:
        """(factor, self - factor * by), or None past the limits."""
        product = factor.times(by)
        return None if product is None else (factor, self - product)

    def substitute(self, atom: Atom, value: Form) -> Form | None:
        """The form with `value` in place of `atom` (None past the size limits)."""
        out = Form({m: c for m, c in self.terms.items() if atom not in m})
        for m, c in self.terms.items():
            if atom not in m:
                continue
            term: Form | None = Form({tuple(a for a in m if a != atom): c})
            for _ in range(m.count(atom)):
                term = term.times(value) if term is not None else None
            if term is None:
                return None
            out = out + term
        return out

    # -- identity --------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Form) and self.terms == other.terms

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def __repr__(self) -> str:
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda mc: [a.sort_key for a in mc[0]]):
            names = "*".join(a.name or a.kind for a in m)
            parts.append(f"{c}" if not m else f"{c}*{names}")
        return f"Form({' + '.join(parts) or '0'})"


ZERO = Form({})


@dataclass
class Occurrence:
    """Where an expression reads a value: the node whose value it is (`terms` None), or
    the summands `terms` of the sum `node` that add up to it, the others being `rest`
    (`x + o - 1` reads `o - 1` as the summands `o`, `- 1` next to `x`). Each summand
    comes with its sign (+1 or -1)."""

    node: ast.AST
    terms: tuple[tuple[ast.AST, int], ...] | None = None
    rest: tuple[tuple[ast.AST, int], ...] = ()


def signed_summands(node: ast.AST, sign: int = 1) -> Iterator[tuple[ast.AST, int]]:
    """`a + b - (c - d)` -> (a, 1), (b, 1), (c, -1), (d, 1)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        yield from signed_summands(node.left, sign)
        yield from signed_summands(node.right, -sign if isinstance(node.op, ast.Sub) else sign)
    else:
        yield node, sign


class KernelForms:
    """The linear forms of one kernel's values (see the module doc)."""

    def __init__(self, fn: JitFunction, aliases: Aliases):
        self.fn = fn
        self.aliases = aliases
        self._forms: dict[tuple[int, int], tuple[ast.AST, Form]] = {}
        self._definitions: dict[int, Form] = {}
        self._active: set[int] = set()

    @property
    def values(self) -> KernelValues:
        """The kernel's value model: what a name holds where it is read."""
        return kernel_values(self.fn, self.aliases)

    # -- forms -----------------------------------------------------------------------------
    def form(self, expr: ast.AST, order: int) -> Form:
        """The form of `expr` where statement `order` evaluates it."""
        key = (id(expr), order)
        found = self._forms.get(key)
        if found is None or found[0] is not expr:
            # the node is kept with its form: its id names no other node meanwhile
            found = self._forms[key] = (expr, self._build(expr, order))
        return found[1]

    def _build(self, expr: ast.AST, order: int) -> Form:
        expr = strip_casts(expr, self.aliases)
        kind = type(expr)
        if kind is ast.Constant:
            value = expr.value
            if isinstance(value, int) and not isinstance(value, bool):
                return Form.constant(value)
            return self._opaque(expr, order)
        if kind is ast.Name:
            return self._name(expr.id, order)
        if kind is ast.BinOp:
            return self._binop(expr, order)
        if kind is ast.UnaryOp:
            if isinstance(expr.op, ast.USub):
                return -self.form(expr.operand, order)
            if isinstance(expr.op, ast.UAdd):
                return self.form(expr.operand, order)
            return self._opaque(expr, order)
        if kind is ast.Subscript and _broadcasts(expr.slice):
            return self.form(expr.value, order)  # `o[:, None]`: the same values
        if kind is ast.Call:
            return self._call(expr, order)
        return self._opaque(expr, order)

    def _binop(self, expr: ast.BinOp, order: int) -> Form:
        op = expr.op
        if isinstance(op, (ast.Add, ast.Sub)):
            left, right = self.form(expr.left, order), self.form(expr.right, order)
            return left + right if isinstance(op, ast.Add) else left - right
        if isinstance(op, ast.Mult):
            product = self.form(expr.left, order).times(self.form(expr.right, order))
            return product if product is not None else self._opaque(expr, order)
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            left, right = self.form(expr.left, order), self.form(expr.right, order)
            if left.is_constant and right.is_constant and right.literal:
                # literals: Python ints, which Triton folds when it compiles
                a, b = left.literal, right.literal
                return Form.constant(a // b if isinstance(op, ast.FloorDiv) else a % b)
        return self._opaque(expr, order)

    def _call(self, call: ast.Call, order: int) -> Form:
        aliases = self.aliases
        if is_program_id_call(call, aliases):
            return Form.of(Atom("pid", (_axis(call),), "program_id", call, order))
        if is_program_count_call(call, aliases):
            return Form.of(Atom("programs", (_axis(call),), "num_programs", call, order))
        qual = aliases.resolve(call.func)
        if qual == _ARANGE and len(call.args) == 2:
            start = self.form(call.args[0], order)
            extent = self.form(call.args[1], order) - start
            lane = Atom("lane", (order, extent), "arange", call, order, extent=extent)
            return start + Form.of(lane)
        if is_load_or_atomic(qual):
            return Form.of(Atom("load", (id(call),), "load", call, order))
        return self._opaque(call, order)

    def _name(self, name: str, order: int) -> Form:
        reach = self.values.reaching(name, order)
        if not reach:
            return Form.of(Atom("global", (name,), name, order=order))
        if len(reach) > 1:
            orders = tuple(sorted(d.order for d in reach))
            return Form.of(Atom("merge", (name, orders), name, order=order, definitions=reach))
        return self.binding(reach[0])

    def definition(self, d: Definition) -> Form:
        """The form of the value one definition gives its name."""
        found = self._definitions.get(id(d))
        if found is not None:
            return found
        if id(d) in self._active or d.value is None:  # rebuilt from itself
            return Form.of(Atom("unpacked", (d.name, d.order), d.name, order=d.order))
        self._active.add(id(d))
        try:
            found = self.form(d.value, d.order)
        finally:
            self._active.discard(id(d))
        self._definitions[id(d)] = found
        return found

    def binding(self, d: Definition) -> Form:
        """The form of the value one binding gives its name: the parameter itself, the
        loop's variable, or the assigned value."""
        if d.order < 0:
            return Form.of(Atom("arg", (d.name,), d.name, definitions=(d,)))
        if d.value is None:
            return Form.of(Atom("loop", (d.name, d.order), d.name, order=d.order, definitions=(d,)))
        if self._unpacked(d):
            return Form.of(Atom("unpacked", (d.name, d.order), d.name, order=d.order))
        return self.definition(d)

    def paths(
        self, forms: tuple[Form, ...], bringing: set[Atom] | None = None, limit: int = 8
    ) -> list[dict[Atom, Form]]:
        """The paths to a statement that reads `forms`, each as what it gives the names
        several definitions before the read reach (`merge` atoms: `block_id` set in both
        sides of `if IS_VARLEN:`), at most `limit` (`{}` alone when there are none). A
        path takes one side of each `if`: `seqlen_run` and `state_len_run` both set in
        `if IS_VARLEN:` come from the same side. A value carried over from a loop's
        previous iteration stays as it is: its parts are that iteration's values, not
        this one's. `along(form, path)` reads a form along one."""
        merges = sorted(
            {
                a
                for form in forms
                for a in form.atoms()
                if a.kind == "merge" and all(d.order < a.order for d in a.definitions)
            },
            key=lambda a: a.sort_key,
        )
        # each path: what it gives the merges, and the side of each `if` it took
        paths: list[tuple[dict[Atom, Form], dict[int, bool]]] = [({}, {})]
        for atom in merges:
            grown = []
            for given, sides in paths:
                for d in atom.definitions:
                    taken = self._sides(d)
                    if any(sides.get(node, side) != side for node, side in taken.items()):
                        continue  # the other side of an `if` this path took
                    grown.append(({**given, atom: self.binding(d)}, {**sides, **taken}))
            if len(grown) > limit:
                break
            paths = grown
        return [given for given, _sides in paths]

    def _sides(self, d: Definition) -> dict[int, bool]:
        """id(`if`) -> the side (True: its body) each `if` around a definition has it."""
        if d.order < 0:
            return {}
        context = self.fn.context(self.fn.statements[d.order])
        return {id(b.node): b.taken for b in context.branches}

    def _unpacked(self, d: Definition) -> bool:
        """`a, b = f(x)`: the scan gives each name the whole value."""
        stmt = self.fn.statements[d.order]
        return (
            isinstance(stmt, ast.Assign)
            and d.value is stmt.value
            and not all(isinstance(t, ast.Name) for t in stmt.targets)
        )

    def _opaque(self, expr: ast.AST, order: int) -> Form:
        """One atom per text and the definitions its names read there."""
        reads = tuple(
            (name, tuple(d.order for d in self.values.reaching(name, order)))
            for name in sorted(frozen_names(expr))
        )
        return Form.of(Atom("opaque", (shape(expr), reads), "", expr, order))

    # -- where an expression reads a value --------------------------------------------------
    def occurrences(
        self, expr: ast.AST, order: int, value: Form, name: str | None = None
    ) -> list[Occurrence]:
        """Where `expr`, evaluated at statement `order`, reads `value`, outside calls of
        `triton.language` (clamps, loads: their own values) and comparisons: the
        sub-expressions whose form is `value` (a name spelled `name` where it holds it),
        or the summands of a sum that add up to it. The locals `expr` is built from are
        followed where one definition reaches them, so the place found is where the
        value is computed (`src = o - shift; x + src` reads `o - shift` in `src`), each
        definition that reaches them where several do (a use on each path)."""
        found: list[Occurrence] = []
        seen: set[int] = set()
        self._occurrences(expr, order, value, name, found, seen)
        return found

    def _occurrences(
        self,
        node: ast.AST,
        order: int,
        value: Form,
        name: str | None,
        found: list[Occurrence],
        seen: set[int],
    ) -> None:
        if isinstance(node, (ast.Compare, ast.BoolOp, ast.Constant)):
            return  # a 0/1 flag, or a literal
        if isinstance(node, ast.Name):
            reach = self.values.reaching(node.id, order)
            if node.id == name and (
                self.form(node, order) == value or any(self.binding(d) == value for d in reach)
            ):
                found.append(Occurrence(node))  # the name, where it holds the value on a path
                return
            if reach and all(d.order >= 0 and d.value is not None for d in reach):
                for d in reach:  # each definition that reaches it: a use on each path
                    if id(d) not in seen and not self._unpacked(d):
                        seen.add(id(d))
                        self._occurrences(d.value, d.order, value, name, found, seen)
                return
            if self.form(node, order) == value:
                found.append(Occurrence(node))
            return
        if isinstance(node, ast.Subscript) and _broadcasts(node.slice):
            self._occurrences(node.value, order, value, name, found, seen)
            return
        inner = strip_casts(node, self.aliases)
        if inner is not node:
            self._occurrences(inner, order, value, name, found, seen)
            return
        if isinstance(node, ast.Call):
            qual = self.aliases.resolve(node.func)
            if qual is not None and qual.startswith(LANGUAGE):
                return
        if self.form(node, order) == value:
            found.append(Occurrence(node))
            return
        before = len(found)
        for child in children(node):
            if isinstance(child, ast.expr):
                self._occurrences(child, order, value, name, found, seen)
        if len(found) == before and isinstance(node, ast.BinOp):
            summed = self._summands(node, order, value)
            if summed is not None:
                found.append(summed)

    def _summands(self, node: ast.BinOp, order: int, value: Form) -> Occurrence | None:
        """The summands of `node` that add up to `value`: those sharing an atom with it,
        with the literals if they are needed."""
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return None
        summands = list(signed_summands(node))
        forms = [self.form(term, order).scale(sign) for term, sign in summands]
        sharing = [i for i, f in enumerate(forms) if f.shares_atoms(value)]
        literals = [i for i, f in enumerate(forms) if f.is_constant]
        for chosen in (sharing, sorted(sharing + literals)):
            if len(chosen) < 2 or len(chosen) == len(summands):
                continue
            total = ZERO
            for i in chosen:
                total = total + forms[i]
            if total == value:
                picked = set(chosen)
                return Occurrence(
                    node,
                    tuple(summands[i] for i in chosen),
                    tuple(s for i, s in enumerate(summands) if i not in picked),
                )
        return None


def along(form: Form, path: dict[Atom, Form]) -> Form | None:
    """`form` with each atom of `path` replaced by what the path gives it (None past the
    size limits)."""
    for atom, value in path.items():
        if atom in form.atoms():
            replaced = form.substitute(atom, value)
            if replaced is None:
                return None
            form = replaced
    return form


def _axis(call: ast.Call) -> object:
    axis = call.args[0] if call.args else None
    for kw in call.keywords:
        if kw.arg == "axis":
            axis = kw.value
    if isinstance(axis, ast.Constant):
        return axis.value
    return shape(axis) if axis is not None else 0


def shape(node: object) -> object:
    """What an expression is made of, as nested tuples: equal for two spellings of one
    text. (`ast.dump` builds a recursive closure per call: a reference cycle each.)"""
    if isinstance(node, ast.AST):
        return (type(node).__name__, *[shape(getattr(node, f, None)) for f in node._fields])
    if isinstance(node, list):
        return tuple(shape(item) for item in node)
    return node


def _broadcasts(index: ast.AST) -> bool:
    """`[:, None]`, `[None, :]`, `[:]`: a broadcast or a whole slice, not an element."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(
        (isinstance(p, ast.Constant) and p.value is None)
        or (isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None)
        for p in parts
    )
