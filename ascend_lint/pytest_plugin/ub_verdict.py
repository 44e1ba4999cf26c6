"""The UB verdict of one lowered specialisation: bounds on its peak Unified Buffer use,
read from the ``ttadapter`` output (linalg / memref / tensor on one vector core).

* Lower bound: the peak, over the kernel's ops, of the ``memref.alloc`` buffers live at
  once (an alloc lives from its definition to the last use of it or of any view of it,
  ``bufferization.to_tensor`` included), each padded to 32 bytes on its last dimension
  and counted twice when it is filled from global memory and the target multibuffers
  (the DMA buffers the compiler plans as two copies).  In a mixed cube/vector kernel
  (``mix_mode`` other than ``aiv``) the tiles that feed a matmul live in the cube's L1,
  not UB, and dim 0 of the others is split over two vector cores: those allocs count
  half, matmul operands not at all.
* Upper bound: every alloc for the whole kernel (no reuse), plus the peak of the tensor
  values live at once (each result of a tensor op is its own buffer, reshapes and
  slices are views of theirs; a value defined before a loop and read in it lives to
  the loop's end; stores' sources multibuffered),
  plus at each op that needs a scratch buffer (reductions, casts, ``maximumf`` /
  ``minimumf`` NaN handling, ``linalg.generic`` and ``transpose``) one more buffer as
  large as its largest tensor.  A shape the IR leaves dynamic, an element type the
  model does not know, or an op it cannot size makes the upper bound unknown.

``overflows`` when the lower bound exceeds the capacity, ``fits`` when the upper bound
is within it, ``uncertain`` otherwise: a definite verdict only where the bound behind it
holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ascend_lint import ub_model
from ascend_lint.pytest_plugin import diagnosis, lowered_ir
from ascend_lint.pytest_plugin.lowered_ir import Op, Region

_RESULTS = re.compile(r"^(%[\w.$-]+)(?::(\d+))?((?:\s*,\s*%[\w.$-]+)*)\s*=\s*")
_SHAPED = re.compile(r"\b(tensor|memref)<([^<>]*(?:<[^<>]*>[^<>]*)*)>")
_ELEMENT_BYTES = {
    "i1": 1,
    "i8": 1,
    "i16": 2,
    "f16": 2,
    "bf16": 2,
    "i32": 4,
    "f32": 4,
    "i64": 8,
    "f64": 8,
    "index": 8,
    "f8E4M3FN": 1,
    "f8E5M2": 1,
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
_NOT_BUFFERS = {"tensor.extract", "tensor.dim", "bufferization.to_memref"}
_SCRATCH_OPS = {
    "linalg.reduce",
    "linalg.generic",
    "linalg.transpose",
    "arith.maximumf",
    "arith.minimumf",
    "arith.extf",
    "arith.truncf",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
}
_MATMUL_OPS = {"linalg.matmul", "linalg.batch_matmul", "linalg.matmul_transpose_b"}
_LOOPS = {"scf.for", "scf.while"}


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
class _Buffer:
    name: str
    bytes: int | None  # None: the IR leaves its size open
    start: int
    end: int
    weight: int = 1  # multibuffer copies
    lower_share: float = 1.0  # the part of it certain to be in this core's UB
    shape: str = ""
    loc: str | None = None


def estimate(
    text: str, kernel_path: str, target: ub_model.UbTarget, multibuffer: bool | None = None
) -> UbEstimate:
    """Bounds for one lowered module; ``multibuffer`` is the launch's own option where it
    gave one (triton-ascend's ``multibuffer=``), else the target's default."""
    walk = _Walk()
    tree = lowered_ir._tree(text)
    lowered_ir._collect_defs(tree, walk.defs)
    walk.run(tree)
    factor = 2 if (target.multibuffer if multibuffer is None else multibuffer) else 1
    mixed = re.search(r'mix_mode\s*=\s*"(\w+)"', text)
    is_mixed = bool(mixed) and mixed.group(1) != "aiv"

    allocs = [b for b in walk.buffers.values() if b.name in walk.alloc_names]
    tensors = [b for b in walk.buffers.values() if b.name not in walk.alloc_names]
    for alloc in allocs:
        if alloc.name in walk.dma_filled:
            alloc.weight = factor
        if is_mixed:
            alloc.lower_share = 0.0 if alloc.name in walk.matmul_operands else 0.5
    for value in tensors:
        if value.name in walk.stored:
            value.weight = factor

    lower = _peak(
        [(a.start, a.end, int(a.bytes * a.weight * a.lower_share)) for a in allocs if a.bytes]
    )
    unknown = walk.unknown or next(
        (f"dynamic {b.shape}" for b in walk.buffers.values() if b.bytes is None), ""
    )
    upper = None
    if not unknown:
        everywhere = sum(a.bytes * a.weight for a in allocs)
        live = [(v.start, v.end, v.bytes * v.weight) for v in tensors]
        live += [(p, p, s) for p, s in walk.scratch]
        upper = (everywhere + _peak(live)) * ub_model.BITS_PER_BYTE
    lower *= ub_model.BITS_PER_BYTE
    aliases = lowered_ir._aliases(text)
    largest = []
    for alloc in sorted(allocs, key=lambda a: -(a.bytes or 0) * a.weight)[:3]:
        frames = lowered_ir._resolve(alloc.loc, aliases)
        lines = [f.line for f in frames if lowered_ir._same_file(f.path, kernel_path)]
        largest.append(
            {
                "shape": alloc.shape,
                "bits": (alloc.bytes or 0) * alloc.weight * ub_model.BITS_PER_BYTE,
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


def _peak(intervals: list[tuple[int, int, int]]) -> int:
    events: list[tuple[int, int]] = []
    for start, end, size in intervals:
        if size:
            events.append((start, size))
            events.append((end + 1, -size))
    events.sort(key=lambda e: (e[0], e[1]))  # frees before allocations at one point
    peak = current = 0
    for _, delta in events:
        current += delta
        peak = max(peak, current)
    return peak


class _Walk:
    """One pass over the op tree: buffers with live ranges, DMA fills, stores, scratch."""

    def __init__(self):
        self.position = 0
        self.buffers: dict[str, _Buffer] = {}
        self.root: dict[str, str] = {}  # a view's name -> the buffer it views
        self.alloc_names: set[str] = set()
        self.dma_filled: set[str] = set()
        self.stored: set[str] = set()
        self.matmul_operands: set[str] = set()
        self.scratch: list[tuple[int, int]] = []
        self.unknown = ""
        self.defs: dict[str, Op] = {}  # for lowered_ir's walk from a view to its argument
        self.pending: dict[int, list[_Buffer]] = {}  # loop start -> buffers read inside it

    def run(self, nodes: list, loops: tuple = ()) -> None:
        for node in nodes:
            if isinstance(node, Region):
                start = self.position
                self._op(node.header, loops, region=node)
                self.position += 1
                inner = (*loops, (node, start)) if node.name in _LOOPS else loops
                for branch in node.branches:
                    self.run(branch, inner)
                if node.name in _LOOPS:
                    # loop-carried values and anything read in the loop live to its end
                    self._close_loop(start, self.position)
                self.position += 1
            else:
                self._op(node, loops)
                self.position += 1

    # -- one op -------------------------------------------------------------------------
    def _op(self, op: Op, loops: tuple, region: Region | None = None) -> None:
        text = op.text
        results, rest = _split_results(text)
        for name in _operands(rest):
            self._use(name, loops)
        name_of = op.name
        if name_of == "memref.alloc" and results:
            shape, size = _sized(_types(rest, "memref")[-1:] or [""])
            self._define(results[0], size, shape, op.loc)
            self.alloc_names.add(results[0])
            return
        if not _understood(name_of) and not self.unknown:
            callee = re.search(r"@[\w.$-]+", rest) if name_of.endswith("call") else None
            what = f"{name_of} {callee.group(0)}" if callee else name_of
            self.unknown = f"{what}: an op whose buffers the IR does not show"
        if name_of in _RESHAPES and _same_last_dim(rest):
            name_of = "tensor.cast"  # a view: the rows keep their padding
        if name_of in _MEMREF_VIEWS or name_of in _TENSOR_VIEWS:
            source = _first_operand(rest)
            if results and source and self._root(source) in self.buffers:
                self.root[results[0]] = self._root(source)
            return
        if name_of == "memref.copy":
            names = _operands(rest)
            if len(names) >= 2 and lowered_ir._global_root(names[0], self.defs) is not None:
                target = self._root(names[1])
                if target in self.alloc_names:
                    self.dma_filled.add(target)
            return
        if name_of == "bufferization.materialize_in_destination":
            source = _first_operand(rest)
            if source:
                self.stored.add(self._root(source))
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
        sizes = []
        for typ in result_types:
            shape, size = _sized([typ])
            if size is None:
                shape, size = _bounded_by_source(rest, typ)
            sizes.append((shape, size))
        names = _result_names(results, len(sizes))
        for name, (shape, size) in zip(names, sizes):
            self._define(name, size, shape, op.loc)
        if region is not None and region.name == "scf.for" and "iter_args(" in rest:
            # a loop-carried value is the loop result's buffer, read across iterations
            carried = re.findall(r"(%[\w.$-]+)\s*=", rest.split("iter_args(", 1)[1])
            for name, result in zip(carried, names):
                self.root[name] = result
        if name_of in _SCRATCH_OPS or name_of.startswith("math."):
            known = [s for _, s in sizes if s] + [
                self.buffers[self._root(n)].bytes or 0
                for n in _operands(rest)
                if self._root(n) in self.buffers
            ]
            if known:
                self.scratch.append((self.position, max(known)))

    def _define(self, name: str, size: int | None, shape: str, loc: str | None) -> None:
        if size is None and not self.unknown:
            self.unknown = f"dynamic or unknown buffer {shape}"
        self.buffers[name] = _Buffer(name, size, self.position, self.position, shape=shape, loc=loc)

    def _root(self, name: str) -> str:
        seen = 0
        while name in self.root and seen < 64:
            name = self.root[name]
            seen += 1
        return name

    def _use(self, name: str, loops: tuple) -> None:
        buffer = self.buffers.get(self._root(name))
        if buffer is None:
            return
        end = self.position
        for _loop, start in loops:  # outermost first: the widest loop the def is outside
            if buffer.start < start:
                self.pending.setdefault(start, []).append(buffer)
                break
        buffer.end = max(buffer.end, end)

    def _close_loop(self, start: int, end: int) -> None:
        for buffer in self.pending.pop(start, []):
            buffer.end = max(buffer.end, end)


# -- text -------------------------------------------------------------------------------
def _understood(name: str) -> bool:
    if name in _KNOWN_OPS or name.startswith(_KNOWN_DIALECTS):
        return True
    # block-argument lines of regions (`(%in: f32, %init: f32) {`, `^bb0(...)`) are no ops
    return name.startswith(("(", "^")) or not name[:1].isalpha()


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


def _sized(types: list[str]) -> tuple[str, int | None]:
    if not types or not types[0]:
        return "", None
    typ = types[0]
    body = typ[typ.index("<") + 1 : -1].split(",", 1)[0].strip()
    parts = body.split("x")
    element = parts[-1].strip()
    dims = parts[:-1]
    element_bytes = _ELEMENT_BYTES.get(element)
    if element_bytes is None or any(not d.strip().isdigit() for d in dims):
        return typ, None
    return typ, ub_model.aligned_bytes([int(d) for d in dims], element_bytes)


def _bounded_by_source(text: str, typ: str) -> tuple[str, int | None]:
    """A dynamic slice is no larger than the static tensor it is cut from."""
    if " : " not in text or " to " not in text:
        return typ, None
    source = _types(text.rsplit(" : ", 1)[1].split(" to ", 1)[0], "tensor")
    shape, size = _sized(source[:1])
    return (f"{typ} (at most {shape})", size) if size is not None else (typ, None)


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
