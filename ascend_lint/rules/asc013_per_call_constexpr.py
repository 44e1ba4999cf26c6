"""ASC013 per-call-constexpr: a constexpr bound to a value that changes from call to call."""

from __future__ import annotations

from collections.abc import Iterator

from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class PerCallConstexpr(Rule):
    code = "ASC013"
    name = "per-call-constexpr"
    summary = (
        "a `tl.constexpr` bound to a token, batch or sequence count: a new compile "
        "for every new value"
    )
    reference = "reference_kernels/core_grid.py::rms_norm_fwd"

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        seen: set[tuple[int, str]] = set()
        for binding in index.launches:
            for param in binding.callee.params:
                if param not in binding.callee.constexpr_params:
                    continue
                for arg in binding.args.get(param, ()):
                    if (id(arg), param) in seen:
                        continue
                    seen.add((id(arg), param))
                    per_call = [q for q in index.quantities(arg, binding.host) if q.role.per_call]
                    if per_call:
                        yield Finding(
                            arg,
                            f"constexpr `{param}` of `{binding.callee.name}` is bound to "
                            f"{per_call[0].why}, which changes from call to call: each new "
                            "value compiles the kernel again; pass it as a runtime argument",
                        )

    VALID = [
        # model constants, block sizes and bucketed values
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, D: tl.constexpr, BLOCK: tl.constexpr, H: tl.constexpr):
    tl.program_id(0)

def launch(x):
    B, T, H, D = x.shape
    k[(48,)](x, B * T, D=D, BLOCK=triton.next_power_of_2(D), H=H)
""",
        # the count passed as a runtime argument
        """
import triton
import triton.language as tl

@triton.jit(do_not_specialize=["n_tokens"])
def k(x, n_tokens, BLOCK: tl.constexpr):
    tl.program_id(0)

def launch(x):
    k[(48,)](x, x.shape[0], BLOCK=64)
""",
    ]
    INVALID = [
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def quant_kernel(x, total_tokens: tl.constexpr, D: tl.constexpr):
    tl.program_id(0)

def quant(x):
    dims = x.shape[-1]
    total_tokens = x.numel() // dims
    quant_kernel[(48,)](x, total_tokens=total_tokens, D=dims)
""",
            rows=[12],
        ),
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def gather_kernel(src, idx, out, INDICES_LENGTH: tl.constexpr):
    tl.program_id(0)

def gather(src, idx):
    out = src.new_empty(idx.shape[0], src.shape[-1])
    gather_kernel[(48,)](
        src,
        idx,
        out,
        idx.shape[0],
    )
""",
            rows=[15],
        ),
        # batch and sequence sizes of the activations
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def attn_kernel(q, B: tl.constexpr, M: tl.constexpr, H: tl.constexpr, K: tl.constexpr):
    tl.program_id(0)

def attn(q):
    B, M, H, K = q.shape
    attn_kernel[(24,)](q, B, M, H, K)
""",
            rows=[11, 11],
        ),
    ]
