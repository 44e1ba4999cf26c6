"""ASC031 ascend-api-limit: calls triton-ascend 3.2 rejects or miscompiles although
upstream Triton runs them, from one table.

Each row of `LIMITS` names a use, what triton-ascend does with it, what upstream does
and where that was seen; `benchmarks/api_limits.py` reproduces the rows (and the
candidates left out, with the reason). What a value is (a pointer, an index vector, a
tile's rank) is the index's (`index.values`, `index.sequences`, `index.tiles`); the rule
matches the table's uses and words the message from the row.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from ascend_lint.index import LANGUAGE, TRITON
from ascend_lint.index.syntax import call_name, walk
from ascend_lint.index.values import pointer_root
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_POINTER_TYPE = f"{LANGUAGE}.pointer_type"
_CAST = f"{LANGUAGE}.cast"
_BYTES = frozenset({f"{LANGUAGE}.int8", f"{LANGUAGE}.uint8"})
_HALF_SCALARS = frozenset({"fp16", "bf16"})


@dataclass(frozen=True)
class Limit:
    """One row: a use upstream Triton runs and triton-ascend 3.2 does not."""

    use: str  # the use, as the message names it
    outcome: str  # what triton-ascend does with it
    instead: str  # how to write it
    source: str  # where it was seen
    rejects: bool = False  # the front end rejects it (else: it compiles to wrong code)


LIMITS: dict[str, Limit] = {
    "int-vector-to-pointer": Limit(
        use="a vector of integer addresses cast to pointers",
        outcome=(
            "triton-ascend aborts while lowering it (3.2.0: `'tensor.extract' op incorrect "
            "number of indices`; later builds: a `PtrOffsetInfo::AxisInfo` SmallVector "
            "assertion)"
        ),
        instead=(
            "cast the scalar base address once (`base.to(tl.pointer_type(T))`) and add the "
            "offsets to the pointer"
        ),
        source="vllm-ascend PRs #10888 / #10959",
        rejects=True,
    ),
    "pointer-bitcast-after-offset": Limit(
        use="a pointer moved by an offset, then bitcast to a pointer of bytes",
        outcome=(
            "triton-ascend 3.2.0 counts the offset in the new element's units (the lowered "
            "view of a `float32*` moved by `n` starts `n` bytes in, not `4n`): silently "
            "wrong addresses"
        ),
        instead=(
            "bitcast the unmoved pointer (the parameter) and add the offset in bytes "
            "(`x.to(tl.pointer_type(tl.uint8), bitcast=True) + n * 4`)"
        ),
        source="triton-ascend issue #1694, PR #1470 (open)",
    ),
    "half-scalar-argument": Limit(
        use="a runtime scalar argument typed fp16/bf16 in the kernel's signature",
        outcome=(
            "triton-ascend's launcher writes the value as a 32-bit float into the argument "
            "block of a kernel that reads 16 bits: the kernel sees a wrong value (still "
            "reported on 3.2.2 and 3.6.0)"
        ),
        instead="pass the scalar as fp32 and convert it in the kernel (`value.to(tl.float16)`)",
        source="triton-ascend issue #2364, PR #2285 (open)",
    ),
}


class AscendApiLimit(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        aliases = index.aliases
        for fn in index.kernels:
            values = index.values.of(fn)
            vectors: set[str] | None = None
            for call, _stmt in fn.calls:
                target = _pointer_cast_target(call, aliases)
                if target is None:
                    continue
                operand = _cast_operand(call, aliases)
                if operand is None:
                    continue
                if _is_pointer(call, operand, values):
                    if _moved(operand, fn) and aliases.resolve(target) in _BYTES:
                        yield self._finding(call, "pointer-bitcast-after-offset")
                    continue
                if vectors is None:
                    vectors = index.sequences.vector_locals(fn)
                if _is_vector(operand, vectors, aliases):
                    yield self._finding(call, "int-vector-to-pointer")
        for call, _host in index.host_calls:
            if call_name(call.func) not in ("ASTSource", "compile"):
                continue
            qual = aliases.resolve(call.func) or ""
            if not qual.startswith(TRITON) and call_name(call.func) != "ASTSource":
                continue
            for kw in call.keywords:
                if kw.arg == "signature" and isinstance(kw.value, ast.Dict):
                    for value in kw.value.values:
                        if isinstance(value, ast.Constant) and value.value in _HALF_SCALARS:
                            yield self._finding(value, "half-scalar-argument")

    @staticmethod
    def _finding(node: ast.AST, key: str) -> Finding:
        row = LIMITS[key]
        return Finding(
            node,
            f"{row.use}: {row.outcome}, while upstream Triton runs it; {row.instead} "
            f"({row.source})",
        )

    VALID = [
        # the scalar base cast once, offsets added to the pointer; a bitcast of the
        # unmoved parameter; a vector of pointers moved by offsets (no cast)
        """
import triton
import triton.language as tl

@triton.jit
def copy(addrs, x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    base = tl.load(addrs + tl.program_id(0))
    src = base.to(tl.pointer_type(tl.uint8))
    for i in range(0, n, BLOCK):
        tl.store(y + i + o, tl.load(src + i + o, mask=i + o < n), mask=i + o < n)
    raw = x.to(tl.pointer_type(tl.uint8), bitcast=True)
    tl.store(y + o, tl.load(raw + n * 4 + o))
""",
        # fp32 scalars in a signature; a float16 pointer
        """
import triton
import triton.language as tl
from triton.compiler import ASTSource

@triton.jit
def scalar_kernel(out, value):
    tl.store(out, value.to(tl.float16))

def build():
    sig = {"out": "*fp16", "value": "fp32"}
    return triton.compile(ASTSource(fn=scalar_kernel, signature=sig))
""",
    ]
    INVALID = [
        # vllm-ascend's postprocess kernel before PR #10888
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def copy(addrs, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    src_addr = tl.load(addrs + tl.program_id(0))
    for i in range(0, n, BLOCK):
        curr_src = (src_addr + i + offsets).to(tl.pointer_type(tl.uint8))
        data = tl.load(curr_src, mask=i + offsets < n)
""",
            rows=[10],
        ),
        # integer addresses loaded as a vector, then cast; an offset pointer bitcast
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def gather(table, x, y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    addresses = tl.load(table + o)
    p = tl.cast(addresses, tl.pointer_type(tl.float32))
    tl.store(y + o, tl.load(p))
    row = x + n
    raw = row.to(tl.pointer_type(tl.int8), bitcast=True)
    tl.store(y + o, tl.load(raw + o).to(tl.float32))
""",
            rows=[9, 12],
        ),
        # triton-ascend #2364's reproducer: the kernel compiled with an fp16 scalar
        Invalid(
            """
import triton
import triton.language as tl
from triton.compiler import ASTSource

@triton.jit
def scalar_kernel(out, value):
    tl.store(out, value.to(tl.float32))

def build():
    src = ASTSource(fn=scalar_kernel, signature={"out": "*fp32", "value": "fp16"})
    return triton.compile(src)
""",
            rows=[11],
        ),
    ]


def _pointer_cast_target(call: ast.Call, aliases) -> ast.AST | None:
    """The element type of `x.to(tl.pointer_type(T))` / `tl.cast(x, tl.pointer_type(T))`."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        target = call.args[0]
    elif aliases.resolve(call.func) == _CAST and len(call.args) >= 2:
        target = call.args[1]
    else:
        return None
    if (
        isinstance(target, ast.Call)
        and aliases.resolve(target.func) == _POINTER_TYPE
        and target.args
    ):
        return target.args[0]
    return None


def _cast_operand(call: ast.Call, aliases) -> ast.AST | None:
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to":
        return call.func.value
    return call.args[0] if call.args else None


def _is_pointer(call: ast.Call, operand: ast.AST, values) -> bool:
    """A pointer being cast: computed from a pointer the kernel loads or stores through,
    or cast with `bitcast=True` (the spelling that reinterprets a pointer; an integer
    address becomes a pointer with a plain `.to`)."""
    root = pointer_root(operand)
    if root is not None and (root in values.pointers or root in values.block_pointers):
        return True
    return any(kw.arg == "bitcast" for kw in call.keywords)


def _moved(operand: ast.AST, fn) -> bool:
    """`x + n` (or a local assigned only such sums): a pointer that no longer is its base."""
    if isinstance(operand, ast.BinOp) and isinstance(operand.op, (ast.Add, ast.Sub)):
        return True
    if isinstance(operand, ast.Name) and operand.id in fn.assignments:
        return all(
            isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Sub))
            for v in fn.assignments[operand.id]
        )
    return False


def _is_vector(operand: ast.AST, vectors: set[str], aliases) -> bool:
    """An expression holding a vector: it reads a local computed from `tl.arange` (or is
    one), or calls `tl.arange` itself."""
    for node in walk(operand):
        if isinstance(node, ast.Name) and node.id in vectors:
            return True
        if isinstance(node, ast.Call) and aliases.resolve(node.func) == f"{LANGUAGE}.arange":
            return True
    return False
