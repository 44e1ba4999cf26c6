"""ASC025 zero-size-launch: a launch an empty input turns into a grid of 0 programs, or a
`tl.arange` extent of `next_power_of_2(0) == 0`, with no guard before it.

What is 0 for an empty input and which guards exclude it is the index's
(`index.emptiness`); which triton-ascend release guards empty grids itself is the
`toolchain`'s. The rule picks the grid axes and the arange extents of each launch and
words the message.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from ascend_lint.index.syntax import call_name, show
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext
from ascend_lint.toolchain import EMPTY_GRID_GUARDED, show_version

_POWER_OF_TWO = frozenset({"next_power_of_2", "next_power_of_two"})
# pytest's default `python_files`, and the folders test suites live in: a module there
# launches with the inputs of its own test cases
_TEST_MODULE = re.compile(r"^(test_.*|.*_test)\.py$")
_TEST_FOLDERS = frozenset({"test", "tests", "unittest", "unittests"})


def _test_module(path: str) -> bool:
    """Named as pytest collects it, or within four folders of a test-suite folder (a
    checkout that itself lives under a `test` folder still gets its library linted)."""
    p = Path(path)
    near = p.parts[-5:-1]
    return bool(_TEST_MODULE.match(p.name)) or any(part in _TEST_FOLDERS for part in near)


class ZeroSizeLaunch(Rule):
    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        grids = ctx.triton_ascend < EMPTY_GRID_GUARDED
        release = show_version(ctx.triton_ascend)
        reported: set[int] = set()
        if _test_module(ctx.source.path):
            return  # a test suite: its own cases say whether an input is empty
        for binding in index.launches:
            if id(binding.call) in reported:
                continue
            if index.emptiness.run_by_tests(binding.host):
                continue  # a helper only the module's tests call, with their inputs
            found = self._zero_axis(index, binding) if grids else None
            if found is not None:
                reported.add(id(binding.call))
                axis, value = found
                yield Finding(
                    binding.call.func,
                    f"grid axis `{axis}` is 0 when the input is empty ({value.why}) and no "
                    f"guard returns before the launch: triton-ascend {release} launches 0 "
                    "programs and the runtime aborts (`KernelLaunch failed because value 0 "
                    "for parameter coreDim is invalid`); return early when the count is 0",
                )
                continue
            block = self._zero_block(index, binding)
            if block is not None:
                reported.add(id(binding.call))
                param, arg, value = block
                yield Finding(
                    arg,
                    f"`{param}={show(arg)}` is 0 when the input is empty ({value.why}), and "
                    f"`{binding.callee.name}` builds `tl.arange(0, {param})`: the compiler "
                    "rejects it (`arange's end argument must be greater than the start "
                    "argument`); return early when the count is 0, or keep the block at "
                    "least 1",
                )

    @staticmethod
    def _zero_axis(index, binding):
        for axes in index.quantities.grid_axes(binding.call, binding.host):
            for axis in axes:
                value = index.emptiness.unguarded_zero(axis, binding.call, binding.host)
                if value is not None:
                    return show(axis), value
        return None

    @staticmethod
    def _zero_block(index, binding):
        extents = index.arange_extents(binding.callee)
        for param in sorted(extents):
            for arg in binding.args.get(param, ()):
                for value in index.emptiness.zero_paths(arg, binding.host):
                    bucketed = any(
                        isinstance(node, ast.Call) and call_name(node.func) in _POWER_OF_TWO
                        for node, _host in value.path
                    )
                    if bucketed and not index.emptiness.guarded(value, binding.call, binding.host):
                        return param, arg, value
        return None

    VALID = [
        # the reference pattern: an early return before a core-count grid capped by tasks
        """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, y, n_rows, N: tl.constexpr, BM: tl.constexpr):
    pid = tl.program_id(0)
    for task in range(pid, tl.cdiv(n_rows, BM), tl.num_programs(0)):
        pass

def launch(x, cores):
    x_rows = x.reshape(-1, x.shape[-1])
    n_rows = x_rows.shape[0]
    y = torch.empty_like(x_rows)
    if n_rows == 0:
        return y
    grid = (min(cores, triton.cdiv(n_rows, 16)),)
    k[grid](x_rows, y, n_rows, N=x.shape[-1], BM=16)
    return y
""",
        # a guard on the tensor covers its views' dimensions; `not x.numel()` spelling
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.program_id(0)

def launch(x):
    if not x.numel():
        return x
    flat = x.view(-1)
    k[(triton.cdiv(flat.shape[0], 1024),)](flat, flat.shape[0], BLOCK=1024)
    return x
""",
        # the launch sits under `if n > 0:`; grids of model sizes and literals
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.program_id(0)

def launch(x, w):
    n = x.shape[0]
    if n > 0:
        k[(n,)](x, n, BLOCK=64)
    H = w.shape[-1]
    k[(H, 4)](w, H, BLOCK=64)
""",
        # `max(..., 1)` keeps the grid at one program at least
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.program_id(0)

def launch(x):
    n = x.numel()
    k[(max(triton.cdiv(n, 1024), 1),)](x, n, BLOCK=1024)
""",
        # a launch helper whose only caller returns first on an empty batch
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.program_id(0)

def _launch(x, n):
    k[(triton.cdiv(n, 256),)](x, n, BLOCK=256)

def op(x):
    n = x.shape[0]
    if n == 0 or x.shape[1] == 0:
        raise ValueError("empty input")
    _launch(x, n)
""",
        # a block from the hidden size: never 0; an `assert` guards the token block
        """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BN: tl.constexpr, BT: tl.constexpr):
    o = tl.arange(0, BN)
    t = tl.arange(0, BT)

def launch(x, cores):
    num_tokens, hidden = x.shape
    assert num_tokens > 0
    k[(cores,)](x, num_tokens, BN=triton.next_power_of_2(hidden),
                BT=triton.next_power_of_2(num_tokens))
""",
    ]
    INVALID = [
        Invalid(
            """
import torch
import triton
import triton.language as tl

@triton.jit
def add_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

def add(x):
    y = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
""",
            rows=[14],
        ),
        # a core-count grid capped by the task count is 0 too
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n_rows, BM: tl.constexpr):
    for t in range(tl.program_id(0), tl.cdiv(n_rows, BM), tl.num_programs(0)):
        pass

def launch(x, cores):
    n_rows = x.view(-1, x.shape[-1]).shape[0]
    grid = (min(cores, triton.cdiv(n_rows, 8)),)
    k[grid](x, n_rows, BM=8)
""",
            rows=[13],
        ),
        # the guard tests another tensor; the block of an empty batch is 0
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, idx, n, BT: tl.constexpr):
    t = tl.arange(0, BT)

def launch(x, idx, cores):
    if x.numel() == 0:
        return
    num_tokens = idx.shape[0]
    k[(cores,)](x, idx, num_tokens, BT=triton.next_power_of_2(num_tokens))
""",
            rows=[13],
        ),
        # a launch helper with one caller that does not check
        Invalid(
            """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    tl.program_id(0)

def _launch(x, n):
    k[(n, 4)](x, n, BLOCK=64)

def op(x):
    _launch(x, len(x))
""",
            rows=[10],
        ),
    ]
