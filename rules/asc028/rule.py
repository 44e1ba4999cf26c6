"""ASC028 unaligned-innermost-dim: a 2-D tile whose rows are not a multiple of 32 bytes,
where the sizes are visible.

The row geometry of each access (the tensor's row width, the pitch between rows, the
tile's innermost extent, the tensor addressed) is the index's (`index.accesses.rows`);
the values the kernel's launches, autotune configurations and defaults give its
constexprs, and the element size of the tensor the launches pass, are `index.tiles`'.
The rule evaluates the sizes and words the message.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.index.syntax import show
from ascend_lint.index.tiles import evaluate
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

GRANULE = 32  # bytes: the DMA and Unified Buffer alignment of a row on A2/A3
# With no element size known, a row of n elements is unaligned for every element size up
# to 8 bytes exactly when n is not a multiple of 4.
_ANY_SIZE = 4


def _elements(n: int) -> str:
    return f"{n:,} element" + ("" if n == 1 else "s")


def _named(expr: ast.AST, n: int) -> str:
    spelled = show(expr)
    return f"`{spelled}` = {n:,}" if spelled != str(n) else f"`{spelled}`"


def _bytes(n: int, size: int | None) -> str:
    if size is None:
        return f"({_elements(n)}, under {GRANULE} bytes or off a multiple of it for any type)"
    return f"({_elements(n)} of {size} bytes: {n * size:,} bytes, not a multiple of {GRANULE})"


def _unaligned(n: int, size: int | None) -> bool:
    """Is a row of `n` elements off a multiple of 32 bytes (for every element size up to
    8 bytes, when the size is not known)?"""
    return (n * size) % GRANULE != 0 if size is not None else n % _ANY_SIZE != 0


def _narrow(n: int, size: int | None) -> bool:
    """Is a tile row of `n` elements narrower than 32 bytes (for every element size up
    to 8 bytes, when the size is not known)?"""
    return n * (size if size is not None else 8) < GRANULE


class UnalignedInnermostDim(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        for fn in index.kernels:
            configs = index.tiles.configs(fn) or []
            seen: set[int] = set()
            for rows in index.accesses.rows(fn):
                if id(rows.node) in seen:
                    continue
                size = index.tiles.host_element_bytes(fn, rows.base) if rows.base else None
                for config in configs or [None]:
                    values = config.values if config is not None else {}
                    message = self._problem(rows, values, size)
                    if message is None:
                        continue
                    seen.add(id(rows.node))
                    labelled = config is not None and config.values
                    where = f" ({config.label})" if labelled else ""
                    yield Finding(
                        rows.node, message + where, related=config.cited if labelled else ()
                    )
                    break

    @staticmethod
    def _problem(rows, values: dict[str, int], size: int | None) -> str | None:
        """The message for the first unaligned size under `values`, or None."""
        width, pitch, extent = (
            evaluate(e, values) if e is not None else None
            for e in (rows.width, rows.pitch, rows.extent)
        )
        # rows the tile covers whole and back to back: one contiguous block in memory
        contiguous = pitch is not None and pitch == extent and width in (None, extent)
        if not contiguous:
            for what, expr, n in (
                ("row width", rows.width, width),
                ("row pitch", rows.pitch, pitch),
            ):
                if n is None or n <= 0 or not _unaligned(n, size):
                    continue
                return (
                    f"{what} {_named(expr, n)} {_bytes(n, size)}: each row's copy is rounded "
                    f"up to {GRANULE} bytes and reaches into the next row (wrong values, a "
                    "fault at the tensor's end, or a slow path); pad the rows to a multiple "
                    f"of {GRANULE} bytes and pass the padded pitch"
                )
        if extent is not None and extent > 1 and _narrow(extent, size):
            # (a unit innermost axis is squeezed away: a column is a strided access)
            flat = (
                "; the rows are back to back in memory, so load them as one flat block and reshape"
                if contiguous
                else "; put the long axis last"
            )
            return (
                f"the tile's rows are {_named(rows.extent, extent)} {_bytes(extent, size)}: the "
                f"Unified Buffer pads every row to {GRANULE} bytes (more buffer, one copy per "
                f"row){flat}"
            )
        return None

    VALID = [
        # 64 float32 columns: 256-byte rows
        """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, K: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p = tl.make_block_ptr(x, (T, K), (K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    tl.store(tl.make_block_ptr(y, (T, K), (K, 1), (i_t * BT, 0), (BT, K), (1, 0)), tl.load(p))

def launch(T):
    x = torch.empty(T, 64, dtype=torch.float32)
    y = torch.empty_like(x)
    k[(T // 16,)](x, y, T, K=64, BT=16)
""",
        # a width the launcher reads from the tensor: not visible, not reported
        """
import triton
import triton.language as tl

@triton.jit
def k(x, y, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr):
    i_t = tl.program_id(0)
    p = tl.make_block_ptr(x, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
    tl.store(y + tl.arange(0, BT)[:, None] * BD + tl.arange(0, BD)[None, :], tl.load(p, boundary_check=(0, 1)))

def launch(x, y):
    T, D = x.shape
    k[(T // 16,)](x, y, T, D=D, BT=16, BD=triton.next_power_of_2(D))
""",
        # the padded form: the kernel reads rows of a padded pitch and masks the width
        """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, D, D_PAD: tl.constexpr, BR: tl.constexpr, BD: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.arange(0, BD)
    m = (r[:, None] < n_rows) & (c[None, :] < D)
    v = tl.load(x + r[:, None] * D_PAD + c[None, :], mask=m, other=0.0)
    tl.store(y + r[:, None] * D_PAD + c[None, :], v, mask=m)

def launch(n_rows):
    x = torch.empty(n_rows, 128, dtype=torch.float32)
    y = torch.empty_like(x)
    k[(n_rows // 16,)](x, y, n_rows, 123, D_PAD=128, BR=16, BD=128)
""",
        # 16 bf16 columns are 32 bytes
        """
import torch
import triton
import triton.language as tl

@triton.jit
def k(a, T, H, i_t, BT: tl.constexpr):
    p = tl.make_block_ptr(a, (T, 16), (H * 16, 1), (i_t * BT, 0), (BT, 16), (1, 0))
    tl.store(p, tl.zeros([BT, 16], dtype=tl.bfloat16))

def launch(T, H):
    a = torch.empty(T, H, 16, dtype=torch.bfloat16)
    k[(1,)](a, T, H, 0, BT=64)
""",
    ]
    INVALID = [
        # D = 123 float32: 492-byte rows (the attention-residual case)
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, D: tl.constexpr, BR: tl.constexpr, BD: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.arange(0, BD)
    m = (r[:, None] < n_rows) & (c[None, :] < D)
    v = tl.load(x + r[:, None] * D + c[None, :], mask=m, other=0.0)
    tl.store(y + r[:, None] * D + c[None, :], v, mask=m)

def launch(n_rows):
    x = torch.empty(n_rows, 123, dtype=torch.float32)
    y = torch.empty_like(x)
    k[(n_rows // 16,)](x, y, n_rows, D=123, BR=16, BD=128)
""",
            rows=[11, 12],
        ),
        # a block pointer over rows of 100 half-precision elements (an autotune config)
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BT": 64})], key=["T"])
@triton.jit
def k(x, T, K: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p = tl.make_block_ptr(x, (T, K), (K, 1), (i_t * BT, 0), (BT, 128), (1, 0))
    tl.store(p, tl.load(p, boundary_check=(0, 1)) * 2, boundary_check=(0, 1))

def launch(T):
    x = torch.empty(T, 100, dtype=torch.float16)
    k[(T // 64,)](x, T, K=100)
""",
            rows=[10],
        ),
        # an odd pitch written in the kernel, element size unknown
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, y, BR: tl.constexpr):
    r = tl.arange(0, BR)
    c = tl.arange(0, 4)
    v = tl.load(x + r[:, None] * 3 + c[None, :], mask=c[None, :] < 3, other=0.0)
    tl.store(y + r, tl.sum(v, axis=1))
""",
            rows=[9],
        ),
        # rows of four float32 elements: 16 bytes, padded to 32 in the Unified Buffer
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def k(boxes, out, BN: tl.constexpr):
    r = tl.program_id(0) * BN + tl.arange(0, BN)
    c = tl.arange(0, 4)
    b = tl.load(boxes + r[:, None] * 4 + c[None, :])
    tl.store(out + r, tl.sum(b, axis=1))

def launch(n):
    boxes = torch.empty(n, 4, dtype=torch.float32)
    out = torch.empty(n, dtype=torch.float32)
    k[(n // 64,)](boxes, out, BN=64)
""",
            rows=[10],
        ),
    ]
