"""ASC022 ub-overflow: the tiles a program keeps live at once exceed the Unified Buffer."""

from __future__ import annotations

from collections.abc import Iterator

from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.syntax import names_in, show
from ascend_lint.index.tiles import Config, KernelTiles, Peak, UnboundedBlock
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

_SHOWN_TILES = 3


class UbOverflow(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        tiles, target = ctx.index.tiles, ctx.target
        for fn in ctx.index.kernels:
            configs = tiles.configs(fn)
            blocks = tiles.unbounded(fn)
            if not blocks and not any(config.values for config in configs):
                continue  # nothing sizes the tiles: no estimate to make
            kernel = tiles.of(fn)
            if not kernel.tiles:
                continue
            for config in configs:
                peak = tiles.peak(fn, config.values, target)
                if peak is not None and peak.bits > target.capacity_bits:
                    yield Finding(
                        config.node,
                        self._overflow(fn.name, kernel, config, peak, ctx),
                        related=config.cited,
                    )
            for block in blocks:
                message = self._unbounded(fn, kernel, block, configs, ctx)
                if message is not None:
                    yield Finding(block.value, message)

    @staticmethod
    def _held(kernel: KernelTiles, peak: Peak, values: dict[str, int]) -> str:
        shown = []
        for name in peak.locals[:_SHOWN_TILES]:
            tile = kernel.tiles[name][0]
            dims = ", ".join(show(d) for d in tile.shape)
            sizes = "x".join(
                str(values[show(d)]) if show(d) in values else show(d) for d in tile.shape
            )
            doubled = ", x2 multibuffer" if tile.multibuffered else ""
            shown.append(f"`{name}` [{dims}] = {sizes} x {tile.element_bytes} B{doubled}")
        more = len(peak.locals) - _SHOWN_TILES
        return "; ".join(shown) + (f" and {more} more" if more > 0 else "")

    def _overflow(
        self, kernel_name: str, kernel: KernelTiles, config: Config, peak: Peak, ctx: RuleContext
    ) -> str:
        sizing = {
            name
            for local in peak.locals
            for tile in kernel.tiles[local]
            for dim in tile.shape
            for name in names_in(dim)
        }
        values = ", ".join(f"{k}={v}" for k, v in config.values.items() if k in sizing)
        together = "live together" if len(peak.locals) > 1 else "held"
        target = ctx.target
        return (
            f"`{kernel_name}` needs at least {peak.bits:,} bits of {target.capacity_bits:,} "
            f"({target.name} Unified Buffer) with {values or 'its literal sizes'} "
            f"({config.label}): {self._held(kernel, peak, config.values)} {together}; "
            "the compiler rejects it with `ub overflow`: cap the block from the budget "
            "and loop over the rest"
        )

    def _unbounded(
        self,
        fn: JitFunction,
        kernel: KernelTiles,
        block: UnboundedBlock,
        configs: list[Config],
        ctx: RuleContext,
    ) -> str | None:
        if not kernel.sized_by(block.param):
            return None
        target = ctx.target
        found = ctx.index.tiles.smallest_overflowing_block(fn, block.param, configs, target)
        if found is None:
            return None
        size, peak = found
        return (
            f"`{block.param}` = `{show(block.value)}` has no cap: from `{block.dimension}` "
            f"> {size // 2:,} (`{block.param}` = {size:,}) `{fn.name}` needs at least "
            f"{peak.bits:,} bits of {target.capacity_bits:,} ({target.name} Unified "
            "Buffer) and the compiler rejects it with `ub overflow`; cap the block "
            "from the budget (`min(triton.next_power_of_2(n), CAP)`) and loop over the rest"
        )

    VALID = [
        # the column block is capped from the budget and the kernel loops over the rest
        """
import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"BLOCK_M": 4, "BLOCK_N": 1024}), triton.Config({"BLOCK_M": 8, "BLOCK_N": 2048})],
    key=["N"],
)
@triton.jit
def sum_squares(x, y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x_tile = tl.load(x + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        acc += x_tile * x_tile
    tl.store(y + rows, tl.sum(acc, axis=1), mask=rows < M)
""",
        # a block of a model dimension (the row width): whether a model reaches the size
        # that overflows is not in the code, so only the configs the launches show count
        """
import torch
import triton
import triton.language as tl

@triton.jit
def softmax_kernel(x, y, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + tl.program_id(0) * N + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + tl.program_id(0) * N + cols, e / tl.sum(e, axis=0), mask=cols < N)

def softmax(x):
    y = torch.empty_like(x)
    n_cols = x.shape[-1]
    softmax_kernel[(x.shape[0],)](x, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y
""",
        # a capped power of two: the block never grows past the cap
        """
import triton
import triton.language as tl

@triton.jit
def scale(x, y, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + tl.program_id(0) * N + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(y + tl.program_id(0) * N + cols, v * 2.0, mask=cols < N)

def launch(x, y):
    n = x.shape[-1]
    scale[(x.shape[0],)](x, y, n, BLOCK=min(triton.next_power_of_2(n), 8192))
""",
        # a matmul: loads and the accumulator sit in the cube core's buffers, not in UB
        """
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BM": 256, "BN": 256, "BK": 256})], key=["K"])
@triton.jit
def matmul(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        w = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(x, w)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)
""",
        # the element type of the loaded tensor is not known: a byte each is all that is proven
        """
import triton
import triton.language as tl

@triton.jit
def copy_rows(src, dst, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for i in range(4):
        row = tl.load(src + i * BLOCK + offs)
        tl.store(dst + i * BLOCK + offs, row)

def launch(src, dst):
    copy_rows[(1,)](src, dst, BLOCK=32768)
""",
    ]
    INVALID = [
        # an autotune config whose fp32 accumulator and cast tile are live together
        Invalid(
            """
import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"BLOCK_M": 4, "BLOCK_N": 1024}), triton.Config({"BLOCK_M": 4, "BLOCK_N": 8192})],
    key=["N"],
)
@triton.jit
def sum_squares(x, y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x_tile = tl.load(x + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        acc += x_tile * x_tile
    tl.store(y + rows, tl.sum(acc, axis=1), mask=rows < M)
""",
            rows=[6],
        ),
        # every token of the batch in one block: `next_power_of_2` of a token count
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def token_offsets(lens, out, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    counts = tl.load(lens + o, mask=o < n, other=0).to(tl.float32)
    tl.store(out + o, tl.cumsum(counts, axis=0) - counts, mask=o < n)

def offsets(seq_lens):
    n_tokens = int(seq_lens.sum().item())
    out = torch.empty(n_tokens, dtype=torch.float32)
    token_offsets[(1,)](seq_lens, out, n_tokens, BLOCK=triton.next_power_of_2(n_tokens))
    return out
""",
            rows=[15],
        ),
        # launch literals, and a host tensor allocated as fp32: the loaded tile is 4 bytes
        # an element and doubled by multibuffer inside the loop
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def copy_state(src, dst, n, BLOCK_H: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_K: tl.constexpr):
    h = tl.arange(0, BLOCK_H)
    v = tl.arange(0, BLOCK_V)
    k = tl.arange(0, BLOCK_K)
    offs = h[:, None, None] * BLOCK_V * BLOCK_K + v[None, :, None] * BLOCK_K + k[None, None, :]
    for i in range(n):
        block = tl.load(src + i * BLOCK_H * BLOCK_V * BLOCK_K + offs)
        tl.store(dst + i * BLOCK_H * BLOCK_V * BLOCK_K + offs, block)

def run(n):
    src = torch.empty((n, 2, 128, 128), dtype=torch.float32)
    dst = torch.empty_like(src)
    copy_state[(1,)](src, dst, n, BLOCK_H=2, BLOCK_V=128, BLOCK_K=128)
""",
            rows=[19],
        ),
    ]
