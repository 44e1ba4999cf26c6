"""ASC013 per-call-constexpr: a constexpr bound to a value that changes from call to call."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index.quantities import Role
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext


class PerCallConstexpr(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        # One finding per argument. Where a variable selects one of several kernels
        # (`kernel = k_a if c else k_b`), it names every kernel whose constexpr receives it.
        receivers: dict[int, list[tuple[str, str]]] = {}
        evidence: dict[int, tuple[ast.AST, str] | None] = {}  # id(arg) -> (arg, why)
        for binding in index.launches:
            callee = binding.callee
            # `tl.arange(0, HC)`: the kernel holds the whole axis in one block, which
            # only a power of two fixed by the model can be.
            extents = index.arange_extents(callee)
            for param in callee.params:
                if param not in callee.constexpr_params or param in extents:
                    continue
                for arg in binding.args.get(param, ()):
                    if id(arg) not in evidence:
                        use = index.coverage.dimension_use(binding, param)
                        quantities = index.quantities.of(arg, binding.host, param, use)
                        if all(q.role == Role.BOOLEAN for q in quantities):
                            continue  # a flag has two values: nothing to remember
                        per_call = [q for q in quantities if q.role.per_call]
                        evidence[id(arg)] = (arg, str(per_call[0].why)) if per_call else None
                    targets = receivers.setdefault(id(arg), [])
                    if evidence[id(arg)] is not None and (callee.name, param) not in targets:
                        targets.append((callee.name, param))
        for key, found in evidence.items():
            if found is None:
                continue
            arg, why = found
            targets = receivers[key]
            named = " and ".join(f"constexpr `{p}` of `{k}`" for k, p in targets)
            yield Finding(
                arg,
                f"{named} {'is' if len(targets) == 1 else 'are'} bound to {why}, which "
                "changes from call to call: each new value compiles the kernel again; pass "
                "it as a runtime argument",
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
        # flags, even where the value they test is a token count
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, HAS_TOKENS: tl.constexpr, IS_LONG: tl.constexpr):
    pid = tl.program_id(0)

def launch(x, num_tokens):
    n = x.shape[0]
    k[(48,)](x, n, HAS_TOKENS=num_tokens > 0, IS_LONG=bool(n > 4096))
""",
        # a literal bucket returned by a helper
        """
import triton
import triton.language as tl

def _bucket(n):
    if n <= 16:
        return 16
    if n <= 128:
        return 128
    return 1024

@triton.jit
def k(x, n, BLOCK_T: tl.constexpr):
    pid = tl.program_id(0)

def launch(x):
    n = x.shape[0]
    k[(48,)](x, n, BLOCK_T=_bucket(n))
""",
        # the slots of a serving cache are allocated once
        """
import triton
import triton.language as tl

@triton.jit
def k(x, cache, NUM_SLOTS: tl.constexpr):
    tl.program_id(0)

def launch(x, conv_state):
    num_slots, _, width = conv_state.size()
    k[(48,)](x, conv_state, num_slots)
""",
        # the size left after the outer dimensions is a feature size
        """
import triton
import triton.language as tl

@triton.jit
def k(x, D: tl.constexpr):
    tl.program_id(0)

def launch(x):
    B, S = x.shape[:2]
    k[(48,)](x, D=x.numel() // (B * S))
""",
        # the kernel holds the whole axis in one `tl.arange`: a power of two the model fixes
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, HC: tl.constexpr, D: tl.constexpr):
    offs = tl.arange(0, HC)[:, None] * D + tl.arange(0, D)[None, :]
    tl.store(x + tl.program_id(0) * HC * D + offs, 0.0)

def launch(x):
    n, hc, d = x.shape
    k[(48,)](x, n, x.shape[1], d)
""",
        # a bare dimension whose only name is the receiving parameter's: a group count
        """
import triton
import triton.language as tl

@triton.jit
def k(q, kv, num_group: tl.constexpr):
    tl.program_id(0)

def launch(q, kv):
    k[(48,)](q, kv, kv.shape[1])
""",
        # flags named for what they return
        """
import triton
import triton.language as tl

@triton.jit
def k(x, RETURN_TOKEN_ACCURACY: tl.constexpr):
    tl.program_id(0)

def launch(x, return_token_accuracy):
    k[(48,)](x, RETURN_TOKEN_ACCURACY=return_token_accuracy)
""",
        # `[B, N, S, D]`: dimension 1 is a head count here, which the kernel only
        # indexes with (an unrolled loop over heads), never walks
        """
import triton
import triton.language as tl

@triton.jit
def k(q, S, N: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr):
    start_m = tl.program_id(0)
    off_b = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    for h in tl.static_range(N):
        p = q + ((off_b * N + h) * S + offs_m[:, None]) * D + offs_d[None, :]
        tl.store(p, tl.load(p, mask=offs_m[:, None] < S), mask=offs_m[:, None] < S)

def launch(q):
    B, N, S, D = q.shape
    k[(triton.cdiv(S, 64), B)](q, S, N, D, BLOCK_M=64)
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
        # the rows of a flattened view through `functools.reduce(operator.mul, ...)`
        Invalid(
            """
import functools
import operator
import triton
import triton.language as tl

@triton.jit
def k(x, D: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)

def launch(x):
    n = functools.reduce(operator.mul, x.shape[:-1], 1)
    k[(48,)](x, D=x.shape[-1], N=n)
""",
            rows=[13],
        ),
        # rows of a matrix unpacked from a slice of the shape
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(a, M: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)

def launch(a, w):
    M, N = a.shape[-2:]
    k[(24,)](a, M, N)
""",
            rows=[11],
        ),
        # the leading size of a flattened view
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, N: tl.constexpr, D: tl.constexpr):
    pid = tl.program_id(0)

def launch(x, d):
    n = x.view(-1, d).shape[0]
    k[(n,)](x, N=n, D=d)
""",
            rows=[11],
        ),
        # a ratio of two per-call counts
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, TOK_PER_SEQ: tl.constexpr):
    pid = tl.program_id(0)

def launch(x, cu_seqlens):
    num_tokens = x.shape[0]
    num_seqs = cu_seqlens.numel() - 1
    k[(48,)](x, num_tokens, TOK_PER_SEQ=num_tokens // num_seqs)
""",
            rows=[12],
        ),
        # sizes kept on `ctx` as a tuple in `forward` and unpacked in `backward`
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def bwd(do, NT: tl.constexpr, D: tl.constexpr):
    tl.program_id(0)

class Attn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q):
        b, s, h, d = q.shape
        ctx.dims = (b, s, h, d, triton.cdiv(s, 64))
        return q

    @staticmethod
    def backward(ctx, do):
        b, s, h, d, m = ctx.dims
        bwd[(b * h,)](do, m, d)
        return do
""",
            rows=[20],
        ),
        # the chunks of dimension 2 of a `[B, H, S, D]` tensor, read by subscript; the
        # kernel walks them in a loop
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(q, NT: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr):
    i_bh = tl.program_id(0)
    for i in range(NT):
        o = i * BLOCK + tl.arange(0, BLOCK)
        p = q + i_bh * NT * BLOCK * D + o[:, None] * D + tl.arange(0, D)[None, :]
        tl.store(p, tl.load(p) * 2)

def launch(q):
    k[(48,)](q, triton.cdiv(q.shape[2], 64), q.shape[3], BLOCK=64)
""",
            rows=[14],
        ),
        # `[B, D, T]`: the innermost dimension is the time axis the kernel walks over the
        # grid, while it holds the features `D` whole
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, y, D: tl.constexpr, T: tl.constexpr, BLOCK_T: tl.constexpr):
    i_b = tl.program_id(0)
    i_t = tl.program_id(1)
    o_t = i_t * BLOCK_T + tl.arange(0, BLOCK_T)
    o_d = tl.arange(0, D)
    p = i_b * D * T + o_d[:, None] * T + o_t[None, :]
    tl.store(y + p, tl.load(x + p, mask=o_t[None, :] < T), mask=o_t[None, :] < T)

def launch(x):
    B, D, T = x.shape
    y = torch.empty_like(x)
    k[(B, triton.cdiv(T, 64))](x, y, D, T, BLOCK_T=64)
""",
            rows=[18],
        ),
        # a variable selects the kernel: the finding names the one whose constexpr receives it
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k_small(x, n):
    pid = tl.program_id(0)

@triton.jit
def k_big(x, N: tl.constexpr):
    pid = tl.program_id(0)

def launch(x):
    n = x.numel()
    kernel = k_small if n < 4096 else k_big
    kernel[(48,)](x, n)
""",
            rows=[16],
        ),
    ]
