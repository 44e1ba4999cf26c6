"""Value facts inside one kernel: int64 values, loop-derived values, program ids,
pointers and block pointers, computed once per kernel on first use (`fn.facts(aliases)`).
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass

from ascend_lint.index.aliases import LANGUAGE, Aliases
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.syntax import MAX_FIXPOINT_ROUNDS, all_params

_INT64 = f"{LANGUAGE}.int64"
_POINTER_OPS = {
    f"{LANGUAGE}.{op}"
    for op in (
        "load",
        "store",
        "make_block_ptr",
        "atomic_add",
        "atomic_max",
        "atomic_min",
        "atomic_xchg",
        "atomic_cas",
    )
}
_BLOCK_POINTER_OPS = {f"{LANGUAGE}.make_block_ptr", f"{LANGUAGE}.advance"}


def is_int64_cast(expr: ast.AST, aliases: Aliases) -> bool:
    """`x.to(tl.int64)` or `tl.cast(x, tl.int64)`."""
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Attribute) and expr.func.attr == "to" and expr.args:
        return aliases.resolve(expr.args[0]) == _INT64
    if aliases.resolve(expr.func) == f"{LANGUAGE}.cast" and len(expr.args) >= 2:
        return aliases.resolve(expr.args[1]) == _INT64
    return False


def pointer_root(expr: ast.AST) -> str | None:
    """The name a pointer expression starts from: `q + (bos * H + i_h) * K` -> 'q'."""
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        expr = expr.left
    return expr.id if isinstance(expr, ast.Name) else None


@dataclass
class ValueFacts:
    """Per-kernel facts about values that several rules share."""

    int64: set[str]  # names holding int64 values (cast, annotated, or computed from such)
    loop_derived: set[str]  # runtime loop variables and values computed from them
    program_ids: set[str]  # names set straight from tl.program_id, by sums without a multiply
    pointers: set[str]  # pointer parameters and locals computed from them by + / -
    block_pointers: set[str]  # names set from tl.make_block_ptr / tl.advance

    @classmethod
    def compute(cls, fn: JitFunction, aliases: Aliases) -> ValueFacts:
        int64 = {
            a.arg for a in all_params(fn.node.args) if _is_int64_annotation(a.annotation, aliases)
        }
        pointers: set[str] = set()
        for call, _ in fn.calls:
            if aliases.resolve(call.func) in _POINTER_OPS and call.args:
                root = pointer_root(call.args[0])
                if root is not None:
                    pointers.add(root)
        loop_derived = set(fn.loop_variables)
        mentions = fn.dependencies()
        program_ids: set[str] = set()
        # Set by the assigning call alone: no other fact feeds it, so no round is needed.
        block_pointers = {
            name
            for name, values in fn.assignments.items()
            if any(
                isinstance(v, ast.Call) and aliases.resolve(v.func) in _BLOCK_POINTER_OPS
                for v in values
            )
        }
        spread: set[str] = set()  # pointers whose own roots are already added as pointers
        # A worklist, not rounds over every assignment: each fact of a name depends only
        # on the facts of the names its values read, so a name is judged again only when
        # one of those (or itself, for the pointer spread) joins a set. The sets only grow
        # and every test is monotone, so this reaches the same least fixpoint.
        readers: dict[str, list[str]] = {}
        for name in fn.assignments:
            for read in mentions.get(name, ()):
                readers.setdefault(read, []).append(name)
        todo = deque(fn.assignments)
        queued = set(todo)
        while todo:
            name = todo.popleft()
            queued.discard(name)
            values = fn.assignments[name]
            grown: list[str] = []  # names that joined a set
            # A name already in a set is not tested for it again.
            if name not in int64 and any(is_int64_value(v, int64, aliases) for v in values):
                int64.add(name)
                grown.append(name)
            if name not in loop_derived and mentions.get(name, frozenset()) & loop_derived:
                loop_derived.add(name)
                grown.append(name)
            # The `any` first: it fails for most names, without building a set.
            if (
                name not in program_ids
                and any(from_program_id(v, program_ids, aliases) for v in values)
                and all(from_program_id(v, program_ids | {name}, aliases) for v in values)
            ):
                program_ids.add(name)
                grown.append(name)
            if name not in pointers and any(pointer_root(v) in pointers for v in values):
                pointers.add(name)
                grown.append(name)
            if name in pointers and name not in spread:
                # `q_ptr = q + offset` with q_ptr a pointer: q is one too
                spread.add(name)
                for value in values:
                    root = pointer_root(value)
                    if root is not None and root not in pointers:
                        pointers.add(root)
                        grown.append(root)
            for changed in grown:
                for reader in (changed, *readers.get(changed, ())):
                    if reader not in queued and reader in fn.assignments:
                        queued.add(reader)
                        todo.append(reader)
        return cls(int64, loop_derived, program_ids, pointers - block_pointers, block_pointers)


def _is_int64_annotation(ann: ast.AST | None, aliases: Aliases) -> bool:
    if ann is None:
        return False
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.endswith("int64")
    return aliases.resolve(ann) == _INT64


def is_int64_value(expr: ast.AST, int64: set[str], aliases: Aliases) -> bool:
    """Arithmetic with an int64 operand is int64; a call (a load, `.to(tl.int32)`) has
    its own type, int64 only when it is a cast to int64."""
    if isinstance(expr, ast.Name):
        return expr.id in int64
    if isinstance(expr, ast.Call):
        return is_int64_cast(expr, aliases)
    if isinstance(expr, ast.BinOp):
        return is_int64_value(expr.left, int64, aliases) or is_int64_value(
            expr.right, int64, aliases
        )
    if isinstance(expr, ast.UnaryOp):
        return is_int64_value(expr.operand, int64, aliases)
    if isinstance(expr, ast.IfExp):
        return is_int64_value(expr.body, int64, aliases) or is_int64_value(
            expr.orelse, int64, aliases
        )
    return False


def from_program_id(expr: ast.AST, known: set[str], aliases: Aliases) -> bool:
    """`tl.program_id(1)`, `tl.program_id(0) + NT_OFFSET`, or a name already known as such."""
    if isinstance(expr, ast.Call):
        return aliases.resolve(expr.func) == f"{LANGUAGE}.program_id"
    if isinstance(expr, ast.Name):
        return expr.id in known
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return from_program_id(expr.left, known, aliases) or from_program_id(
            expr.right, known, aliases
        )
    return False


def pointer_names(fn: JitFunction, roots: set[str]) -> set[str]:
    """`roots` plus every local computed from them (`g_base = g + ...`, `p_g = ...`),
    loop variables of ranges over them (`for pos in range(start, end)`) included."""
    tainted = set(roots)
    deps = fn.dependencies()
    for _ in range(MAX_FIXPOINT_ROUNDS):
        grown = {name for name, reads in deps.items() if name not in tainted and reads & tainted}
        if not grown:
            break
        tainted |= grown
    return tainted
