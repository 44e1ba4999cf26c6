"""The stride-1 layout rewrite ASC001 offers as an unsafe fix (the G_T_CONTIG pattern of
`reference_kernels/chunk_o.py`), for a kernel that reads or writes a `[B, T, HV]` tensor
along time with stride `HV` and is launched in the same file.

* Kernels and the helpers that receive the tensor get a `<NAME>_T_CONTIG: tl.constexpr`
  parameter. Every statement that addresses it becomes `if <FLAG>:` with the
  `[B, HV, T]` addressing (`i_h * T_seq` for the head, stride 1 along time, `bos` for a
  packed varlen start, `i_b * HV * T_seq` for a batch start, whole `[T, HV]` planes of
  a leading axis kept) and `else:` with the statement as it was, which launchers select
  only for `HV == 1`. `T_seq = T` is saved on entry when the kernel rebinds `T` (varlen).
* A tensor the kernel only reads: every launch passes `g.transpose(1, 2).contiguous()
  if HV != 1 else g` (the copy is skipped for one head, where the stride is 1 already)
  and `<FLAG>=HV != 1`.
* A tensor it writes keeps its layout for the caller: the launching statement gets a
  `[.., HV, T]` buffer (fresh, or a transposed copy when its values may matter) and is
  followed by the copy back.

The facts (which parameter is the tensor, how each use addresses it, where sequence
starts come from, launch bindings, whether a host buffer holds anything yet) come from
the index; this module only writes text. It offers nothing when one of them is not the
documented shape: a use it does not understand, a launch in another file or through a
launch helper's own call, a helper shared with another tensor, a length it cannot name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascend_lint.codemods import (
    factor_text,
    node_offsets,
    product_factors,
    reindent,
    signed_terms,
)
from ascend_lint.diagnostics import Applicability, Edit, Fix
from ascend_lint.index import (
    LANGUAGE,
    CallBinding,
    GateSite,
    GateUses,
    JitFunction,
    KernelIndex,
    SequenceStart,
    is_head_count,
    pointer_root,
)
from ascend_lint.index.context import Branch
from ascend_lint.index.launches import HostFunction
from ascend_lint.index.naming import is_sequence_length
from ascend_lint.index.syntax import names_in, own_nodes, walk
from ascend_lint.source import SourceFile

_SAFE_ARGUMENT = (ast.Name, ast.Attribute)
_PLAIN_EXPR = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)


class _NoFix(Exception):
    """The pattern is not recognised with certainty: no fix is offered."""


def gate_contig_fix(
    index: KernelIndex,
    source: SourceFile,
    fn: JitFunction,
    pointer: str,
    memo: dict | None = None,
) -> Fix | None:
    """The unsafe fix for the gate `pointer` addresses in `fn`, or None. `memo` (one per
    file) keeps the answer for every finding on the same gate of the same kernel."""
    param = index.gates.gate_param(fn, pointer)
    if param is None:
        return None
    key = (id(fn), param)
    if memo is not None and key in memo:
        return memo[key]
    try:
        fix = _GateRewrite(index, source).fix(fn, param)
    except _NoFix:
        fix = None
    if memo is not None:
        memo[key] = fix
    return fix


@dataclass
class _Member:
    """One function of the rewrite: a launched kernel or a helper that receives the gate."""

    fn: JitFunction
    param: str
    uses: GateUses
    heads: str = ""  # the head count: the stride along time in [B, T, HV]
    flag: str = ""
    helper: bool = False
    length: str | None = None  # the stored time length parameter (kernels)
    t_seq: str | None = None  # how the stored length is spelled in rewritten code
    save_length: bool = False  # insert `T_seq = T` on entry


def _join(terms: list[tuple[str, str]]) -> str:
    sign, first = terms[0]
    out = first if sign == "+" else f"-{first}"
    for sign, text in terms[1:]:
        out += f" {sign} {text}"
    return out


class _GateRewrite:
    def __init__(self, index: KernelIndex, source: SourceFile):
        self.index = index
        self.source = source
        self.text = source.text
        # An address over an axis before the batch (`i_k * all * HV`): the tensor may have
        # more than 3 dimensions, so the host swaps the last two, not dimensions 1 and 2.
        self.leading_axis = False

    @property
    def newline(self) -> str:
        """The file's line ending, for the lines the fix adds."""
        return self.source.newline

    # -- which functions ----------------------------------------------------------------
    def fix(self, fn: JitFunction, param: str) -> Fix:
        members = self._family(fn, param)
        edits: list[tuple[int, int, str]] = []
        written = self._written(members)
        for member in members.values():
            edits += self._function_edits(member, members)
        # After every function: whether an address has a leading axis decides the host's
        # transpose.
        for member in members.values():
            if not member.helper:
                edits += self._launch_edits(member, written)
        edits = sorted(set(edits))  # kernels that share a launch dict share its edits
        for (_s1, e1, _), (s2, _e2, _) in zip(edits, edits[1:]):
            if s2 < e1:
                raise _NoFix  # two rewrites of one span: the shape is not the documented one
        kernel = members[id(fn)]
        if written:
            message = (
                f"Write `{kernel.param}` stride-1 into a [.., HV, T] buffer: `{kernel.flag}` "
                f"branches in the kernel, the host copies it back when `{kernel.heads}` != 1"
            )
        else:
            message = (
                f"Read `{kernel.param}` stride-1 from a [B, HV, T] copy: `{kernel.flag}` "
                f"branches in the kernel, the host transposes it once when "
                f"`{kernel.heads}` != 1"
            )
        return Fix(
            Applicability.UNSAFE,
            message,
            tuple(
                Edit(self.source.position_of(s), self.source.position_of(e), content)
                for s, e, content in edits
            ),
        )

    @staticmethod
    def _written(members: dict[int, _Member]) -> bool:
        """Does a kernel or helper of the rewrite store through the tensor (an output)?"""
        return any(m.uses.writes for m in members.values())

    def _family(self, fn: JitFunction, param: str) -> dict[int, _Member]:
        """The kernel, the helpers its gate reaches and every other kernel that hands
        those helpers a gate: all of them change together, or the calls disagree."""
        index = self.index
        members: dict[int, _Member] = {}
        work = [(fn, param)]
        while work:
            f, p = work.pop()
            known = members.get(id(f))
            if known is not None:
                if known.param != p:
                    raise _NoFix  # one function, two tensors routed through it
                continue
            uses = index.gates.gate_uses(f, p)
            if uses is None or (f is fn and not uses.sites):
                raise _NoFix
            member = _Member(f, p, uses)
            members[id(f)] = member
            for site in uses.sites:
                if site.kind == "helper":
                    work.append((site.callee, site.callee_param))
            callers = index.helper_calls_to(f)
            launched = index.launches_of(f)
            if callers and launched:
                raise _NoFix  # both a kernel and a helper
            if not callers and not launched:
                raise _NoFix  # launched from another file, which this fix cannot see
            member.helper = bool(callers)
            if launched and p in index.layout.transposed_params(f):
                raise _NoFix  # already handed a transposed copy: ASC002's case
            if launched and self.index.gates.hooks_read(f, p):
                raise _NoFix  # a heuristic or autotune hook reads the tensor itself
            for binding in launched:
                # Kernels launched with the same argument (one dict for two kernels, a
                # kernel chosen at run time) receive the transposed gate too.
                for gate in binding.args.get(p, []):
                    for other, q in index.launches_binding(gate):
                        if other.callee is not f:
                            if q != p:
                                raise _NoFix  # two flag names for one argument
                            work.append((other.callee, q))
            for binding in callers:
                exprs = binding.args.get(p, [])
                if len(exprs) != 1:
                    raise _NoFix
                caller = binding.caller
                owner = self._owner_param(caller, exprs[0])
                if owner is None:
                    raise _NoFix  # this call hands the helper some other tensor
                work.append((caller, owner))
        origin = members[id(fn)]
        self._describe(origin, None)
        for member in members.values():
            if member is not origin:
                self._describe(member, origin)
        for member in members.values():
            for site in member.uses.sites:
                if site.kind == "helper":
                    self._check_heads_bound(member, members[id(site.callee)], site.call)
        return members

    def _owner_param(self, caller: JitFunction, expr: ast.AST) -> str | None:
        root = pointer_root(expr)
        return self.index.gates.gate_param(caller, root) if root else None

    def _describe(self, member: _Member, origin: _Member | None) -> None:
        fn = member.fn
        heads: set[str] = set()
        if not member.uses.sites and origin is not None and origin.heads in fn.params:
            heads.add(origin.heads)  # a kernel that shares the launch but reads no gate
        for site in member.uses.sites:
            if site.kind == "block":
                if not isinstance(site.stride, ast.Name):
                    raise _NoFix
                heads.add(site.stride.id)
            if site.address is not None:
                for _sign, term in signed_terms(site.address):
                    heads |= {
                        f.id
                        for f in product_factors(term)
                        if isinstance(f, ast.Name) and f.id in fn.params and is_head_count(f.id)
                    }
        if len(heads) != 1 or next(iter(heads)) not in fn.params:
            raise _NoFix
        member.heads = heads.pop()
        member.flag = f"{member.param.upper()}_T_CONTIG"
        if member.flag in fn.params or member.flag in fn.assignments:
            raise _NoFix
        if member.helper:
            return
        seq = self.index.sequences.of(fn)
        lengths = [p for p in fn.params if p in seq.lengths]
        if not lengths and not seq.offsets_tables:
            lengths = [p for p in fn.params if is_sequence_length(p)]
        if len(lengths) == 1:
            member.length = lengths[0]
            if member.length in fn.assignments:
                existing = fn.assignments.get("T_seq")
                if existing is None and "T_seq" not in fn.params:
                    member.t_seq, member.save_length = "T_seq", True
                elif existing and all(
                    isinstance(v, ast.Name) and v.id == member.length for v in existing
                ):
                    member.t_seq = "T_seq"
            else:
                member.t_seq = member.length

    def _check_heads_bound(self, caller: _Member, callee: _Member, call: ast.Call) -> None:
        binding = self.index.helper_binding(call)
        bound = binding.args.get(callee.heads, []) if binding is not None else []
        if not (len(bound) == 1 and isinstance(bound[0], ast.Name) and bound[0].id == caller.heads):
            raise _NoFix

    # -- addresses ----------------------------------------------------------------------
    def _address(
        self,
        member: _Member,
        expr: ast.AST,
        pointer_first: bool,
        variant: str | None,
        splits,
        order: int,
    ) -> str:
        """`expr` re-addressed for [B, HV, T] storage. `variant` picks a side of the
        varlen branch for a start defined on both sides; the branches met go to `splits`."""
        terms = signed_terms(expr)
        out: list[tuple[str, str]] = []
        if pointer_first:
            sign, first = terms[0]
            if not (isinstance(first, ast.Name) and first.id in member.uses.pointers):
                raise _NoFix
            out.append((sign, first.id))
            terms = terms[1:]
        kinds: list[str] = []
        for sign, term in terms:
            text, kind = self._term(member, term, variant, splits, order)
            kinds.append(kind)
            out.append((sign, text))
        if kinds.count("head") > 1 or not out:
            raise _NoFix
        if "head" in kinds and "start" not in kinds:
            # `g + i_h` alone: the time axis may be a flattened `B * T` (`T = g.numel() //
            # HV`), which `transpose(1, 2)` of a [B, T, HV] tensor does not lay out as
            # [HV, B * T]; only a sequence or batch start shows the [B, T, HV] shape.
            raise _NoFix
        return _join(out)

    def _term(self, member: _Member, term: ast.AST, variant: str | None, splits, order: int):
        """(text, kind) for one summand of a [B, T, HV] address; kind is "head" (the
        head index), "start" (a sequence or batch start), "time" (along the sequence) or
        "leading" (whole [T, HV] planes of an axis before the batch)."""
        fn = member.fn
        parts = product_factors(term)
        scaled = [
            i for i, f in enumerate(parts) if isinstance(f, ast.Name) and f.id == member.heads
        ]
        seq = self.index.sequences.of(fn)
        if len(scaled) > 1:
            raise _NoFix
        if not scaled:
            name = term.id if isinstance(term, ast.Name) else None
            if (
                name is None
                or member.helper
                or member.t_seq is None
                or name in member.uses.pointers
                or name in seq.lengths
                or name in seq.time_vectors
                or name in fn.loop_variables
                or is_head_count(name)
                or name in self.index.gates.start_derived(fn)
            ):
                raise _NoFix
            return f"{name} * {member.t_seq}", "head"
        others = [f for i, f in enumerate(parts) if i != scaled[0]]
        if not others:
            raise _NoFix
        inner = others[0]
        if (
            len(others) == 1
            and isinstance(inner, ast.BinOp)
            and isinstance(inner.op, (ast.Add, ast.Sub))
            and _names(inner) & self.index.gates.sequence_starts(fn)
        ):
            # `(bos + o_t) * HV`: the start and the offset inside the sequence apart
            out, kinds = [], set()
            for inner_sign, summand in signed_terms(inner):
                heads = ast.Name(member.heads, ast.Load())
                text, kind = self._term(
                    member, ast.BinOp(summand, ast.Mult(), heads), variant, splits, order
                )
                out.append((inner_sign, text))
                kinds.add(kind)
            return f"({_join(out)})", "start" if "start" in kinds else "time"
        names = {n for f in others for n in _names(f)}
        lengths = [f.id for f in others if isinstance(f, ast.Name) and f.id in seq.lengths]
        if lengths:
            # A batch offset `i_b * T * HV`: the same element count in both layouts.
            if (
                member.helper
                or member.t_seq is None
                or lengths != [member.length]
                or member.length in fn.assignments  # which `T`: the stored or the local one?
            ):
                raise _NoFix
            rest = [f for f in others if not (isinstance(f, ast.Name) and f.id == member.length)]
            if not rest or _names_of(rest) & self.index.gates.start_derived(fn):
                raise _NoFix
            head = " * ".join(factor_text(f) for f in rest)
            return f"{head} * {member.heads} * {member.t_seq}", "start"
        if len(others) == 1 and isinstance(inner, ast.Name):
            start = self.index.gates.sequence_start(fn, inner.id)
            if start is not None:
                return self._start(member, start, variant, splits), "start"
        row_counts = self.index.gates.whole_row_counts(fn)
        rows = [f for f in others if isinstance(f, ast.Name) and f.id in row_counts]
        if rows and not member.helper:
            # `i_k * all * HV` with `all = B * T`: a leading axis (per-K-block partials),
            # whole [T, HV] planes, as many elements in [HV, T] storage: kept as it is.
            rest = [f for f in others if f is not rows[0]]
            rest_names = _names_of(rest)
            if (
                len(rows) != 1
                or row_counts[rows[0].id] != member.length
                or not rest
                or rest_names & self.index.gates.start_derived(fn)
                or rest_names & seq.time_vectors
            ):
                raise _NoFix
            self.leading_axis = True
            return " * ".join(factor_text(f) for f in parts), "leading"
        if names & self.index.gates.batch_derived(fn):
            raise _NoFix  # built from a sequence start the index cannot split
        if self.index.gates.time_math_term(fn, term, order, set(member.uses.pointers)) is None:
            # whole rows on every path (`i_k * total * HV`, `total` counting every token):
            # the same in [B, HV, T], but not a form this rewrite knows to keep
            raise _NoFix
        # A time index (`last_idx * HV`, `o_t * HV`): time is the unit-stride axis now;
        # a packed global token index (`bos + o_t` from cu_seqlens) is one too.
        kind = "start" if names & self.index.gates.start_derived(fn) else "time"
        return " * ".join(factor_text(f) for f in others), kind

    def _start(self, member: _Member, start: SequenceStart, variant: str | None, splits) -> str:
        if member.helper or member.t_seq is None:
            raise _NoFix
        batch = None
        if start.batch_index is not None:
            if start.length != member.length:
                raise _NoFix
            batch = f"{start.batch_index} * {member.heads} * {member.t_seq}"
        if start.packed and batch is not None:
            splits.append(start.branch)
            return batch if variant == "batch" else start.name
        return start.name if start.packed else batch

    # -- text of one function -----------------------------------------------------------
    def _span(self, node: ast.AST) -> tuple[int, int]:
        return node_offsets(self.source, node)

    def _line_start(self, offset: int) -> int:
        return self.text.rfind("\n", 0, offset) + 1

    def _line_end(self, end: int) -> int:
        """Where the line that a statement ends on at `end` ends (before its newline);
        no fix when more code follows on that line (`stmt; other`)."""
        after = self.text.find(self.newline, end)
        after = len(self.text) if after < 0 else after
        rest = self.text[end:after].strip()
        if rest and not rest.startswith("#"):
            raise _NoFix
        return after

    def _indent_of(self, offset: int) -> str:
        start = self._line_start(offset)
        indent = self.text[start:offset]
        if indent.strip():
            raise _NoFix  # something else on the line before it
        return indent

    def _function_edits(self, member: _Member, members: dict[int, _Member]):
        fn = member.fn
        edits: list[tuple[int, int, str]] = []
        edits.append(self._add_parameter(fn, member.flag))
        if member.save_length and member.uses.sites:
            edits.append(self._save_length(member))
        by_stmt: dict[int, list[GateSite]] = {}
        for site in member.uses.sites:
            by_stmt.setdefault(id(site.stmt), []).append(site)
        groups: list[list[ast.stmt]] = []
        for stmt in fn.statements:
            sites = by_stmt.get(id(stmt))
            if not sites:
                continue
            if not any(self._branching(s) for s in sites):
                # Only a helper call that takes the flag: edited in place.
                for site in sites:
                    edits.append(self._flag_argument(member, site, members))
                continue
            if any(isinstance(node, ast.IfExp) for node in own_nodes(stmt)):
                # A conditional expression copied into both branches would be two (a
                # runtime one in a loop is an ASC003 finding each): the flag chooses
                # between the addresses inside the expression instead.
                edits.extend(self._inline(member, members, sites))
                continue
            if self._same_in_both(member, stmt, sites):
                # The same addressing in both layouts (a whole plane of a leading axis):
                # nothing to choose, only the helper calls' flags to pass.
                edits += [
                    self._flag_argument(member, s, members) for s in sites if s.kind == "helper"
                ]
                continue
            if groups and self._next_sibling(fn, groups[-1][-1]) is stmt:
                groups[-1].append(stmt)
            else:
                groups.append([stmt])
        unit = self._indent_unit(fn)
        for group in groups:
            edits.append(self._branch(member, members, group, by_stmt, unit))
        return edits

    def _same_in_both(self, member: _Member, stmt: ast.stmt, sites) -> bool:
        start, end = self._span(stmt)
        splits: list[Branch] = []
        contig = self._apply(start, end, self._rewrites(member, sites, None, splits))
        return not splits and contig == self.text[start:end]

    @staticmethod
    def _branching(site: GateSite) -> bool:
        return site.address is not None or site.kind == "block"

    def _next_sibling(self, fn: JitFunction, stmt: ast.stmt) -> ast.stmt | None:
        parent = self.index.parents(fn).get(id(stmt))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                i = next(i for i, s in enumerate(block) if s is stmt)
                return block[i + 1] if i + 1 < len(block) else None
        return None

    def _indent_unit(self, fn: JitFunction) -> str:
        def_indent = self._indent_of(self._span(fn.node)[0])
        body_indent = self._indent_of(self._span(fn.node.body[0])[0])
        unit = body_indent[len(def_indent) :]
        if not body_indent.startswith(def_indent) or not unit:
            raise _NoFix
        return unit

    def _branch(self, member, members, group, by_stmt, unit) -> tuple[int, int, str]:
        """`if FLAG:` (the stride-1 addressing) / `else:` (as it was) around `group`."""
        first, last = group[0], group[-1]
        start, _ = self._span(first)
        _, end = self._span(last)
        indent = self._indent_of(start)
        self._line_end(end)
        for stmt in group:
            for node in walk(stmt):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if node.lineno != node.end_lineno:
                        raise _NoFix  # re-indenting would change a multi-line string
        sites = [s for stmt in group for s in by_stmt[id(stmt)]]
        common = [self._flag_argument(member, s, members) for s in sites if s.kind == "helper"]
        splits: list[Branch] = []
        contig = self._apply(start, end, common + self._rewrites(member, sites, None, splits))
        legacy = self._apply(start, end, common)
        nl = self.newline
        inner = indent + unit
        if splits:
            if any(b.node is not splits[0].node for b in splits):
                raise _NoFix
            branch = splits[0]
            batch = self._apply(start, end, common + self._rewrites(member, sites, "batch", []))
            a, b = (contig, batch) if branch.taken else (batch, contig)
            contig_block = (
                f"{inner}if {ast.unparse(branch.test)}:{nl}"
                f"{reindent(a, inner + unit, unit + unit)}{nl}"
                f"{inner}else:{nl}{reindent(b, inner + unit, unit + unit)}"
            )
        else:
            contig_block = reindent(contig, inner, unit)
        text = (
            f"{indent}if {member.flag}:{nl}{contig_block}{nl}"
            f"{indent}else:{nl}{reindent(legacy, inner, unit)}"
        )
        return self._line_start(start), end, text

    def _inline(self, member, members, sites) -> list[tuple[int, int, str]]:
        """Each address of one statement as `(<stride-1> if FLAG else <as it was>)`: a
        conditional on a constexpr, which Triton resolves at compile time."""
        out = []
        flag = member.flag
        for site in sites:
            if site.kind == "helper":
                out.append(self._flag_argument(member, site, members))
            if site.address is not None:
                s, e = self._span(site.address)
                splits: list[Branch] = []
                order = member.fn.order_of(site.stmt)
                contig = self._address(
                    member, site.address, site.pointer_first, None, splits, order
                )
                if splits:
                    if any(b.node is not splits[0].node for b in splits):
                        raise _NoFix
                    branch = splits[0]
                    batch = self._address(
                        member, site.address, site.pointer_first, "batch", [], order
                    )
                    a, b = (contig, batch) if branch.taken else (batch, contig)
                    contig = f"({a} if {ast.unparse(branch.test)} else {b})"
                out.append((s, e, self._choice(s, e, contig, flag)))
            if site.kind == "block":
                s, e = self._span(site.stride)
                out.append((s, e, self._choice(s, e, "1", flag)))
        return out

    def _choice(self, start: int, end: int, contig: str, flag: str) -> str:
        """`contig if FLAG else <the text at start:end>`, in parentheses unless it stands
        alone as an argument, an element or an assigned value."""
        text = self.text
        before = text[:start].rstrip()
        after = text[end:].lstrip(" \t")
        alone = (before.endswith(("(", ",")) and after.startswith((")", ","))) or (
            before.endswith("=")
            and not before.endswith(("==", "!=", "<=", ">="))
            and after[:1] in ("\n", "\r", "#", ";", "")
        )
        choice = f"{contig} if {flag} else {text[start:end]}"
        return choice if alone else f"({choice})"

    def _rewrites(self, member, sites, variant, splits) -> list[tuple[int, int, str]]:
        out = []
        for site in sites:
            if site.address is not None:
                s, e = self._span(site.address)
                new = self._address(
                    member,
                    site.address,
                    site.pointer_first,
                    variant,
                    splits,
                    member.fn.order_of(site.stmt),
                )
                out.append((s, e, new))
            if site.kind == "block":
                s, e = self._span(site.stride)
                out.append((s, e, "1"))
        return out

    def _apply(self, start: int, end: int, edits: list[tuple[int, int, str]]) -> str:
        text = self.text[start:end]
        for s, e, content in sorted(edits, reverse=True):
            if not (start <= s <= e <= end):
                raise _NoFix
            text = text[: s - start] + content + text[e - start :]
        return text

    def _flag_argument(self, caller: _Member, site: GateSite, members: dict[int, _Member]):
        callee = members[id(site.callee)]
        return self._add_argument(site.call, f"{callee.flag}={caller.flag}")

    def _add_argument(self, call: ast.Call, text: str) -> tuple[int, int, str]:
        nodes = [*call.args, *call.keywords]
        if not nodes:
            _, end = self._span(call)
            return end - 1, end - 1, text
        return self._insert_after(nodes[-1], text)

    def _insert_after(self, node: ast.AST, text: str) -> tuple[int, int, str]:
        """`, text` after `node`; on its own line when the list is written one per line
        with a trailing comma."""
        _, end = self._span(node)
        i = end
        while i < len(self.text) and self.text[i] in " \t":
            i += 1
        if self.text.startswith(",", i):
            j = i + 1
            while j < len(self.text) and self.text[j] in " \t":
                j += 1
            if self.text.startswith(self.newline, j) or self.text.startswith("#", j):
                line = self.text[self._line_start(self._span(node)[0]) :]
                indent = line[: len(line) - len(line.lstrip(" \t"))]
                return i + 1, i + 1, f"{self.newline}{indent}{text},"
        return end, end, f", {text}"

    def _add_parameter(self, fn: JitFunction, flag: str) -> tuple[int, int, str]:
        args = fn.node.args
        params = [*args.posonlyargs, *args.args]
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or not params:
            raise _NoFix
        annotation = None
        for a in params:
            if a.arg in fn.constexpr_params and a.annotation is not None:
                s, e = self._span(a.annotation)
                annotation = self.text[s:e]
                break
        if annotation is None:
            local = [n for n, q in self.index.aliases.modules.items() if q == LANGUAGE]
            if not local:
                raise _NoFix
            annotation = f"{local[0]}.constexpr"
        return self._insert_after(params[-1], f"{flag}: {annotation}")

    def _save_length(self, member: _Member) -> tuple[int, int, str]:
        body = member.fn.node.body
        first = body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            if len(body) < 2:
                raise _NoFix
            first = body[1]
        start, _ = self._span(first)
        indent = self._indent_of(start)
        nl = self.newline
        line = self._line_start(start)
        text = (
            f"{indent}# The stored time length, before varlen rebinds `{member.length}`.{nl}"
            f"{indent}{member.t_seq} = {member.length}{nl}"
        )
        return line, line, text

    # -- launches -----------------------------------------------------------------------
    def _launch_edits(self, member: _Member, written: bool) -> list[tuple[int, int, str]]:
        edits = []
        for binding in self.index.launches_of(member.fn):
            edits += self._launch(member, binding, written)
        if not edits:
            raise _NoFix
        return edits

    @staticmethod
    def _direct(call: ast.Call, expr: ast.AST) -> bool:
        return any(a is expr for a in call.args) or any(k.value is expr for k in call.keywords)

    def _launch(
        self, member: _Member, binding: CallBinding, written: bool
    ) -> list[tuple[int, int, str]]:
        call = binding.call
        if member.flag in binding.args:
            raise _NoFix
        gates = binding.args.get(member.param, [])
        heads = binding.args.get(member.heads, [])
        if len(gates) != 1 or len(heads) != 1:
            raise _NoFix
        gate, count = gates[0], heads[0]
        s, e = self._span(count)
        count_text = self.text[s:e]
        if "\n" in count_text:
            raise _NoFix
        if not isinstance(count, _PLAIN_EXPR):
            count_text = f"({count_text})"
        flag_value = f"{count_text} != 1"
        if self._direct(call, gate):
            if member.fn not in self.index.resolve_callee(call.func.value):
                raise _NoFix  # through a launch helper: its other kernels would change too
            if not self._direct(call, count):
                raise _NoFix
            host = binding.host
            edits = [self._add_argument(call, f"{member.flag}={flag_value}")]
            if written:
                launching = self._statement_around(host, call) if host is not None else None
                if not (isinstance(launching, ast.Expr) and launching.value is call):
                    raise _NoFix  # the launch's value is used (`x = kernel[grid](...)`)
                return edits + self._output_buffer(
                    member, binding, host, launching, gate, flag_value
                )
        else:
            place = self.index.argument_place(gate)
            counted = self.index.argument_place(count)
            if place is None or counted is None or counted[2] is not place[2]:
                raise _NoFix  # the head count is not in scope where the gate is set
            kind, node, host = place
            edits = [self._flag_entry(kind, node, member.flag, flag_value)]
            # A dict built in the statement that launches with it (`run(kernel,
            # kernel_kwargs={...})`) is evaluated right before the launch; one kept in a
            # variable for a later launch is not.
            launching = None
            if kind != "item":
                launching = self._statement_around(host, node[0] if kind == "dict" else node)
            inline = isinstance(launching, ast.Expr)
            if written:
                if not inline:
                    raise _NoFix  # where would the buffer be copied back?
                return edits + self._output_buffer(
                    member, binding, host, launching, gate, flag_value
                )
            if not inline and self._written_elsewhere(gate):
                raise _NoFix  # the dict may be built before another kernel writes it
        if isinstance(gate, ast.Constant) and gate.value is None:
            return edits
        if not isinstance(gate, _SAFE_ARGUMENT):
            raise _NoFix  # evaluated twice in the conditional: keep it to names
        s, e = self._span(gate)
        gate_text = self.text[s:e]
        condition = flag_value
        if self.index.gates.may_be_none(host, gate) or self.index.gates.hooks_test_none(
            member.fn, member.param
        ):
            condition = f"{gate_text} is not None and {condition}"
        dims = "-1, -2" if self.leading_axis else "1, 2"
        edits.append(
            (s, e, f"{gate_text}.transpose({dims}).contiguous() if {condition} else {gate_text}")
        )
        return edits

    @staticmethod
    def _statement_around(host: HostFunction, node: ast.AST) -> ast.stmt | None:
        """The simple statement of the host that holds `node`."""
        line = node.lineno
        for stmt in walk(host.node):
            if (
                isinstance(stmt, ast.stmt)
                and not hasattr(stmt, "body")
                and stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)
                and any(n is node for n in walk(stmt))
            ):
                return stmt
        return None

    def _output_buffer(
        self,
        member: _Member,
        binding: CallBinding,
        host: HostFunction,
        stmt: ast.stmt,
        out: ast.AST,
        flag_value: str,
    ) -> list[tuple[int, int, str]]:
        """A tensor the kernel writes keeps its [.., T, HV] layout for the caller: the
        launch gets a [.., HV, T] buffer in its place (a fresh one when the tensor holds
        nothing yet, else a transposed copy), copied back right after `stmt`, the
        statement that launches."""
        if not isinstance(out, ast.Name):
            raise _NoFix
        if any(
            isinstance(e, ast.Name) and e.id == out.id and e is not out
            for exprs in binding.args.values()
            for e in exprs
        ):
            raise _NoFix  # the same tensor bound to two parameters
        start, end = self._span(stmt)
        indent = self._indent_of(start)
        line_end = self._line_end(end)
        name = out.id
        taken = names_in(host.node) | set(host.params)
        buffer, suffix = f"{name}_t", 1
        while buffer in taken:
            suffix += 1
            buffer = f"{name}_t{suffix}"
        transposed = f"{name}.transpose(-1, -2)"
        if self.index.gates.holds_nothing_yet(host, out):
            value = f"{name}.new_empty({transposed}.shape)"
        else:
            value = f"{transposed}.contiguous()"
        condition = flag_value
        if self.index.gates.may_be_none(host, out):
            condition = f"{name} is not None and {condition}"
        nl = self.newline
        unit = "\t" if indent.startswith("\t") else "    "
        before = (
            f"{indent}# `{name}` is written [.., {member.heads}, T] (stride 1 along time), "
            f"copied back below.{nl}"
            f"{indent}{buffer} = {value} if {condition} else {name}{nl}"
        )
        after = (
            f"{nl}{indent}if {buffer} is not {name}:{nl}"
            f"{indent}{unit}{name}.copy_({buffer}.transpose(-1, -2))"
        )
        s, e = self._span(out)
        line = self._line_start(start)
        return [(line, line, before), (s, e, buffer), (line_end, line_end, after)]

    def _written_elsewhere(self, gate: ast.AST) -> bool:
        """A launch argument set in a dict is evaluated where the dict is built, not at
        the launch: its transposed copy is only right if no kernel of this module writes
        a tensor of that name (a conservative reading: names, not values)."""
        if not isinstance(gate, ast.Name):
            return True
        return any(
            self.index.gates.stores_through(binding.callee, param)
            for binding, param in self.index.launches_binding_name(gate.id)
        )

    def _flag_entry(self, kind: str, node, flag: str, value: str) -> tuple[int, int, str]:
        """The flag set next to the gate: a dict entry, a keyword, or a statement."""
        if kind == "call":
            return self._add_argument(node, f"{flag}={value}")
        if kind == "dict":
            display, key = node
            quote = self.text[self._span(key)[0]]
            value_node = display.values[next(i for i, k in enumerate(display.keys) if k is key)]
            return self._insert_after(value_node, f"{quote}{flag}{quote}: {value}")
        var, stmt = node
        start, end = self._span(stmt)
        indent = self._indent_of(start)
        self._line_end(end)
        key = stmt.targets[0].slice
        quote = self.text[self._span(key)[0]]
        return end, end, f"{self.newline}{indent}{var}[{quote}{flag}{quote}] = {value}"


def _names(node: ast.AST) -> set[str]:
    return names_in(node)


def _names_of(nodes: list[ast.AST]) -> set[str]:
    return {name for node in nodes for name in _names(node)}
