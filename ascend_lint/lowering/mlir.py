"""Reading the MLIR text the compiler prints (TTIR, the ``ttadapter`` output): ops and
their regions as a tree, the values they define, the kernel argument a memref views, and
the source frames of their ``loc(...)`` trailers.  Every reader of lowered IR in this
package (the IR facts, the grid use, the UB verdict) parses through here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_FILE_LOC = re.compile(r'"([^"]+)":(\d+):(\d+)')
TRAILING_LOC = re.compile(r"\bloc\((#loc\d*|\"[^\"]*\":\d+:\d+)\)\s*$")
_DEF = re.compile(r"^(%[\w.$-]+)(?::\d+)?(?:\s*,\s*%[\w.$-]+)*\s*=\s*([\w.]+)")
_OP = re.compile(r"^([a-z_]+\.[\w.]+)")
OPERAND = re.compile(r"%[\w.$-]+")


@dataclass(frozen=True)
class SourceLoc:
    path: str
    line: int
    column: int


@dataclass
class Op:
    name: str
    text: str
    loc: str | None = None  # the raw loc reference, resolved later
    result: str | None = None


@dataclass
class Region:
    """An op with regions (scf.for, scf.if, linalg.generic, func.func ...)."""

    name: str
    header: Op
    branches: list[list] = field(default_factory=lambda: [[]])
    closing: str = ""  # the text after the closing brace: attributes and loc


# -- text to tree -------------------------------------------------------------------------
def location_aliases(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = _ALIAS.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


def resolve_location(loc: str | None, aliases: dict[str, str], depth: int = 0) -> list[SourceLoc]:
    """Every file frame a loc names, innermost first (callee before its call site)."""
    if not loc or depth > 50:
        return []
    frames = []
    pos = 0
    for token in re.finditer(r'#loc\d*|"[^"]+":\d+:\d+', loc):
        if token.start() < pos:
            continue
        t = token.group(0)
        if t.startswith("#"):
            frames.extend(resolve_location(aliases.get(t), aliases, depth + 1))
        else:
            m = _FILE_LOC.match(t)
            frames.append(SourceLoc(m.group(1), int(m.group(2)), int(m.group(3))))
    return frames


def lines_in_file(loc: str | None, aliases: dict[str, str], path: str) -> tuple[int, ...]:
    """The lines of the file `path` a loc names, innermost frame first, each once."""
    frames = resolve_location(loc, aliases)
    return tuple(dict.fromkeys(f.line for f in frames if same_file(f.path, path)))


def op_location(line: str) -> str | None:
    m = TRAILING_LOC.search(line)
    return m.group(1) if m else None


def _make_op(line: str) -> Op:
    body = TRAILING_LOC.sub("", line).strip()
    m = _DEF.match(body)
    if m:
        return Op(m.group(2), body, op_location(line), m.group(1))
    m = _OP.match(body)
    return Op(m.group(1) if m else body.split(" ")[0], body, op_location(line))


def op_tree(text: str) -> list:
    root: list = []
    stack: list[Region] = []
    current = root
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#loc") or line.startswith("//"):
            continue
        if line.startswith("}"):
            if not stack:
                continue
            region = stack[-1]
            rest = line[1:].strip()
            if rest.endswith("{"):  # `} else {` or the next region of the same op
                region.branches.append([])
                current = region.branches[-1]
                continue
            region.closing = rest
            loc = op_location(rest)
            if loc and region.header.loc is None:
                region.header.loc = loc
            stack.pop()
            current = stack[-1].branches[-1] if stack else root
            continue
        if line.endswith("{"):
            header = _make_op(line[:-1])
            region = Region(header.name, header)
            current.append(region)
            stack.append(region)
            current = region.branches[0]
            continue
        current.append(_make_op(line))
    return root


def collect_definitions(nodes: list, defs: dict[str, Op]) -> None:
    for node in nodes:
        if isinstance(node, Region):
            if node.header.result:
                defs[node.header.result] = node.header
            for branch in node.branches:
                collect_definitions(branch, defs)
        elif node.result:
            defs[node.result] = node


_VIEW_OPS = {
    "memref.subview",
    "memref.reinterpret_cast",
    "memref.cast",
    "memref.collapse_shape",
    "memref.expand_shape",
}


def global_root(value: str, defs: dict[str, Op]) -> Op | None:
    """The reinterpret_cast of a kernel argument a memref value views, if it is one."""
    for _ in range(64):
        op = defs.get(value)
        if op is None:
            return None
        if op.name == "memref.reinterpret_cast":
            source = OPERAND.findall(op.text.split("=", 1)[1])
            return op if source and source[0].startswith("%arg") else None
        if op.name not in _VIEW_OPS:
            return None
        operands = OPERAND.findall(op.text.split("=", 1)[1])
        if not operands:
            return None
        value = operands[0]
    return None


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return a == b
