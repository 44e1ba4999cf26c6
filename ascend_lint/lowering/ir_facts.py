"""Facts read from the ``ttadapter`` output (linalg / memref / scf), mapped to source lines.

Two kinds of fact, the ones the static rules predict:

* ``strided-load`` / ``strided-store``: a ``memref.copy`` from (or a
  ``bufferization.materialize_in_destination`` into) a view of a kernel argument whose
  layout has no unit stride along any non-trivial axis (``strided<[4]>``,
  ``strided<[64, 4]>``): every element is its own DMA burst.  A view with a runtime
  stride and no unit one (``strided<[?]>``) is reported with ``certain = False``.
* ``runtime-branch-in-loop``: an ``scf.if`` inside an ``scf.for`` (padding ifs, marked
  ``{hivm.unlikely_condition}``, are not branches of the kernel's own); ``dma_both_sides``
  says whether each side moves global memory (two DMA paths kept alive).
* ``discrete-load``: a one-element ``memref.load`` from a kernel argument inside the
  ``scf.for`` the front end builds for an access it cannot describe as tiles (marked
  ``{ExtractedLoadOrStore}``): a load issued element by element.
* ``unaligned-rows``: a copy to or from a view of a kernel argument with two or more
  dimensions, a unit innermost stride and a row pitch (the stride before it) whose bytes
  are not a multiple of 32, or rows of two or more elements narrower than 32 bytes.
* ``int-vector-op``: ``arith.cmpi`` or an integer shift or bitwise op
  (``arith.shrsi``, ``arith.shli``, ``arith.andi``...) on an integer tensor (not ``i1``)
  inside an ``scf.for``.

And the kernel's ``mix_mode`` (``aiv``: vector cores only; ``mix``/``aic``: the cube unit
too), which decides whether a program runs on a vector core or on an AI core.

Locations come from the ``loc(...)`` trailers the adapter prints with
``TRITON_DISABLE_LINE_INFO=0`` (``#locN = loc("file":L:C)`` aliases, ``callsite``
and ``fused`` locations resolved to the frame in the kernel's file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ascend_lint.lowering.mlir import (
    OPERAND,
    TRAILING_LOC,
    Op,
    Region,
    SourceLoc,
    collect_definitions,
    global_root,
    lines_in_file,
    location_aliases,
    op_location,
    op_tree,
    resolve_location,
    same_file,
)

_MEMREF = re.compile(r"memref<([^,>]*?)(?:,\s*strided<\[([^\]]*)\][^>]*>)?\s*>")
_MIX_MODE = re.compile(r'\bmix_mode\s*=\s*"([^"]+)"')


@dataclass(frozen=True)
class IrFact:
    kind: str  # strided-load | strided-store | runtime-branch-in-loop | discrete-load | ...
    lines: tuple[int, ...]  # kernel-file lines this fact maps to, most specific first
    detail: str
    certain: bool = True
    dma_both_sides: bool = False

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "lines": list(self.lines), "detail": self.detail}
        if self.kind.startswith("strided"):
            out["certain"] = self.certain
        elif self.kind == "runtime-branch-in-loop":
            out["dma_both_sides"] = self.dma_both_sides
        return out


@dataclass
class LoweredKernel:
    path: str  # the kernel's source file; locations elsewhere (helpers) are secondary
    facts: list[IrFact]
    lines_seen: set[int]  # kernel-file lines any lowered op carries
    # line -> how many ``scf.if`` outside any ``scf.for`` carry it: a runtime branch in a
    # ``tl.static_range`` loop is unrolled, one copy per iteration, with no loop around
    branch_copies: dict[int, int] = field(default_factory=dict)
    mix_mode: str | None = None  # "aiv", "mix", "aic": the cores one program runs on


def parse(text: str, kernel_path: str) -> LoweredKernel:
    aliases = location_aliases(text)
    root = op_tree(text)
    defs: dict[str, Op] = {}
    collect_definitions(root, defs)

    def lines_of(loc: str | None) -> tuple[int, ...]:
        return lines_in_file(loc, aliases, kernel_path)

    seen: set[int] = set()
    facts: list[IrFact] = []
    branch_copies: dict[int, int] = {}

    def walk(nodes: list, in_loop: bool, discrete: bool = False) -> None:
        for node in nodes:
            if isinstance(node, Region):
                seen.update(lines_of(node.header.loc))
                own_branch = node.name == "scf.if" and "hivm.unlikely_condition" not in node.closing
                if own_branch and not in_loop:
                    for line in lines_of(node.header.loc)[:1]:
                        branch_copies[line] = branch_copies.get(line, 0) + 1
                if own_branch and in_loop:
                    both = len(node.branches) == 2 and all(
                        _moves_global(b, defs) for b in node.branches
                    )
                    lines = lines_of(node.header.loc)
                    if lines:
                        sides = "both sides move global memory" if both else "a runtime branch"
                        facts.append(
                            IrFact(
                                "runtime-branch-in-loop",
                                lines,
                                f"scf.if in scf.for: {sides}",
                                dma_both_sides=both,
                            )
                        )
                element_loop = node.name == "scf.for" and "ExtractedLoadOrStore" in node.closing
                for branch in node.branches:
                    walk(branch, in_loop or node.name == "scf.for", discrete or element_loop)
                continue
            seen.update(lines_of(node.loc))
            for check in (_strided_access, _unaligned_rows):
                fact = check(node, defs, lines_of)
                if fact is not None:
                    facts.append(fact)
            if discrete and node.name == "memref.load":
                fact = _discrete_load(node, defs, lines_of)
                if fact is not None:
                    facts.append(fact)
            if in_loop and node.name in _INT_VECTOR_OPS:
                fact = _int_vector_op(node, lines_of)
                if fact is not None:
                    facts.append(fact)

    walk(root, False)
    mode = _MIX_MODE.search(text)
    return LoweredKernel(
        kernel_path, _dedup(facts), seen, branch_copies, mode.group(1) if mode else None
    )


def pointer_selects(ttir_text: str, kernel_path: str) -> list[SourceLoc]:
    """Source locations of ``arith.select`` ops that pick between pointers (TTIR)."""
    aliases = location_aliases(ttir_text)
    found = []
    for line in ttir_text.splitlines():
        body = TRAILING_LOC.sub("", line.strip())
        if " arith.select " not in f" {body} " or "!tt.ptr" not in body.rsplit(":", 1)[-1]:
            continue
        frames = [
            f
            for f in resolve_location(op_location(line), aliases)
            if same_file(f.path, kernel_path)
        ]
        found.extend(frames[:1])
    return found


# -- facts --------------------------------------------------------------------------------
def _layout(memref_type: str) -> tuple[list[str], list[str]] | None:
    m = _MEMREF.search(memref_type)
    if not m:
        return None
    dims = m.group(1).split("x")[:-1]  # the last one is the element type
    strides = [s.strip() for s in m.group(2).split(",")] if m.group(2) else []
    return dims, strides


def _gather_kind(memref_type: str) -> tuple[bool, bool, str] | None:
    """(strided, certain, strides text) for a view with no unit stride, else None."""
    layout = _layout(memref_type)
    if layout is None:
        return None
    dims, strides = layout
    if not strides or len(strides) != len(dims):
        return None  # identity layout: contiguous
    live = [s for d, s in zip(dims, strides) if d != "1"]
    if not live or "1" in live:
        return None
    return True, "?" not in live, f"strided<[{', '.join(strides)}]>"


def _strided_access(op: Op, defs: dict[str, Op], lines_of) -> IrFact | None:
    if op.name == "memref.copy":
        operands = OPERAND.findall(op.text)
        types = op.text.split(":", 1)[1].split(" to ") if ":" in op.text else []
        if len(operands) < 2 or len(types) != 2:
            return None
        candidates = [
            ("strided-load", operands[0], types[0]),
            ("strided-store", operands[1], types[1]),
        ]
    elif op.name == "bufferization.materialize_in_destination":
        operands = OPERAND.findall(op.text.split(":", 1)[0])
        types = op.text.split(":", 1)[1] if ":" in op.text else ""
        if len(operands) < 2 or "memref<" not in types:
            return None
        candidates = [("strided-store", operands[1], "memref<" + types.rsplit("memref<", 1)[1])]
    else:
        return None
    for kind, value, memref_type in candidates:
        root = global_root(value, defs)
        if root is None:
            continue
        gather = _gather_kind(memref_type)
        if gather is None:
            continue
        _, certain, strides = gather
        lines = tuple(dict.fromkeys(lines_of(op.loc) + lines_of(root.loc)))
        if lines:
            return IrFact(kind, lines, f"{op.name} through {strides}", certain=certain)
    return None


_INT_VECTOR_OPS = frozenset(
    {"arith.cmpi", "arith.shrsi", "arith.shrui", "arith.shli", "arith.andi", "arith.ori"}
    | {"arith.xori"}
)
_INT_TENSOR = re.compile(r"tensor<(?:[\d?]+x)+i(\d+)>")
_ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}
ROW_BYTES = 32


def _discrete_load(op: Op, defs: dict[str, Op], lines_of) -> IrFact | None:
    """A one-element load from a kernel argument in an element-by-element loop."""
    operands = OPERAND.findall(op.text.split("=", 1)[1]) if "=" in op.text else []
    if not operands or global_root(operands[0], defs) is None:
        return None
    lines = lines_of(op.loc)
    return IrFact("discrete-load", lines, "memref.load per element") if lines else None


def _int_vector_op(op: Op, lines_of) -> IrFact | None:
    """An integer compare, shift or bitwise op on an integer tensor (not a mask)."""
    types = op.text.rsplit(":", 1)[-1] if ":" in op.text else ""
    m = _INT_TENSOR.search(types)
    if m is None or m.group(1) == "1":
        return None
    lines = lines_of(op.loc)
    return (
        IrFact("int-vector-op", lines, f"{op.name} on {m.group(0)} in scf.for") if lines else None
    )


def _unaligned_rows(op: Op, defs: dict[str, Op], lines_of) -> IrFact | None:
    """A copy between the Unified Buffer and a 2-D (or wider) view of a kernel argument
    whose rows are off a multiple of 32 bytes: a row pitch, or rows of two or more
    elements narrower than 32 bytes."""
    if op.name == "memref.copy":
        operands = OPERAND.findall(op.text)[:2]
        types = op.text.split(":", 1)[1].split(" to ") if ":" in op.text else []
        pairs = list(zip(operands, types)) if len(types) == 2 else []
    elif op.name == "bufferization.materialize_in_destination":
        operands = OPERAND.findall(op.text.split(":", 1)[0])
        types = op.text.split(":", 1)[1] if ":" in op.text else ""
        if len(operands) < 2 or "memref<" not in types:
            return None
        pairs = [(operands[1], "memref<" + types.rsplit("memref<", 1)[1])]
    else:
        return None
    for value, memref_type in pairs:
        root = global_root(value, defs)
        m = _MEMREF.search(memref_type)
        if root is None or m is None or not m.group(2):
            continue
        parts = m.group(1).split("x")
        dims, element = parts[:-1], parts[-1]
        strides = [s.strip() for s in m.group(2).split(",")]
        size = _ELEMENT_BYTES.get(element)
        if size is None or len(dims) < 2 or len(strides) != len(dims) or strides[-1] != "1":
            continue
        pitch = int(strides[-2]) if strides[-2].isdigit() else None
        width = int(dims[-1]) if dims[-1].isdigit() else None
        detail = ""
        if pitch is not None and pitch > 1 and (pitch * size) % ROW_BYTES:
            detail = f"row pitch {pitch} x {size} bytes"
        elif width is not None and width > 1 and width * size < ROW_BYTES:
            detail = f"rows of {width} x {size} bytes"
        if detail:
            lines = tuple(dict.fromkeys(lines_of(op.loc) + lines_of(root.loc)))
            if lines:
                return IrFact("unaligned-rows", lines, f"{op.name} of {detail}")
    return None


def _moves_global(nodes: list, defs: dict[str, Op]) -> bool:
    for node in nodes:
        if isinstance(node, Region):
            if any(_moves_global(b, defs) for b in node.branches):
                return True
            continue
        if node.name == "memref.copy":
            operands = OPERAND.findall(node.text)
            if any(global_root(v, defs) is not None for v in operands[:2]):
                return True
        elif node.name == "bufferization.materialize_in_destination":
            operands = OPERAND.findall(node.text.split(":", 1)[0])
            if len(operands) >= 2 and global_root(operands[1], defs) is not None:
                return True
    return False


def _dedup(facts: list[IrFact]) -> list[IrFact]:
    return list(dict.fromkeys(facts))
