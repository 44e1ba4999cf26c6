"""The UB verdict of one lowered specialisation: bounds on its peak Unified Buffer use,
read from the ``ttadapter`` output (linalg / memref / tensor on one vector core).

Every buffer is a ``memref.alloc`` (a tile loaded from global memory) or a tensor an op
computes, live from its definition to its last use (a value defined before a loop and
read in it lives to the loop's end; a loop's carried values live through it), each row
padded to 32 bytes.  MLIR prints the same names in sibling regions, so a name defined
again is a new value.  What one op's lowering holds beyond its operands and result (the
compiler's rewrites and temporary buffers) is ``ub_model.op_temps``.

* Lower bound: the peak of what must be live at once.  A result may take the place of an
  operand that dies at its op (a lane-wise op, no larger result; a linalg op's
  destination), a value yielded to a loop is that loop's buffer, a fill of a scalar
  computed at run time is left out (vector-scalar instructions take it as a scalar), and
  so is a one-axis broadcast that only element-wise arithmetic reads (the compiler folds
  it into those ops, which read its input instead); DMA buffers and stored values count
  twice under multibuffer only inside ``scf.for`` loops, where the compiler multibuffers
  them; each op adds its certain temporaries.  The index input of an argmax or argmin (a
  ``linalg.reduce`` in ``max_with_index`` / ``min_with_index`` mode) is no use: BiShengIR
  drops it unless it is marked ``UseIndexInput`` (``LinalgToHFusionReduceWithIndex``,
  since AscendNPU-IR e61369a; the reduction makes its own indices), and triton-ascend
  marks none, so the ``tl.arange`` of indices is dead where nothing else reads it.  In a
  mixed cube/vector kernel (``mix_mode`` other than ``aiv``) the tiles that feed a matmul
  live in the cube's L1, not UB, and dim 0 of the others is split over two vector cores.
* Upper bound: the peak of what may be live at once: no reuse between an op's operands
  and its result, run-time fills wherever an op other than element-wise arithmetic reads
  them (a store, a reduction, a loop, a compare, a select, a cast), every broadcast, DMA
  buffers and stored values twice under multibuffer, every temporary of each op's
  rewrite; on a target whose planning is not known to reuse dead buffers (A5), the sum of
  them all.  An argmax's index input is read (older BiShengIR keeps it).  A shape the IR
  leaves dynamic, an element type the model does not know, or an op it cannot size (a
  library call) makes the upper bound unknown.
* A buffer that a DMA moves with a non-unit last stride, and every buffer of the
  lane-wise ops around it, gives each element of its last dimension a 32-byte block: in
  both bounds for a static stride, in the upper one for a stride known only at run time.

``overflows`` when the lower bound exceeds the capacity, ``fits`` when the upper bound
is within it, ``uncertain`` otherwise: a definite verdict only where the bound behind it
holds.  ``benchmarks/UB_TABLE.md`` sets both against the compiler's reported numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ascend_lint import ub_model
from ascend_lint.lowering import diagnosis
from ascend_lint.lowering.mlir import (
    Op,
    Region,
    global_root,
    lines_in_file,
    location_aliases,
    op_tree,
)

_RESULTS = re.compile(r"^(%[\w.$-]+)(?::(\d+))?((?:\s*,\s*%[\w.$-]+)*)\s*=\s*")
_SHAPED = re.compile(r"\b(tensor|memref)<([^<>]*(?:<[^<>]*>[^<>]*)*)>")
_ELEMENT_BITS = {
    "i1": 1,
    "i8": 8,
    "i16": 16,
    "f16": 16,
    "bf16": 16,
    "i32": 32,
    "f32": 32,
    "i64": 64,
    "f64": 64,
    "index": 64,
    "f8E4M3FN": 8,
    "f8E5M2": 8,
}
_MEMREF_VIEWS = {
    "memref.subview",
    "memref.cast",
    "memref.collapse_shape",
    "memref.expand_shape",
    "memref.reinterpret_cast",
    "bufferization.to_tensor",
}
# bufferization turns these into views of their source (extract_slice: a subview), no
# copy; a reshape that changes the last dimension changes the 32-byte padding, so it is
# a buffer of its own (sized by its result type)
_TENSOR_VIEWS = {"tensor.extract_slice", "tensor.cast"}
_RESHAPES = {"tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape"}
# dialects whose ops the bounds understand; any other op (a library call such as
# `call @triton_flip`, a vendor op) may hold buffers the IR does not show
_KNOWN_DIALECTS = ("arith.", "math.", "linalg.", "tensor.", "bufferization.", "memref.", "scf.")
# annotation.mark only attaches hints (attributes) to a buffer that already exists;
# gpu.barrier (`tl.debug_barrier`) synchronises and holds no data
_KNOWN_OPS = {"func.func", "func.return", "return", "module", "annotation.mark", "gpu.barrier"}
# tensor.empty (and alloc_tensor) only names the destination an op then fills: the
# buffer is that op's result
_NOT_BUFFERS = {
    "tensor.extract",
    "tensor.dim",
    "bufferization.to_memref",
    "tensor.empty",
    "bufferization.alloc_tensor",
}
# ops whose temporaries' lower bound already counts their result as a separate buffer
# (the result comes last in their rewrite, after the temporaries)
_RESULT_AFTER_TEMPS = {"cmpi", "divi", "remi"}
_CASTS = ("extf", "truncf", "extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui")
# the ops whose lowering holds temporaries, by the kind `ub_model.op_temps` knows them as
_TEMP_KINDS = {
    "arith.cmpi": "cmpi",
    "arith.divsi": "divi",
    "arith.divui": "divi",
    "arith.remsi": "remi",
    "arith.remui": "remi",
    "linalg.reduce": "reduce",
    "linalg.broadcast": "broadcast",
    "arith.select": "select",
    "arith.maximumf": "nan_minmax",
    "arith.minimumf": "nan_minmax",
    "linalg.generic": "generic",
    "linalg.transpose": "transpose",
    **{f"arith.{cast}": "cast" for cast in _CASTS},
}
# math ops rewritten into several fp32 steps whatever their input type
_LONG_MATH = {"tanh", "erf", "log1p", "expm1", "sin", "cos", "tan", "atan", "powf", "exp2"}
_NOT_LANES = {"arith.constant"}
# lane-wise ops that cannot take a splat or a broadcast operand folded in: the compiler
# folds them only into element-wise arithmetic and math (BiShengIR `HFusionInlineBrc`:
# element-wise unary and binary ops; `InlineOTFBroadcast`: a whitelist of vector ops),
# never into a compare, a select or a cast
_NO_FOLD = {
    "arith.cmpf",
    "arith.cmpi",
    "arith.select",
    "arith.bitcast",
    "arith.index_cast",
    *(f"arith.{cast}" for cast in _CASTS),
}
_MATMUL_OPS = {"linalg.matmul", "linalg.batch_matmul", "linalg.matmul_transpose_b"}
_LOOPS = {"scf.for", "scf.while"}
_WITH_INDEX = {"max_with_index", "min_with_index"}


@dataclass
class UbEstimate:
    lower_bits: int
    upper_bits: int | None
    capacity_bits: int
    target: str
    verdict: str
    largest: list[dict] = field(default_factory=list)  # the biggest allocs, for the message
    why_uncertain: str = ""

    def as_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "ub_bits_lower": self.lower_bits,
            "ub_bits_upper": self.upper_bits,
            "capacity_bits": self.capacity_bits,
            "target": self.target,
            "largest": self.largest,
            "why_uncertain": self.why_uncertain,
        }


def target_for_arch(arch: str | None) -> ub_model.UbTarget:
    """The UB target of an NPU arch string as triton-ascend spells it (``Ascend910B4``,
    ``Ascend910_9382``); the default target when it names none of them."""
    name = (arch or "").lower()
    try:
        return ub_model.get_target(name)
    except ValueError:
        pass
    for target in sorted(ub_model.TARGETS.values(), key=lambda t: -len(t.name)):
        if name.startswith(target.name):
            return target
    return ub_model.get_target(ub_model.DEFAULT_TARGET)


@dataclass
class _Value:
    """One buffer of the lowered kernel: an alloc, or a tensor an op computes."""

    name: str
    dims: tuple[int, ...] | None  # None: the IR leaves a dimension open
    bits: int | None  # element width; None: a type the model does not know
    start: int
    end: int
    # "alloc" | "tensor" | "splat" (a linalg.fill: may stay a scalar) | "broadcast" (one
    # the compiler may fold into the lane-wise ops that read it)
    kind: str
    shape: str = ""
    loc: str | None = None
    bound: tuple[int, ...] | None = None  # a dynamic slice: the static shape it is cut from
    weight: int = 1  # multibuffer copies (a DMA buffer or a stored value)
    in_for: bool = False  # defined inside scf.for loops only: where the compiler multibuffers
    lower_share: float = 1.0  # the part of it certain to be in this core's UB
    stored: bool = False
    carried: bool = False  # a loop's result: the buffer its iterations update
    # the last use the lower bound counts (-1: none yet): a use the compiler may drop is
    # left out, and a value read by such uses only is dead where they are dropped
    certain_end: int = -1
    droppable_uses: bool = False
    # a splat or broadcast read by an op it cannot be folded into: a real buffer
    materialized: bool = False
    aligned: str = ""  # "" | "upper" | "both": stride-aligned in which bounds

    def nbytes(self, bound: str) -> int | None:
        dims = self.dims if self.dims is not None else self.bound
        if dims is None or self.bits is None:
            return None
        if bound == "lower" and self.lower_share < 1 and dims:
            dims = (-(-dims[0] // 2), *dims[1:]) if self.lower_share else ()
            if not dims:
                return 0
        bits = self.bits if bound == "lower" else max(self.bits, 8)
        aligned = self.aligned == "both" or (self.aligned == "upper" and bound == "upper")
        if bound == "lower" and self.bits == 1:
            aligned = False  # how a stride-aligned mask is laid out is not certain
        return ub_model.buffer_bytes(dims, bits, stride_aligned=aligned)

    def lower_end(self) -> int | None:
        """The last use the lower bound counts; None: dead once droppable uses go."""
        if self.certain_end >= 0:
            return max(self.certain_end, self.start)
        return None if self.droppable_uses else self.start


@dataclass
class _OpRecord:
    """One op that defines buffers: what it reads, what it defines, what it holds."""

    position: int
    name: str
    results: list[str]
    operands: list[str]  # the roots of its tensor operands
    elementwise: bool  # same-shape lanes: its result may take a dying operand's place
    outs: list[str] = field(default_factory=list)  # destination operands (linalg)
    shape: ub_model.OpShape | None = None  # for its temporaries


def estimate(
    text: str, kernel_path: str, target: ub_model.UbTarget, multibuffer: bool | None = None
) -> UbEstimate:
    """Bounds for one lowered module; ``multibuffer`` is the launch's own option where it
    gave one (triton-ascend's ``multibuffer=``), else the target's default."""
    walk = _Walk()
    walk.run(op_tree(text))
    factor = 2 if (target.multibuffer if multibuffer is None else multibuffer) else 1
    mixed = re.search(r'mix_mode\s*=\s*"(\w+)"', text)
    is_mixed = bool(mixed) and mixed.group(1) != "aiv"
    values = list(walk.values.values())
    for value in values:
        if value.name in walk.dma_filled or value.stored:
            value.weight = factor
        if is_mixed:
            value.lower_share = 0.0 if value.name in walk.matmul_operands else 0.5
    walk.align_strided()
    lower = _lower_bound(walk, values)
    unknown = walk.unknown or next(
        (f"dynamic {v.shape}" for v in values if v.nbytes("upper") is None), ""
    )
    upper = None
    if not unknown:
        upper = _upper_bound(walk, values, factor, target.reuses_dead_buffers)
        upper *= ub_model.BITS_PER_BYTE
    lower *= ub_model.BITS_PER_BYTE
    aliases = location_aliases(text)
    largest = []
    allocs = [v for v in values if v.kind == "alloc"]
    for alloc in sorted(allocs, key=lambda a: -(a.nbytes("upper") or 0) * a.weight)[:3]:
        lines = lines_in_file(alloc.loc, aliases, kernel_path)
        largest.append(
            {
                "shape": alloc.shape,
                "bits": (alloc.nbytes("upper") or 0) * alloc.weight * ub_model.BITS_PER_BYTE,
                "multibuffered": alloc.weight > 1,
                "lines": list(dict.fromkeys(lines)),
            }
        )
    return UbEstimate(
        lower_bits=lower,
        upper_bits=upper,
        capacity_bits=target.capacity_bits,
        target=target.name,
        verdict=ub_model.verdict(lower, upper, target.capacity_bits),
        largest=largest,
        why_uncertain=unknown,
    )


def _lower_bound(walk: _Walk, values: list[_Value]) -> int:
    """The peak of what must be live at once: every alloc (DMA buffers in their copies)
    and computed tensor from its definition to its last use, a result counted from the
    next op where it can take the place of an operand that dies at its op (same lanes,
    no larger), a value computed into the loop buffer it is yielded to counted as that
    buffer, splat constants not at all (they may stay scalars) nor broadcasts that only
    lane-wise ops read (they may be folded into those ops), and each op's certain
    temporaries while it runs."""
    start = {v.name: v.start for v in values}
    end = _ends_with_folded_broadcasts(walk, values, certain=True)
    merged = set(walk.yielded_into)
    # read only where the compiler drops the read: no buffer once it does
    merged |= {v.name for v in values if v.lower_end() is None}
    # a broadcast folded into its readers is no buffer: they read its input instead
    merged |= {v.name for v in values if v.kind == "broadcast" and not v.materialized}
    for record in walk.records:
        if record.shape is not None and record.shape.kind in _RESULT_AFTER_TEMPS:
            continue
        taken: set[str] = set()
        for result in record.results:
            value = walk.values.get(result)
            if value is None or result in merged:
                continue
            size = value.nbytes("lower") or 0
            candidates = record.operands if record.elementwise else record.outs
            for operand in candidates:
                source = walk.values.get(operand)
                if (
                    source is None
                    or operand in taken
                    or source.kind == "splat"
                    or operand in merged
                    or end[operand] != record.position
                    or (source.nbytes("lower") or 0) < size
                ):
                    continue
                taken.add(operand)
                start[result] = record.position + 1
                break
    intervals = []
    for value in values:
        if value.kind == "splat" or value.name in merged:
            continue
        size = value.nbytes("lower") or 0
        # BiShengIR multibuffers the local side of a DMA only in scf.for loops
        # (`MarkMultiBuffer`): outside one, a single copy is certain
        weight = value.weight if value.in_for else 1
        intervals.append((start[value.name], end[value.name], int(size * weight)))
    for record, temps in walk.temps():
        if not set(record.results) & merged:
            intervals.append((record.position, record.position, temps.lower))
    return _peak(intervals)


def _ends_with_folded_broadcasts(
    walk: _Walk, values: list[_Value], certain: bool = False
) -> dict[str, int]:
    """Each value's last use (``certain``: the last one the compiler keeps), where the
    input of a broadcast the compiler may fold into its readers lives until the
    broadcast's last reader."""
    if certain:
        own = {v.name: v.start if v.lower_end() is None else v.lower_end() for v in values}
    else:
        own = {v.name: v.end for v in values}
    end = dict(own)
    for value in values:
        source = walk.broadcast_sources.get(value.name)
        if source in end:
            end[source] = max(end[source], own[value.name])
    return end


def _upper_bound(walk: _Walk, values: list[_Value], factor: int, reuse: bool = True) -> int:
    """The peak of what may be live at once: every buffer from its definition to its last
    use with no reuse between an op's operands and its result, splat constants wherever
    more than lane-wise ops read them, values stored to global memory in their DMA copies, and every temporary each
    op's lowering creates; on a target whose planning is not known to reuse dead
    buffers, every buffer for the whole kernel."""
    intervals = []
    end = _ends_with_folded_broadcasts(walk, values)
    for value in values:
        if value.kind == "splat" and not value.materialized:
            continue
        size = (value.nbytes("upper") or 0) * value.weight
        intervals.append((value.start, end[value.name], size))
    for record, temps in walk.temps():
        intervals.append((record.position, record.position, temps.upper))
    if not reuse:
        return sum(size for _, _, size in intervals)
    return _peak(intervals)


def _peak(intervals: list[tuple[int, int, int]]) -> int:
    events: list[tuple[int, int]] = []
    for start, end, size in intervals:
        if size and end >= start:
            events.append((start, size))
            events.append((end + 1, -size))
    events.sort(key=lambda e: (e[0], e[1]))  # frees before allocations at one point
    peak = current = 0
    for _, delta in events:
        current += delta
        peak = max(peak, current)
    return peak


class _Walk:
    """One pass over the op tree: buffers with live ranges, DMA fills, stores, and the
    ops that hold temporaries."""

    def __init__(self):
        self.position = 0
        self.values: dict[str, _Value] = {}
        self.root: dict[str, str] = {}  # a view's name -> the buffer it views
        self.dma_filled: set[str] = set()
        self.matmul_operands: set[str] = set()
        self.records: list[_OpRecord] = []
        self.strided: dict[str, str] = {}  # a buffer moved with a non-unit last stride
        self.yielded_into: dict[str, str] = {}  # a value -> the loop buffer it becomes
        self.unknown = ""
        # the op that defines each name where the walk stands (MLIR prints the same name in
        # sibling regions: two loops may each define `%alloc`), for the IR facts' walk from
        # a view to its argument and for a fill's scalar
        self.defs: dict[str, Op] = {}
        # each name's definition where the walk stands: the key of its value; a name
        # defined again (in a sibling region) gets a fresh key, so that the values of
        # both regions stay apart
        self.scope: dict[str, str] = {}
        self.broadcast_sources: dict[str, str] = {}  # a foldable broadcast -> its input
        # loop start -> buffers read inside it, and whether by a use the compiler keeps
        self.pending: dict[int, list[tuple[_Value, bool]]] = {}
        self.loop_results: list[list[str]] = []  # the results of the loops we are in
        self.loops: list[str] = []  # the kinds of the loops we are in
        # index tensors an `annotation.mark {UseIndexInput}` asks an argmax to read
        self.marked_index_inputs: set[str] = set()

    def run(self, nodes: list, loops: tuple = ()) -> None:
        for node in nodes:
            if isinstance(node, Region):
                start = self.position
                self._op(node.header, loops, region=node)
                self.position += 1
                inner = (*loops, (node, start)) if node.name in _LOOPS else loops
                if node.name in _LOOPS:
                    self.loops.append(node.name)
                for branch in node.branches:
                    self.run(branch, inner)
                if node.name in _LOOPS:
                    self.loops.pop()
                if node.name in _LOOPS:
                    # loop-carried values and anything read in the loop live to its end
                    self._close_loop(start, self.position)
                    for result in self.loop_results.pop():
                        self.values[result].end = max(self.values[result].end, self.position)
                self.position += 1
            else:
                self._op(node, loops)
                self.position += 1

    def temps(self):
        """Each op with temporaries, and their bytes (stride-aligned with its operands)."""
        for record in self.records:
            if record.shape is None:
                continue
            names = [*record.results, *record.operands]
            modes = {self.values[n].aligned for n in names if n in self.values}
            lower = ub_model.op_temps(record.shape, stride_aligned="both" in modes)
            upper = ub_model.op_temps(record.shape, stride_aligned=bool(modes - {""}))
            yield record, ub_model.Temps(lower.lower, upper.upper, upper.why)

    def align_strided(self) -> None:
        """A buffer that a DMA moves with a non-unit last stride gives each element of its
        last dimension its own 32-byte block, and the alignment spreads to every operand
        of each vector op that touches it (BiShengIR `MarkStrideAlign` and
        `EnableStrideAlign`, propagated among the operands of all vector ops): here,
        through the elementwise ops whose operands have its shape.  A static stride makes
        it certain (both bounds); a stride known only at run time, possible (the upper)."""
        links: dict[str, set[str]] = {}
        for record in self.records:
            if not record.elementwise or record.name == "scf.for":
                continue
            members = [n for n in (*record.results, *record.operands) if n in self.values]
            for a in members:
                for b in members:
                    if a != b and self.values[a].dims == self.values[b].dims:
                        links.setdefault(a, set()).add(b)
        for seed, mode in sorted(self.strided.items(), key=lambda kv: kv[1] != "both"):
            todo = [seed]
            seen = {seed}
            while todo:
                name = todo.pop()
                value = self.values.get(name)
                if value is None:
                    continue
                if value.aligned != "both":
                    value.aligned = mode
                for other in links.get(name, ()):
                    if other not in seen:
                        seen.add(other)
                        todo.append(other)

    # -- one op -------------------------------------------------------------------------
    def _op(self, op: Op, loops: tuple, region: Region | None = None) -> None:
        text = op.text
        names, rest = _split_results(text)
        name_of = op.name
        folds = (
            name_of.startswith(("arith.", "math."))
            and name_of not in _NOT_LANES
            and name_of not in _NO_FOLD
        )
        block_args = _block_args(rest) if region is not None else []
        for arg in block_args:
            self._bind(arg)
        if name_of == "annotation.mark" and "UseIndexInput" in rest:
            marked = _first_operand(rest)
            if marked:
                self.marked_index_inputs.add(self._key(marked))
        droppable = _index_input(name_of, rest)
        if droppable is not None and self._key(droppable) in self.marked_index_inputs:
            droppable = None
        for name in _operands(rest):
            if name not in block_args:
                self._use(name, loops, folds, certain=name != droppable)
        results = [self._bind(name) for name in names]
        if op.result:
            self.defs[op.result] = op
        if region is not None and name_of in _LOOPS:
            self.loop_results.append([])
        if name_of == "memref.alloc" and results:
            dims, bits, shape = _dims(_types(rest, "memref")[-1:] or [""])
            self._define(results[0], dims, bits, shape, op.loc, "alloc")
            return
        if not _understood(name_of) and not self.unknown:
            callee = re.search(r"@[\w.$-]+", rest) if name_of.endswith("call") else None
            what = f"{name_of} {callee.group(0)}" if callee else name_of
            self.unknown = f"{what}: an op whose buffers the IR does not show"
        if name_of in _RESHAPES and _same_last_dim(rest):
            name_of = "tensor.cast"  # a view: the rows keep their padding
        if name_of in _MEMREF_VIEWS or name_of in _TENSOR_VIEWS:
            source = _first_operand(rest)
            if results and source and self._root(source) in self.values:
                self.root[results[0]] = self._root(source)
            return
        if name_of == "memref.copy":
            operands = _operands(rest)
            if len(operands) >= 2 and global_root(operands[0], self.defs) is not None:
                target = self._root(operands[1])
                if target in self.values and self.values[target].kind == "alloc":
                    self.dma_filled.add(target)
                    self._mark_strided(target, _types(rest, "memref")[:1])
            return
        if name_of == "bufferization.materialize_in_destination":
            source = _first_operand(rest)
            if source:
                root = self._root(source)
                if root in self.values:
                    self.values[root].stored = True
                    self._mark_strided(root, _types(rest, "memref")[-1:])
            return
        if name_of == "scf.yield":
            self._yield(rest)
            return
        if name_of in _MATMUL_OPS:
            ins = rest.split("outs(", 1)[0]
            for name in _operands(ins):
                self.matmul_operands.add(self._root(name))
        if name_of in _NOT_BUFFERS or not results:
            return
        # a region op (linalg.generic) prints its result types after its closing brace
        result_types = _result_types(rest) or (_result_types(region.closing) if region else [])
        if not result_types:
            return
        if name_of == "arith.select":
            result_types = result_types[-1:]  # `: condition type, value type`
        elif name_of in ("arith.cmpi", "arith.cmpf"):
            # `: operand type`: the result is a mask of the same shape
            result_types = [_mask_type(result_types[0])]
        names = _result_names(results, len(result_types))
        kind = "splat" if _is_splat(name_of, rest, self.defs) else "tensor"
        if name_of == "linalg.broadcast" and _inlinable_broadcast(rest):
            kind = "broadcast"
            source = _first_operand(rest.split("outs(", 1)[0])
            if source and names:
                self.broadcast_sources[names[0]] = self._root(source)
        for name, typ in zip(names, result_types):
            dims, bits, shape = _dims([typ])
            bound = None
            if dims is None:
                bound, shape = _bounded_by_source(rest, typ)
            self._define(name, dims, bits, shape, op.loc, kind, bound)
        if region is not None and region.name == "scf.for" and "iter_args(" in rest:
            # a loop-carried value is the loop result's buffer, read across iterations
            carried = re.findall(r"(%[\w.$-]+)\s*=\s*(%[\w.$-]+)", rest.split("iter_args(", 1)[1])
            inits = []
            for (arg, init), result in zip(carried, names):
                self.root[self._key(arg)] = result
                self.values[result].carried = True
                inits.append(self._root(init))
            self.loop_results[-1] = names
            self.records.append(_OpRecord(self.position, name_of, names, inits, True))
            return
        self._record(name_of, names, rest, region)

    def _record(self, name_of: str, names: list[str], rest: str, region: Region | None) -> None:
        ins, _, outs = rest.partition("outs(")
        operands = [self._root(n) for n in _operands(ins)]
        tensor_operands = [n for n in operands if n in self.values]
        dest = [self._root(n) for n in _operands(outs.split(")", 1)[0])] if outs else []
        elementwise = name_of.startswith(("arith.", "math.")) and name_of not in _NOT_LANES
        record = _OpRecord(
            self.position,
            name_of,
            names,
            tensor_operands,
            elementwise,
            outs=[d for d in dest if d in self.values],
        )
        record.shape = self._op_shape(name_of, rest, names, tensor_operands, region)
        self.records.append(record)

    def _op_shape(self, name_of, rest, names, operands, region) -> ub_model.OpShape | None:
        """What `ub_model.op_temps` needs to know of this op, or None: no temporaries."""
        kind = _TEMP_KINDS.get(name_of)
        if name_of.startswith("math."):
            kind = "math"
        if kind is None:
            return None
        result = self.values.get(names[0])
        if result is None or result.dims is None:
            return None
        typed = _types(rest.rsplit(" : ", 1)[-1], "tensor") if " : " in rest else []
        source_dims, source_bits, _ = _dims(typed[:1]) if typed else (None, None, "")
        computed = sum(1 for n in operands if self.values[n].kind != "splat")
        splats = len(operands) - computed
        common = {
            "dims": result.dims,
            "element_bits": source_bits or result.bits or 0,
            "result_bits": result.bits or 0,
            "tensor_operands": computed,
            "splat_operands": splats,
            "is_float": _is_float(typed[:1]),
        }
        if kind == "cmpi":
            predicate = re.match(r"\s*(\w+)", rest.split("arith.cmpi", 1)[-1])
            common["dims"] = source_dims or result.dims
            return ub_model.OpShape("cmpi", predicate=predicate.group(1), **common)
        if kind == "math":
            if (source_bits or 32) > 16 and name_of.split(".", 1)[1] not in _LONG_MATH:
                return None
            return ub_model.OpShape("math", **common)
        if kind == "select":
            common["element_bits"] = result.bits or 0
            return ub_model.OpShape("select", **common)
        if kind in ("reduce", "broadcast"):
            source = _types(rest.split("outs(", 1)[0], "tensor")
            dims, bits, _ = _dims(source[:1])
            if dims is None:
                return None
            axes = tuple(int(d) for d in re.findall(r"\d+", _attr(rest, "dimensions")))
            combiner = ""
            if region is not None:
                body = [n for n in region.branches[0] if isinstance(n, Op)]
                combiner = next(
                    (n.name.split(".", 1)[1] for n in body if n.name.startswith("arith.")), ""
                )
            return ub_model.OpShape(
                kind,
                dims=dims,
                element_bits=bits or 0,
                result_bits=result.bits or 0,
                reduce_dims=axes,
                combiner=combiner,
                is_float=_is_float(source[:1]),
                out_dims=result.dims,
            )
        return ub_model.OpShape(kind, **common)

    def _yield(self, rest: str) -> None:
        """`scf.yield` in a loop: each yielded value becomes the loop's carried buffer."""
        if not self.loop_results or not self.loop_results[-1]:
            return
        for name, result in zip(_operands(rest.split(" : ", 1)[0]), self.loop_results[-1]):
            root = self._root(name)
            value = self.values.get(root)
            if value is not None and root != result and not value.carried:
                self.yielded_into[root] = result

    def _mark_strided(self, root: str, memref_types: list[str]) -> None:
        strides = _last_stride(memref_types[0]) if memref_types else None
        if strides is None or strides == "1":
            return
        mode = "upper" if strides == "?" else "both"
        if self.strided.get(root) != "both":
            self.strided[root] = mode

    def _define(self, name, dims, bits, shape, loc, kind, bound=None) -> None:
        if (dims is None and bound is None) or bits is None:
            if not self.unknown:
                self.unknown = f"dynamic or unknown buffer {shape}"
        value = _Value(name, dims, bits, self.position, self.position, kind, shape, loc, bound)
        value.in_for = bool(self.loops) and all(loop == "scf.for" for loop in self.loops)
        self.values[name] = value

    def _key(self, name: str) -> str:
        return self.scope.get(name, name)

    def _bind(self, name: str) -> str:
        """A fresh key for a name this op defines (the name itself the first time)."""
        key = name if name not in self.scope else f"{name}@{self.position}"
        self.scope[name] = key
        return key

    def _root(self, name: str) -> str:
        """The buffer a name (as the IR spells it, where the walk stands) is a view of."""
        name = self._key(name)
        seen = 0
        while name in self.root and seen < 64:
            name = self.root[name]
            seen += 1
        return name

    def _use(self, name: str, loops: tuple, folds: bool = False, certain: bool = True) -> None:
        value = self.values.get(self._root(name))
        if value is None:
            return
        if not certain:
            value.droppable_uses = True
        if not folds:
            # a splat or a broadcast that only element-wise arithmetic reads may be folded
            # into it as a scalar or a broadcast operand; one a store, a reduction, a
            # loop, a compare or a select reads is a buffer
            value.materialized = True
        end = self.position
        for _loop, start in loops:  # outermost first: the widest loop the def is outside
            if value.start < start:
                self.pending.setdefault(start, []).append((value, certain))
                break
        value.end = max(value.end, end)
        if certain:
            value.certain_end = max(value.certain_end, end)

    def _close_loop(self, start: int, end: int) -> None:
        for value, certain in self.pending.pop(start, []):
            value.end = max(value.end, end)
            if certain:
                value.certain_end = max(value.certain_end, end)


# -- text -------------------------------------------------------------------------------
def _index_input(name_of: str, rest: str) -> str | None:
    """The index input of an argmax or argmin reduction, which BiShengIR drops unless an
    annotation asks for it (see the module's doc), or None."""
    if name_of != "linalg.reduce":
        return None
    mode = re.search(r'\breduce_mode\s*=\s*"(\w+)"', rest)
    if mode is None or mode.group(1) not in _WITH_INDEX:
        return None
    ins = _operands(rest.split("outs(", 1)[0])
    return ins[1] if len(ins) == 2 else None


def _understood(name: str) -> bool:
    if name in _KNOWN_OPS or name.startswith(_KNOWN_DIALECTS):
        return True
    # block-argument lines of regions (`(%in: f32, %init: f32) {`, `^bb0(...)`) are no ops
    return name.startswith(("(", "^")) or not name[:1].isalpha()


def _block_args(header: str) -> list[str]:
    """The names a loop header defines for its body: the induction variable and the
    iteration arguments (`scf.for %i = ... iter_args(%acc = %init)`)."""
    m = re.match(r"\s*scf\.for\s+(%[\w.$-]+)\s*=", header)
    if not m:
        return []
    carried = header.split("iter_args(", 1)[1] if "iter_args(" in header else ""
    return [m.group(1), *re.findall(r"(%[\w.$-]+)\s*=", carried)]


def _same_last_dim(text: str) -> bool:
    shapes = _types(text.rsplit(" : ", 1)[-1], "tensor")
    if len(shapes) < 2:
        return False
    last = [s[s.index("<") + 1 : -1].split(",", 1)[0].split("x")[-2:-1] for s in shapes[:2]]
    return bool(last[0]) and last[0] == last[1]


def _split_results(text: str) -> tuple[list[str], str]:
    m = _RESULTS.match(text)
    if not m:
        return [], text
    names = [m.group(1)]
    if m.group(2):
        names = [f"{m.group(1)}#{i}" for i in range(int(m.group(2)))]
    names += re.findall(r"%[\w.$-]+", m.group(3) or "")
    return names, text[m.end() :]


def _result_names(results: list[str], count: int) -> list[str]:
    if len(results) == count:
        return results
    return results[:count]


def _operands(text: str) -> list[str]:
    # `%9#1` reads result 1 of `%9:2`; a whole `%9` is the first
    return [m.group(0) for m in re.finditer(r"%[\w.$-]+(?:#\d+)?", text)]


def _first_operand(text: str) -> str | None:
    names = _operands(text)
    return names[0] if names else None


def _types(text: str, kind: str) -> list[str]:
    return [f"{m.group(1)}<{m.group(2)}>" for m in _SHAPED.finditer(text) if m.group(1) == kind]


def _result_types(text: str) -> list[str]:
    """The tensor types an op's results have, as printed after ``->`` or the last ``:``
    (``a to b`` casts and ``a into b`` reshapes: ``b``)."""
    if "->" in text:
        tail = text.rsplit("->", 1)[1]
    elif " : " in text:
        tail = text.rsplit(" : ", 1)[1]
        for word in (" to ", " into "):
            if word in tail:
                tail = tail.rsplit(word, 1)[1]
    else:
        return []
    return _types(tail, "tensor")


def _dims(types: list[str]) -> tuple[tuple[int, ...] | None, int | None, str]:
    """The static shape and element width of a tensor or memref type (None where open)."""
    if not types or not types[0]:
        return None, None, ""
    typ = types[0]
    body = typ[typ.index("<") + 1 : -1].split(",", 1)[0].strip()
    parts = body.split("x")
    bits = _ELEMENT_BITS.get(parts[-1].strip())
    dims = parts[:-1]
    if any(not d.strip().isdigit() for d in dims):
        return None, bits, typ
    return tuple(int(d) for d in dims), bits, typ


def _mask_type(typ: str) -> str:
    """The i1 tensor type of the same shape as `typ`."""
    head, body = typ.split("<", 1)
    parts = body[:-1].split(",", 1)[0].split("x")
    return f"{head}<{'x'.join([*parts[:-1], 'i1'])}>"


def _is_float(types: list[str]) -> bool:
    if not types or "<" not in types[0]:
        return False
    body = types[0][types[0].index("<") + 1 : -1].split(",", 1)[0]
    return body.split("x")[-1].strip().startswith(("f", "bf"))


def _last_stride(memref_type: str) -> str | None:
    """The last stride of a memref type's layout: "1" for the identity layout, "?" where
    it is known only at run time."""
    m = re.search(r"strided<\[([^\]]*)\]", memref_type)
    if not m:
        return "1"
    strides = [x.strip() for x in m.group(1).split(",") if x.strip()]
    return strides[-1] if strides else None


def _attr(text: str, name: str) -> str:
    m = re.search(rf"\b{name}\s*=\s*\[([^\]]*)\]", text)
    return m.group(1) if m else ""


def _inlinable_broadcast(rest: str) -> bool:
    """A broadcast the compiler can fold into the vector ops that read it (BiShengIR
    `InlineOTFBroadcast`: one broadcast dimension, an element type other than i64 and i1;
    its whitelist of readers is narrower than every lane-wise op, which makes leaving the
    broadcast out of the lower bound safe, never too high)."""
    if len(re.findall(r"\d+", _attr(rest, "dimensions"))) != 1:
        return False
    source = _types(rest.split("outs(", 1)[0], "tensor")
    _, bits, _ = _dims(source[:1])
    return bits not in (None, 1, 64)


def _is_splat(name_of: str, rest: str, defs: dict[str, Op]) -> bool:
    """A tensor of one value computed at run time (`linalg.fill` or `tensor.splat` of a
    scalar that is no constant): the compiler folds it into the element-wise ops that read
    it as a scalar operand (BiShengIR `HFusionInlineBrc`), so it is a buffer only where
    another op reads it.

    A fill of a constant is a buffer: vLLM-Ascend issue #6395 reports 2,106,368 bits for
    `fused_gdn_gating_kernel` at BLK_BATCHES 1024, more than its loop's buffers hold
    without its three constant fills (hoisted out of the loop, live across it), which
    only element-wise ops read; Liger-Kernel's cross-entropy at BLOCK_SIZE 4096 compiles
    although it holds six fills of run-time scalars across its loop, which as buffers
    would not fit."""
    if name_of not in ("linalg.fill", "tensor.splat"):
        return False
    ins = rest.split("outs(", 1)[0]
    scalar = _first_operand(ins.split("ins(", 1)[-1]) if "ins(" in ins else _first_operand(ins)
    source = defs.get(scalar) if scalar else None
    return source is None or source.name != "arith.constant"


def _bounded_by_source(text: str, typ: str) -> tuple[tuple[int, ...] | None, str]:
    """A dynamic slice is no larger than the static tensor it is cut from."""
    if " : " not in text or " to " not in text:
        return None, typ
    source = _types(text.rsplit(" : ", 1)[1].split(" to ", 1)[0], "tensor")
    dims, _, shape = _dims(source[:1])
    return (dims, f"{typ} (at most {shape})") if dims is not None else (None, typ)


# -- the gate's report -------------------------------------------------------------------
def summary(specs: list[dict], target: ub_model.UbTarget) -> dict:
    """The report summary's UB counts."""
    verdicts = [s["ub"]["verdict"] for s in specs if s.get("ub")]
    return {
        "ub_target": target.name,
        "ub_capacity_bits": target.capacity_bits,
        "ub_fits": verdicts.count("fits"),
        "ub_overflows": verdicts.count("overflows"),
        "ub_uncertain": verdicts.count("uncertain"),
    }


def report_lines(report: dict, rel) -> list[str]:
    """The terminal summary's UB lines: the counts, each specialisation that overflows,
    and one line per kernel with uncertain ones (how many, the widest bounds, why)."""
    s = report["summary"]
    if not s["ub_fits"] + s["ub_overflows"] + s["ub_uncertain"]:
        return []
    lines = [
        f"UB ({s['ub_target']}, {s['ub_capacity_bits']:,} bits): {s['ub_fits']} fit, "
        f"{s['ub_overflows']} overflow, {s['ub_uncertain']} uncertain"
    ]
    uncertain: dict[str, list[dict]] = {}
    for spec in report["specialisations"]:
        ub = spec.get("ub") or {}
        where = f"{rel(spec['file'])}:{spec['def_line']}: {spec['kernel']}"
        if ub.get("verdict") == "overflows":
            dropped = (
                " (an autotune config the tuner drops)" if spec.get("dropped_by_autotuner") else ""
            )
            lines.append(f"{where}: {bounds_text(ub)}{dropped}")
            lines.append(f"  specialisation: {diagnosis.specialisation_text(spec)}")
            tests = spec.get("tests") or []
            if tests:
                more = f" and {len(tests) - 3} more" if len(tests) > 3 else ""
                lines.append(f"  launched by: {', '.join(tests[:3])}{more}")
        elif ub.get("verdict") == "uncertain":
            uncertain.setdefault(where, []).append(ub)
    for where, ubs in uncertain.items():
        lower = max(u["ub_bits_lower"] for u in ubs)
        uppers = [u["ub_bits_upper"] for u in ubs if u["ub_bits_upper"] is not None]
        reasons = sorted({u["why_uncertain"] for u in ubs if u["why_uncertain"]})
        if reasons:
            upper = f"unknown ({reasons[0]})"
        else:
            upper = f"up to {max(uppers):,} bits"
        lines.append(
            f"{where}: UB uncertain in {len(ubs)} specialisation{'s' * (len(ubs) > 1)}: "
            f"lower bound up to {lower:,} bits, upper bound {upper}"
        )
    return lines


# -- words ------------------------------------------------------------------------------
def bounds_text(ub: dict) -> str:
    upper = ub["ub_bits_upper"]
    upper_text = f"{upper:,}" if upper is not None else "unknown"
    return (
        f"UB {ub['verdict']}: {ub['ub_bits_lower']:,} to {upper_text} bits of "
        f"{ub['capacity_bits']:,} ({ub['target']})"
    )


def failure_text(record: dict, where: str) -> str:
    """What a strict run says about a test that launched a specialisation that overflows."""
    ub = record["ub"]
    lines = [
        f"{where}: {record['kernel']}: ub overflow: needs at least {ub['ub_bits_lower']:,} "
        f"bits of {ub['capacity_bits']:,} ({ub['target']})"
    ]
    lines.append(f"  specialisation: {diagnosis.specialisation_text(record)}")
    for buffer in ub.get("largest", []):
        at = f" (line {', '.join(map(str, buffer['lines']))})" if buffer["lines"] else ""
        twice = ", multibuffered" if buffer["multibuffered"] else ""
        lines.append(f"  | {buffer['shape']}: {buffer['bits']:,} bits{twice}{at}")
    return "\n".join(lines)
