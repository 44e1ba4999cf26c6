"""ASC004 launch-num-warps-stages: CUDA tuning knobs at launches and in autotune configs."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import remove_argument, remove_arguments, remove_statement
from ascend_lint.diagnostics import Applicability, Fix, FixGroup
from ascend_lint.index import LANGUAGE, is_simt_only
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

KNOBS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _knobs_in(container: ast.AST) -> set[str]:
    if isinstance(container, ast.Call):
        return {k.arg for k in container.keywords if k.arg in KNOBS}
    if isinstance(container, ast.Dict):
        return {k.value for k in container.keys if isinstance(k, ast.Constant) and k.value in KNOBS}
    return set()


class LaunchNumWarpsStages(Rule):
    code = "ASC004"
    name = "launch-num-warps-stages"
    summary = "`num_warps`/`num_stages` at a launch or in a triton.Config: no effect on Ascend, but recompiles"
    reference = "reference_kernels/chunk_o.py::chunk_fwd_o"
    fix_applicability = Applicability.SAFE

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        together: dict[int, FixGroup | None] = {}  # id(container) -> its knobs' group
        sites: list[tuple[ast.Call, str]] = [(call, "launch") for call, _host in index.launch_calls]
        sites += [(call, "triton.Config") for call in index.configs]
        for fn in index.kernels:
            sites += [(call, "tl.range") for call, _ in index.calls_in(fn, f"{LANGUAGE}.range")]
        for call, where in sites:
            if is_simt_only(call):
                continue
            for kw in call.keywords:
                if kw.arg in KNOBS:
                    yield self._finding(ctx, kw, call, kw.arg, where, together)
        for key, node, container in index.host.option_dicts():
            if key in KNOBS and not is_simt_only(container):
                yield self._finding(ctx, node, container, key, "launch options dict", together)

    def _finding(
        self,
        ctx: RuleContext,
        node: ast.AST,
        container: ast.AST,
        key: str,
        where: str,
        together: dict[int, FixGroup | None],
    ) -> Finding:
        if isinstance(container, ast.stmt):
            line = ctx.source.line(container.lineno)
            alone = (
                line[: container.col_offset].strip() == ""
                and container.end_lineno == container.lineno
            )
            edit = remove_statement(ctx.source, container) if alone else None
            fix = Fix(Applicability.SAFE, f"Remove `{key}`", (edit,)) if edit else None
        else:
            # This finding's keyword only (a quick fix for `num_warps` leaves `num_stages`
            # to its own finding), and every knob of the container as one edit for when
            # they are all fixed at once. Worked out for the first finding only.
            if id(container) not in together:
                knobs = _knobs_in(container)
                group = remove_arguments(ctx.source, container, knobs) if len(knobs) > 1 else None
                together[id(container)] = FixGroup(len(knobs), (group,)) if group else None
            edit = remove_argument(ctx.source, container, key)
            fix = (
                Fix(Applicability.SAFE, f"Remove `{key}`", (edit,), together[id(container)])
                if edit
                else None
            )
        return Finding(
            node,
            f"`{key}` in a {where} has no effect on Ascend and only multiplies compilations; remove it",
            fix=fix,
        )

    VALID = [
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
        # comments and strings are not findings
        """
import triton
# launch with num_warps=4 on GPUs
HELP = "num_warps=4"
""",
    ]
    INVALID = [
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
            fixed="""
import triton
import triton.language as tl

@triton.jit
def k(x, BT: tl.constexpr):
    pass

def launch(x):
    k[(1,)](x, BT=64)
""",
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
            fixed="""
import triton

@triton.autotune(
    configs=[
        triton.Config({'BT': bt})
        for bt in (32, 64) for w in (2, 4) for s in (1, 2)
    ],
    key=['T'],
)
@triton.jit
def k(x, T, BT: "tl.constexpr"):
    pass
""",
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
            fixed="""
import triton

@triton.jit
def k(x, BT: "tl.constexpr"):
    pass

def launch(x):
    kw = dict(
        BT=64,
    )
    k[(1,)](x, **kw)
""",
        ),
    ]
