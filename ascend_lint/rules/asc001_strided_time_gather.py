"""ASC001 strided-time-gather: 1-D loads/stores along time with a non-unit stride."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascend_lint.diagnostics import Applicability
from ascend_lint.index import (
    LANGUAGE,
    JitFunction,
    KernelIndex,
    additive_terms,
    contig_branch,
    factors,
    is_literal,
    pointer_root,
)
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.rules._layout import (
    MAKE_BLOCK_PTR,
    block_ptr_arg,
    length_name,
    one_d_stride,
    transposed_fix,
)

ARANGE = f"{LANGUAGE}.arange"
# Block sizes that tile the time axis in Triton kernels (BT, BC, BS, BLOCK_T, ...).
_TIME_BLOCK = re.compile(r"^(B[TCSL]\w*|BLOCK_?(T|S|L|SEQ|M)\w*|T|L|CHUNK\w*)$")


def _time_vectors(fn: JitFunction, index: KernelIndex) -> set[str]:
    """Locals that hold a 1-D `tl.arange` range over a time block (`o_t = i_t*BT + tl.arange(0, BT)`)."""
    vectors: set[str] = set()
    for call, stmt in index.calls_in(fn, ARANGE):
        end = call.args[-1] if call.args else None
        if not (isinstance(end, ast.Name) and _TIME_BLOCK.match(end.id)):
            continue
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            if not _broadcasts(stmt.value):
                vectors.add(stmt.targets[0].id)
    return vectors


def _broadcasts(expr: ast.AST) -> bool:
    """`x[:, None]`, `x[None, :]`: a 2-D tile, which has a unit-stride dimension."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            if any(isinstance(e, ast.Constant) and e.value is None for e in node.slice.elts):
                return True
    return False


class StridedTimeGather(Rule):
    code = "ASC001"
    name = "strided-time-gather"
    summary = "1-D block pointer or vector access along time with a non-unit stride (a DMA gather)"
    reference = "reference_kernels/chunk_o.py::chunk_bwd_kernel_dv_local"
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            for call, stmt in index.calls_in(fn, MAKE_BLOCK_PTR):
                stride = one_d_stride(call)
                if stride is None or is_literal(stride, 1):
                    continue
                branch = contig_branch(fn.context(stmt))
                if (
                    branch
                    and not branch[1]
                    and index.flag_selects_fallback_only_for_one_head(branch[0])
                ):
                    continue  # the documented fallback, selected only when the stride is 1
                base = block_ptr_arg(call, "base")
                # Display-only: the kernel side of the fix is mechanical, but it is only
                # right together with the host-side transpose, which no edit here makes.
                fix = None
                if base is not None:
                    fix = transposed_fix(
                        ctx,
                        fn,
                        base,
                        pointer_root(base),
                        stride,
                        length_name(fn, call),
                        Applicability.DISPLAY_ONLY,
                    )
                yield Finding(
                    call,
                    f"1-D block pointer with stride `{ast.unparse(stride)}` gathers along time; "
                    "transpose the tensor on the host and load with stride `(1,)`",
                    fix=fix,
                )
            yield from self._vector_gathers(fn, ctx)

    def _vector_gathers(self, fn: JitFunction, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        vectors = _time_vectors(fn, index)
        if not vectors:
            return
        for qual in (f"{LANGUAGE}.load", f"{LANGUAGE}.store"):
            for call, _stmt in index.calls_in(fn, qual):
                if not call.args or _broadcasts(call.args[0]):
                    continue
                for term in additive_terms(call.args[0]):
                    parts = factors(term)
                    time = [f for f in parts if isinstance(f, ast.Name) and f.id in vectors]
                    rest = [f for f in parts if f not in time]
                    if time and rest and not all(is_literal(f, 1) for f in rest):
                        stride = " * ".join(ast.unparse(f) for f in rest)
                        yield Finding(
                            call,
                            f"vector access over `{time[0].id}` with stride `{stride}` gathers along time; "
                            "use a time-contiguous layout",
                        )
                        break

    VALID = [
        # 2-D block pointer with a unit-stride dimension
        """
import triton
import triton.language as tl

@triton.jit
def k(q, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    i_t = tl.program_id(0)
    p_q = tl.make_block_ptr(q, (T, K), (H * K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
    b_q = tl.load(p_q, boundary_check=(0, 1))
""",
        # stride-1 gate load from a transposed [B, HV, T] gate
        """
import triton
import triton.language as tl

@triton.jit
def k(g, T, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p_g = tl.make_block_ptr(g, (T,), (1,), (i_t * BT,), (BT,), (0,))
    b_g = tl.load(p_g, boundary_check=(0,))
""",
        # the legacy fallback selected only when HV == 1
        """
import triton
import triton.language as tl

@triton.jit
def k(g, T, HV: tl.constexpr, BT: tl.constexpr, G_T_CONTIG: tl.constexpr):
    i_t = tl.program_id(0)
    if G_T_CONTIG:
        p_g = tl.make_block_ptr(g, (T,), (1,), (i_t * BT,), (BT,), (0,))
    else:
        p_g = tl.make_block_ptr(g, (T,), (HV,), (i_t * BT,), (BT,), (0,))

def launch(g, T, HV):
    k[(1,)](g.transpose(1, 2).contiguous() if HV != 1 else g, T, HV=HV, BT=64, G_T_CONTIG=HV != 1)
""",
        # a vector over K with a stride is not a time gather
        """
import triton
import triton.language as tl

@triton.jit
def k(x, K: tl.constexpr, BK: tl.constexpr):
    o_k = tl.arange(0, BK)
    b_x = tl.load(x + o_k * K)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, T, HV: tl.constexpr, BT: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    p_g = tl.make_block_ptr(g + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
    b_g = tl.load(p_g, boundary_check=(0,))
""",
            rows=[8],
        ),
        # the fallback is real when the launcher can pick it with many heads
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, T, HV: tl.constexpr, BT: tl.constexpr, G_T_CONTIG: tl.constexpr):
    if G_T_CONTIG:
        p_g = tl.make_block_ptr(g, (T,), (1,), (0,), (BT,), (0,))
    else:
        p_g = tl.make_block_ptr(g, (T,), (HV,), (0,), (BT,), (0,))

def launch(g, T, HV):
    k[(1,)](g, T, HV=HV, BT=64, G_T_CONTIG=T > 4096)
""",
            rows=[10],
        ),
        # a vector gather over the time axis
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(g, bos, H: tl.constexpr, BT: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    o_t = i_t * BT + tl.arange(0, BT)
    b_g = tl.load(g + bos * H + o_t * H + i_h)
""",
            rows=[9],
        ),
    ]
