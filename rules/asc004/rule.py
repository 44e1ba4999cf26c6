"""ASC004 launch-num-warps-stages: CUDA tuning knobs at launches and in autotune configs."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from ascend_lint.codemods import (
    node_offsets,
    node_text,
    remove_argument,
    remove_arguments_each,
    remove_comprehension_clauses,
    remove_list_elements,
    remove_statement,
    text_edit,
)
from ascend_lint.diagnostics import Applicability, Edit, Fix, FixGroup, cite
from ascend_lint.index import LANGUAGE, is_simt_only
from ascend_lint.index.autotune import NarrowableLoop
from ascend_lint.index.syntax import free_of_effects
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules.asc004.fix import knob_cleanups
from ascend_lint.text import plural

KNOBS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _knobs_in(container: ast.AST) -> set[str]:
    if isinstance(container, ast.Call):
        return {k.arg for k in container.keywords if k.arg in KNOBS}
    if isinstance(container, ast.Dict):
        return {k.value for k in container.keys if isinstance(k, ast.Constant) and k.value in KNOBS}
    return set()


def _knob_values(container: ast.AST) -> list[ast.AST]:
    """The expressions removing the knobs of `container` deletes."""
    if isinstance(container, ast.Call):
        return [k.value for k in container.keywords if k.arg in KNOBS]
    if isinstance(container, ast.Dict):
        return [
            v
            for k, v in zip(container.keys, container.values)
            if isinstance(k, ast.Constant) and k.value in KNOBS
        ]
    if isinstance(container, ast.Assign):
        return [container.value]
    return []


def _disjoint(edits: tuple[Edit, ...]) -> bool:
    """Whether sorted edits leave each other alone (touching ends are fine)."""
    return all(a.end <= b.start for a, b in zip(edits, edits[1:]))


def _why_unsure(loops) -> str:
    """Why removing these loops is not safe: what their iterables may do or be."""
    reasons = []
    for loop in loops:
        shown = f"`{ast.unparse(loop.clause.iter)}`"
        if not loop.pure:
            reasons.append(f"{shown} runs code that may have side effects")
        else:
            reasons.append(f"{shown} may be empty, and then so was the list")
    return "; ".join(reasons)


def _dropped_elements(loop: NarrowableLoop) -> list[ast.AST]:
    """The row elements narrowing deletes: what only they read may go with them."""
    return [
        element
        for r, row in enumerate(loop.clause.iter.elts)
        for i, element in enumerate(row.elts)
        if r not in loop.rows or i not in loop.kept
    ]


def _target_text(loop: NarrowableLoop) -> str:
    return ", ".join(name.id for name in loop.clause.target.elts)


def _narrowed_text(loop: NarrowableLoop) -> str:
    names = [loop.clause.target.elts[i].id for i in loop.kept]
    return f"`for {_target_text(loop)} in ...` to `for {', '.join(names)} in ...`"


def _narrowing_edit(source, loop: NarrowableLoop) -> Edit | None:
    """`for BN, BD, w in [(1024, 16, 4), (2048, 32, 4), (2048, 32, 8)]` ->
    `for BN, BD in [(1024, 16), (2048, 32)]`: the names read, over the first row of
    each set of rows that agree on them (written as the rows wrote them). None where
    a comment sits inside the rows (it would be lost)."""
    clause = loop.clause
    start, _ = node_offsets(source, clause.target)
    _, end = node_offsets(source, clause.iter)
    if "#" in source.text[start:end]:
        return None
    names = [clause.target.elts[i].id for i in loop.kept]
    rows = []
    for r in loop.rows:
        parts = [node_text(source, clause.iter.elts[r].elts[i]) for i in loop.kept]
        rows.append(parts[0] if len(parts) == 1 else f"({', '.join(parts)})")
    opening, closing = ("[", "]") if isinstance(clause.iter, ast.List) else ("(", ")")
    if isinstance(clause.iter, ast.Tuple) and len(rows) == 1:
        closing = ",)"
    content = f"{', '.join(names)} in {opening}{', '.join(rows)}{closing}"
    return text_edit(source, start, end, content)


@dataclass(frozen=True)
class _Removal:
    """The edits that remove a container's knobs, the expressions they delete, and what
    the fix message adds (and whether that makes the fix unsafe)."""

    edits: tuple[Edit, ...]
    values: list[ast.AST]
    note: str = ""
    unsafe: bool = False
    own: dict[str, Edit | None] | None = None  # per option, the edit of it alone


class LaunchNumWarpsStages(Rule):
    fix_applicability = Applicability.SAFE
    fixes_after_suppression = True

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        found: list[tuple[ast.AST, ast.AST, str, str]] = []  # node, container, key, where
        sites: list[tuple[ast.Call, str]] = [(call, "launch") for call, _host in index.launch_calls]
        sites += [(call, "triton.Config") for call in index.configs]
        for fn in index.kernels:
            sites += [(call, "tl.range") for call, _ in index.calls_in(fn, f"{LANGUAGE}.range")]
        for call, where in sites:
            if is_simt_only(call):
                continue
            for kw in call.keywords:
                if kw.arg in KNOBS:
                    found.append((kw, call, kw.arg, where))
        for key, node, container in index.host.option_dicts(only=frozenset(KNOBS)):
            if not is_simt_only(container):
                found.append((node, container, key, "launch options dict"))
        yield from self._repeats(ctx)
        # The fixes come in `fix_live`: what a removal may take with it depends on which
        # options a noqa comment keeps.
        self._knobs: list[tuple[Finding, ast.AST, str]] = []
        for node, container, key, where in found:
            finding = Finding(
                node,
                f"`{key}` in a {where} has no effect on Ascend and only multiplies compilations; remove it",
            )
            self._knobs.append((finding, container, key))
            yield finding

    def fix_live(self, ctx: RuleContext, findings: list[Finding], silenced: set[int]) -> None:
        knobs = getattr(self, "_knobs", [])
        if not knobs:
            return
        index = ctx.index
        silenced_ids = {id(findings[i]) for i in silenced}
        # Every knob of a container goes in one edit that its findings share: the
        # one-by-one removals of neighbours overlap and would take a round each.
        removals: dict[int, _Removal] = {}
        containers: dict[int, ast.AST] = {}
        for _finding, container, _key in knobs:
            if id(container) not in containers:
                containers[id(container)] = container
                removal = self._removal(ctx, container)
                if removal is not None:
                    removals[id(container)] = removal
        # What the removed values alone read goes with them (knob_cleanup); a container
        # with a silenced finding keeps its values and what they read.
        kept = {id(container) for finding, container, _key in knobs if id(finding) in silenced_ids}
        values = {key: removals[key].values for key in removals if key not in kept}
        group_of, cleanups = knob_cleanups(index.tree, ctx.source, index.hosts, values)
        fixes: dict[int, tuple[tuple[Edit, ...], str, bool]] = {}
        for key in removals:
            group = group_of.get(key, key)
            if group in fixes:
                continue
            members = [removals[k] for k in removals if group_of.get(k, k) == group]
            cleanup = cleanups.get(group)
            edits = [e for m in members for e in m.edits] + (cleanup.edits if cleanup else [])
            notes = [m.note for m in members if m.note]
            unsafe = any(m.unsafe for m in members)
            ordered = tuple(sorted(edits, key=lambda e: (e.start, e.end)))
            if cleanup is not None and not _disjoint(ordered):
                # A cleanup edit that meets an option's own edit (a statement sharing the
                # line in a way the edits do not expect): the options alone, never a
                # half-applied mix.
                cleanup = None
                edits = [e for m in members for e in m.edits]
                ordered = tuple(sorted(edits, key=lambda e: (e.start, e.end)))
            if cleanup is not None:
                notes.insert(0, cleanup.describe())
                unsafe = unsafe or bool(cleanup.unsafe_imports)
            fixes[group] = (ordered, " ".join(notes), unsafe)
        # Each finding's own fix touches only its own option (a quick fix for `num_warps`
        # leaves `num_stages` to its finding); the group's edits (every option of the
        # containers plus what only they read) apply when all of its findings are fixed
        # at once, as `--fix` does, so that still takes one round.
        group_of_finding = [
            group_of.get(id(container), id(container))
            for _finding, container, _key in knobs
            if id(container) in removals
        ]
        sizes = Counter(group_of_finding)
        shared: dict[int, FixGroup] = {}  # one object per group: siblings match by identity
        for finding, container, key in knobs:
            if id(container) in removals:
                group = group_of.get(id(container), id(container))
                edits, notes, unsafe = fixes[group]
                message = f"Remove `{key}`" + (f" {notes}" if notes else "")
                applicability = Applicability.UNSAFE if unsafe else Applicability.SAFE
                own = self._own_edit(ctx, container, key, removals[id(container)])
                if own is None or (own,) == edits:
                    finding.fix = Fix(applicability, message, edits)
                else:
                    together = shared.setdefault(group, FixGroup(sizes[group], edits))
                    finding.fix = Fix(applicability, message, (own,), together)

    @staticmethod
    def _own_edit(ctx: RuleContext, container: ast.AST, key: str, removal: _Removal) -> Edit | None:
        """The edit that removes this one option and nothing else."""
        if isinstance(container, ast.stmt):
            return removal.edits[0]  # the statement that sets it
        if removal.own is not None and key in removal.own:
            return removal.own[key]
        return remove_argument(ctx.source, container, key)

    @staticmethod
    def _repeats(ctx: RuleContext) -> Iterator[Finding]:
        """Configs an autotune list holds twice, typically once the knobs are gone: each
        is compiled and benchmarked again for nothing."""
        autotune = ctx.index.autotune
        by_display: dict[int, list] = {}
        for repeat in autotune.repeated_configs():
            by_display.setdefault(id(repeat.display), []).append(repeat)
        for repeats in by_display.values():
            display = repeats[0].display
            drop = [display.elts.index(r.node) for r in repeats]
            edit = remove_list_elements(ctx.source, display.elts, drop)
            # Dropping a repeat runs its arguments once less: safe when they do nothing else.
            pure = all(
                free_of_effects(part)
                for r in repeats
                for part in (*r.node.args, *(k.value for k in r.node.keywords))
            )
            message = "Remove the repeated configs" + (
                "" if pure else " (unsafe: their arguments may have side effects)"
            )
            applicability = Applicability.SAFE if pure else Applicability.UNSAFE
            fix = Fix(applicability, message, (edit,)) if edit else None
            for repeat in repeats:
                yield Finding(
                    repeat.node,
                    f"this `triton.Config` repeats the one on {cite(0)}: "
                    "autotuning compiles and benchmarks the same kernel again; remove it",
                    fix=fix,
                    related=(repeat.first,),
                )
        by_comp: dict[int, list] = {}
        for loop in autotune.repeating_loops():
            by_comp.setdefault(id(loop.comprehension), []).append(loop)
        for loops in by_comp.values():
            comp = loops[0].comprehension
            edits = remove_comprehension_clauses(ctx.source, comp, [lp.clause for lp in loops])
            unsure = [lp for lp in loops if not lp.removable]
            fix = None
            if edits:
                message = "Remove the loops no config reads"
                if unsure:
                    message += f" (unsafe: {_why_unsure(unsure)})"
                applicability = Applicability.UNSAFE if unsure else Applicability.SAFE
                fix = Fix(applicability, message, tuple(edits))
            for loop in loops:
                target = ast.unparse(loop.clause.target)
                times = f"up to {loop.values} times" if loop.values else "once per value"
                yield Finding(
                    loop.clause.target,
                    f"`for {target} in ...` repeats every config {times}: no config reads "
                    f"`{target}`, so autotuning compiles and benchmarks the same kernels "
                    "again; remove the loop",
                    fix=fix,
                )
        for loop in autotune.narrowable_loops():
            edit = _narrowing_edit(ctx.source, loop)
            fix = None
            if edit is not None:
                fix = Fix(Applicability.SAFE, f"Narrow {_narrowed_text(loop)}", (edit,))
            names = loop.clause.target.elts
            unread = ", ".join(f"`{n.id}`" for i, n in enumerate(names) if i not in loop.kept)
            rows = plural(loop.dropped, "row")
            verb = "repeats" if loop.dropped == 1 else "repeat"
            yield Finding(
                loop.clause.target,
                f"no config reads {unread}: {rows} of `for {_target_text(loop)} in ...` "
                f"{verb} a config an earlier row makes, so autotuning compiles and "
                "benchmarks the same kernels again; unpack only the names read, over the "
                "rows they tell apart",
                fix=fix,
            )

    @staticmethod
    def _removal(ctx: RuleContext, container: ast.AST) -> _Removal | None:
        if isinstance(container, ast.stmt):
            line = ctx.source.line(container.lineno)
            alone = (
                line[: container.col_offset].strip() == ""
                and container.end_lineno == container.lineno
            )
            if not alone:
                return None
            return _Removal((remove_statement(ctx.source, container),), _knob_values(container))
        knobs = _knobs_in(container)
        edit, own = remove_arguments_each(ctx.source, container, knobs)
        if edit is None:
            return None
        removal = _Removal((edit,), _knob_values(container), own=own)
        # A config built in a comprehension: the loops that only fed the knobs would
        # repeat every config once the knobs are gone; they go in the same fix.
        comp = ctx.index.autotune.comprehension_of(container)
        if comp is None:
            return removal
        autotune = ctx.index.autotune
        loops = autotune.loops_unread_without(comp, removal.values)
        narrowed = autotune.loops_narrowed_without(comp, removal.values)
        if not loops and not narrowed:
            return removal
        edits = remove_comprehension_clauses(ctx.source, comp, [lp.clause for lp in loops])
        narrowing = [_narrowing_edit(ctx.source, lp) for lp in narrowed]
        shown = ", ".join(
            [f"`for {ast.unparse(lp.clause.target)} in ...`" for lp in loops]
            + [f"`for {_target_text(lp)} in ...`" for lp in narrowed]
        )
        if edits is None or None in narrowing:
            return _Removal(
                removal.edits,
                removal.values,
                f"(unsafe: {shown} then repeats configs; remove the repeats by hand)",
                unsafe=True,
                own=own,
            )
        unsure = [lp for lp in loops if not lp.removable]
        notes = []
        if loops:
            repeat = "repeats" if len(loops) == 1 else "repeat"
            loops_shown = ", ".join(f"`for {ast.unparse(lp.clause.target)} in ...`" for lp in loops)
            notes.append(f"{loops_shown}, which then {repeat} every config")
        if narrowed:
            narrowed_shown = ", ".join(_narrowed_text(lp) for lp in narrowed)
            notes.append(f"narrows {narrowed_shown}, without the rows that then repeat a config")
        note = "and " + "; and ".join(notes)
        if unsure:
            note += f" (unsafe: {_why_unsure(unsure)})"
        return _Removal(
            tuple(removal.edits) + tuple(edits) + tuple(narrowing),
            removal.values
            + [lp.clause.iter for lp in loops]
            + [e for lp in narrowed for e in _dropped_elements(lp)],
            note,
            unsafe=bool(unsure),
            own=own,
        )

    VALID = [
        # every row a different config: the unread `w` repeats nothing
        """
import triton

@triton.autotune(
    configs=[triton.Config({'BN': BN}) for BN, w in [(16, 4), (32, 8)]],
    key=['N'],
)
@triton.jit
def k(x, N, BN: "tl.constexpr"):
    pass
""",
        """
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr):
    pass

def launch(x):
    k[(1,)](x, BT=64)
""",
        # a launch helper's default parameter is not a launch option
        """
_NUM_WARPS = 4

def launch_helper(kernel, x, num_warps: int = _NUM_WARPS):
    return kernel, x
""",
        # SIMT-only mode on Ascend 950 uses num_warps
        """
import triton

@triton.autotune(configs=[triton.Config({'BT': 64}, num_warps=8, compile_mode="simt_only")], key=['T'])
@triton.jit
def k(x, T, BT: "tl.constexpr"):
    pass
""",
        # configs that differ, a loop whose variable a config reads, a loop that
        # repeats nothing (no value, or one)
        """
import triton

@triton.autotune(
    configs=[triton.Config({'BT': 64}), triton.Config({'BT': 128})]
    + [triton.Config({'BT': bt}) for bt in (32, 16) for _ in range(0)]
    + [triton.Config({'BT': 256}) for num_warps in [4]],
    key=['T'],
)
@triton.jit
def k(x, T, BT: "tl.constexpr"):
    pass
""",
        # comments and strings are not findings
        """
import triton
# launch with num_warps=4 on GPUs
HELP = "num_warps=4"
""",
    ]
    INVALID = [
        # the Example of ASC004.md, which must stay the first case: the doc's Use
        # instead is checked against its fixed output (tests/test_docs.py)
        Invalid(
            """
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BT": bt}, num_warps=w, num_stages=s)  # ASC004 (twice)
        for bt in (32, 64)
        for w in (2, 4)
        for s in (1, 2)
    ],
    key=["T"],
)
@triton.jit
def copy_kernel(x, o, T, BT: tl.constexpr):
    offs = tl.program_id(0) * BT + tl.arange(0, BT)
    tl.store(o + offs, tl.load(x + offs, mask=offs < T), mask=offs < T)


@triton.jit
def fill_kernel(o, T, BT: tl.constexpr):
    offs = tl.program_id(0) * BT + tl.arange(0, BT)
    tl.store(o + offs, 0.0, mask=offs < T)


def copy_then_clear(x, o, BT=64):
    T = x.numel()
    copy_kernel[lambda meta: (triton.cdiv(T, meta["BT"]),)](x, o, T)
    fill_kernel[(triton.cdiv(T, BT),)](o, T, BT=BT, num_warps=4)  # ASC004
""",
            rows=[8, 8, 30],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr):
    pass

def launch(x):
    k[(1,)](x, BT=64, num_warps=4)
""",
            rows=[10],
        ),
        Invalid(
            """
import triton

@triton.autotune(
    configs=[
        triton.Config({'BT': bt}, num_warps=w, num_stages=s)
        for bt in (32, 64) for w in (2, 4) for s in (1, 2)
    ],
    key=['T'],
)
@triton.jit
def k(x, T, BT: "tl.constexpr"):
    pass
""",
            rows=[6, 6],
        ),
        # what only the removed options read goes with them: a local free of side
        # effects, an imported name whose module stays imported; a value that may have
        # effects is still evaluated
        Invalid(
            """
import triton
from helpers import cdiv, shared_mem

@triton.jit
def k(x, BK: "tl.constexpr"):
    pass

def launch(x, BK, cfg):
    num_warps = 4 if BK == 64 else 8
    stages = cfg["num_stages"]
    k[(cdiv(BK, 2),)](x, BK=BK, num_warps=num_warps, num_stages=stages)
    k[(1,)](x, BK=BK, num_stages=2 if shared_mem() else 1)
""",
            rows=[12, 12, 13],
        ),
        # configs that differ only in the knobs become one (a second round merges them)
        Invalid(
            """
import triton

@triton.autotune(
    configs=[
        triton.Config({'BT': 64}, num_warps=1),
        triton.Config({'BT': 64}, num_warps=2),
        triton.Config({"BT": 64}),
        triton.Config({'BT': 128}, num_warps=4),
    ],
    key=['T'],
)
@triton.jit
def k(x, T, BT: "tl.constexpr"):
    pass
""",
            rows=[6, 7, 9],
        ),
        # a loop no config reads repeats them all; its values come from a module
        # constant that is never empty
        Invalid(
            """
import triton

NUM_WARPS = [2, 4] if IS_AMD else [4, 8]

@triton.autotune(
    configs=[triton.Config({'BT': bt}) for bt in (32, 64) for w in NUM_WARPS],
    key=['T'],
)
@triton.jit
def k(x, T, BT: "tl.constexpr"):
    pass
""",
            rows=[7],
        ),
        # options in a kwargs dict splatted into the launch
        Invalid(
            """
import triton

@triton.jit
def k(x, BT: "tl.constexpr"):
    pass

def launch(x):
    kw = dict(
        BT=64,
        num_warps=4,
    )
    k[(1,)](x, **kw)
""",
            rows=[11],
        ),
        # a row tuple that also carries the options: once they are gone, rows that
        # differ only in `num_warps` make the same config (FLA's attnres/fused.py)
        Invalid(
            """
import triton

@triton.autotune(
    configs=[
        triton.Config({'BN': BN, 'BD': BD}, num_warps=num_warps)
        for BN, BD, num_warps in [(1024, 16, 4), (2048, 32, 4), (2048, 32, 8)]
    ],
    key=['N'],
)
@triton.jit
def k(x, N, BN: "tl.constexpr", BD: "tl.constexpr"):
    pass
""",
            rows=[6],
        ),
        # rows that already repeat a config: no config reads `w`
        Invalid(
            """
import triton

@triton.autotune(
    configs=[triton.Config({'BN': BN}) for BN, w in [(16, 4), (16, 8), (32, 4)]],
    key=['N'],
)
@triton.jit
def k(x, N, BN: "tl.constexpr"):
    pass
""",
            rows=[5],
        ),
    ]
