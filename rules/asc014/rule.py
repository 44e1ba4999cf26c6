"""ASC014 cuda-only-api: CUDA devices, torch.cuda, NVIDIA device properties and CUDA
libdevice in a module with Triton kernels or launches.

Host code spells CUDA in more ways than `torch.cuda.X(...)` and `device="cuda"`: through
imports (`from torch import cuda`, `from torch.cuda import Stream`) and through names
(`DEVICE = "cuda"` ... `device=DEVICE`). Both are followed by Python's scoping, over
simple bindings only; a name bound in any other way, or under a platform test, is not.
The index resolves the names (`index.platform.torch_cuda_call`, `cuda_device`, over the
host-side scopes of `scopes`); the rule picks the calls, words the messages and builds
the suggestions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import node_text, replace_node
from ascend_lint.diagnostics import Applicability, Fix, cite
from ascend_lint.index import call_name, dotted
from ascend_lint.index.platform import (
    CUDA_LANGUAGE,
    NVIDIA_DEVICE_PROPERTIES,
    DeviceOrigin,
    PlatformFacts,
    is_cuda_fstring,
    is_cuda_string,
    is_torch_device,
)
from ascend_lint.index.syntax import walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

CANN_LANGUAGE = "triton.language.extra.cann"
# Probing for CUDA is how code finds out it is not on a GPU.
PROBES = frozenset({"is_available", "is_initialized", "device_count"})


class CudaOnlyApi(Rule):
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        index = ctx.index
        if not (index.kernels or index.launch_calls):
            return
        # Every finding spells `cuda` or a property key: most kernel files have neither,
        # and the text says so faster than the syntax tree.
        text = ctx.source.text
        has_keys = any(key in text for key in NVIDIA_DEVICE_PROPERTIES)
        if "cuda" not in text and not has_keys:
            return
        findings: list[Finding] = []
        reported: set[int] = set()  # calls inside a reported property lookup
        for node, key in index.platform.device_property_lookups() if has_keys else ():
            if index.platform.platform_guarded(node) or index.platform.platform_only_host(
                index.platform.host_at(node)
            ):
                continue
            reported.update(id(n) for n in walk(node) if isinstance(n, ast.Call))
            findings.append(self._property(ctx, node, key))
        platform = index.platform
        # `torch.device("cuda")` findings by call, and the assigned values that reported
        # uses of a name were followed through: `DEVICE = torch.device("cuda")` is
        # reported where DEVICE is used, not also where it is assigned.
        device_calls: dict[int, Finding] = {}
        followed: set[int] = set()
        for call, host in index.host_calls:
            if id(call) not in reported:
                found = self._host_call(ctx, platform, call, host, device_calls, followed)
                if found and not (
                    index.platform.platform_guarded(call) or index.platform.platform_only_host(host)
                ):
                    findings += found
        dropped = {id(device_calls[c]) for c in followed if c in device_calls}
        findings = [f for f in findings if id(f) not in dropped]
        imports = index.platform.cuda_language_imports()
        for item in imports:
            if not index.platform.platform_guarded(item.node):
                findings.append(self._import(ctx, item.node, item.module))
        for fn in index.kernels:
            for call, stmt in fn.calls:
                qual = index.aliases.resolve(call.func)
                if not qual or not qual.startswith(CUDA_LANGUAGE + "."):
                    continue
                parts = dotted(call.func) or []
                if imports and parts and parts[0] in index.aliases.members:
                    continue  # `libdevice.exp` of an imported CUDA module: reported at the import
                if not index.platform.kernel_platform_guarded(fn, stmt):
                    findings.append(
                        Finding(
                            call.func,
                            f"`{'.'.join(parts)}` is CUDA libdevice, which does not compile on "
                            f"Ascend; use `{CANN_LANGUAGE}.libdevice`",
                        )
                    )
        findings.sort(key=lambda f: (f.node.lineno, f.node.col_offset))
        yield from findings

    def _host_call(
        self,
        ctx: RuleContext,
        platform: PlatformFacts,
        call: ast.Call,
        host,
        device_calls: dict[int, Finding],
        followed: set[int],
    ) -> list[Finding]:
        out: list[Finding] = []
        pending: list[ast.expr] = []  # values followed by this call's findings

        def device_use(node: ast.AST, value: ast.AST, where: str) -> Finding | None:
            """A device argument: a CUDA literal, or a name that always holds one."""
            if is_cuda_string(value) or is_cuda_fstring(value):
                return self._device_string(ctx, node, value, where)
            if isinstance(value, ast.Name):
                origin = platform.cuda_device(value, host)
                if origin is not None:
                    pending.extend(origin.through)
                    return self._device_name(ctx, node, value, origin, where)
            return None

        parts = dotted(call.func) or []
        torch = platform.torch_names()
        in_cuda = platform.torch_cuda_call(call.func, host)
        if in_cuda is not None:
            written, qual = in_cuda
            if qual[-1] not in PROBES:
                # `torch` as this module spells it (`th.cuda.X` -> `th.npu.X`)
                spelled = written[0] if written[0] in torch else min(torch, default="torch")
                suggestion = ".".join([spelled, "npu", *qual[2:]])
                shown = ".".join(written)
                where = f"`{shown}`" + (f" (`{'.'.join(qual)}`)" if written != qual else "")
                out.append(
                    Finding(
                        call.func,
                        f"{where} exists only on CUDA; on Ascend use `{suggestion}` "
                        f"(torch_npu) or the device of the input tensors",
                        fix=self._suggest(ctx, call.func, suggestion, f"Use `{suggestion}`"),
                    )
                )
        elif is_torch_device(call, torch):
            if call.args:
                found = device_use(call.args[0], call.args[0], "torch.device({})")
                if found is not None:
                    device_calls[id(call)] = found
                    out.append(found)
        elif isinstance(call.func, ast.Attribute) and call_name(call.func) == "cuda":
            if not (len(parts) == 2 and parts[0] in torch):
                out.append(
                    Finding(
                        call.func,
                        "`.cuda()` moves the tensor to a CUDA device; use `.to(x.device)` or "
                        "`.npu()` on Ascend",
                        fix=self._suggest(
                            ctx,
                            call,
                            _replace_attr(ctx, call, "npu"),
                            "Use `.npu()`",
                        ),
                    )
                )
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "to":
            if call.args:
                found = device_use(call.args[0], call.args[0], ".to({})")
                if found is not None:
                    out.append(found)
        for kw in call.keywords:
            if kw.arg == "device":
                found = device_use(kw, kw.value, "device={}")
                if found is not None:
                    out.append(found)
        if (
            out
            and pending
            and not (
                ctx.index.platform.platform_guarded(call)
                or ctx.index.platform.platform_only_host(host)
            )
        ):
            followed.update(id(v) for v in pending if isinstance(v, ast.Call))
        return out

    def _device_string(
        self, ctx: RuleContext, node: ast.AST, value: ast.expr, where: str
    ) -> Finding:
        if isinstance(value, ast.Constant):
            written = repr(value.value)
            text = value.value.replace("cuda", "npu", 1)
            shown = f'"{text}"'
            fix = self._suggest(ctx, value, repr(text).replace("'", '"'), f'Use "{text}"')
        else:  # f"cuda:{rank}"
            written = node_text(ctx.source, value)
            text = written.replace("cuda", "npu", 1)
            shown = f"`{text}`"
            fix = self._suggest(ctx, value, text, f"Use `{text}`")
        return Finding(
            node,
            f"`{where.format(written)}` names a CUDA device; on Ascend use "
            f"{shown} or the device of the input tensors",
            fix=fix,
        )

    def _device_name(
        self, ctx: RuleContext, node: ast.AST, name: ast.Name, origin: DeviceOrigin, where: str
    ) -> Finding:
        literal = node_text(ctx.source, origin.literal)
        source = origin.through[0] if origin.through else origin.literal
        value = node_text(ctx.source, source)
        via = "" if literal in value else f", which is {literal}"
        return Finding(
            node,
            f"`{where.format(name.id)}` names a CUDA device (`{name.id}` is `{value}`, "
            f"{cite(0)}{via}); on Ascend use the device of the input tensors or an NPU "
            "device",
            related=(source,),
        )

    def _property(self, ctx: RuleContext, node: ast.AST, key: str) -> Finding:
        if key == "max_shared_mem":
            return Finding(
                node,
                "`max_shared_mem` is an NVIDIA device property (triton-ascend reports a dummy "
                "value); size blocks by Ascend's on-chip buffer instead",
            )
        fix = None
        if isinstance(node, ast.Subscript):
            fix = self._suggest(ctx, node.slice, '"num_vectorcore"', 'Use "num_vectorcore"')
        return Finding(
            node,
            f"`{key}` is an NVIDIA device property that triton-ascend does not report; use "
            "`num_vectorcore` (vector kernels) or `num_aicore` (kernels with `tl.dot`) of "
            "`triton.runtime.driver.active.utils.get_device_properties(device)`",
            fix=fix,
        )

    def _import(self, ctx: RuleContext, node: ast.AST, module: str) -> Finding:
        return Finding(
            node,
            f"`{CUDA_LANGUAGE}` (CUDA libdevice) does not compile on Ascend; import "
            f"`{CANN_LANGUAGE}.libdevice` instead",
            fix=self._suggest_import(ctx, node, module),
        )

    def _suggest_import(self, ctx: RuleContext, node: ast.AST, module: str) -> Fix | None:
        original = node_text(ctx.source, node)
        if module == CUDA_LANGUAGE:
            replaced = original.replace(CUDA_LANGUAGE, CANN_LANGUAGE)
        else:  # `from triton.language.extra import cuda`
            replaced = original.replace("import cuda", "import cann")
        if replaced == original:
            return None
        return self._suggest(ctx, node, replaced, f"Import from `{CANN_LANGUAGE}`")

    @staticmethod
    def _suggest(ctx: RuleContext, node: ast.AST, content: str, message: str) -> Fix:
        return Fix(Applicability.DISPLAY_ONLY, message, (replace_node(ctx.source, node, content),))

    VALID = [
        # platform dispatch: CUDA only under a test for the platform
        """
import torch
import triton
import triton.language as tl

from .utils import is_npu

_is_npu = is_npu()
if _is_npu:
    device = torch.device("npu")
else:
    device = torch.device("cuda")

@triton.jit
def k(x):
    pass

def get_device():
    if hasattr(torch, "npu") and torch.npu.is_available():
        return torch.device("npu:0")
    elif torch.cuda.is_available():
        return torch.device("cuda:0")
    return torch.device("cpu")

def run(device_name="npu"):
    sync = torch.npu if device_name == "npu" else torch.cuda
    x = torch.zeros(8, device="npu" if _is_npu else "cuda")
    k[(1,)](x)
    if device_name != "npu":
        torch.cuda.synchronize()
    props = triton.runtime.driver.active.utils.get_device_properties(x.device)
    cores = props["num_vectorcore"]

if __name__ == "__main__":
    run("npu" if _is_npu else "cuda")
""",
        # a CUDA intrinsic under a constexpr flag the host sets from a platform test
        """
import triton
import triton.language as tl

def _supports_pdl(device_name):
    if device_name == "npu":
        return False
    return True

@triton.jit
def k(x, USE_PDL: tl.constexpr):
    if USE_PDL:
        tl.extra.cuda.gdc_wait()

def launch(x, device_name):
    use_pdl = _supports_pdl(device_name)
    k[(1,)](x, USE_PDL=use_pdl)
""",
        # strings and comments; a module without kernels or launches
        """
import torch
import triton

HELP = 'x.cuda(); torch.cuda.synchronize(); device="cuda"'  # not on Ascend: .cuda()

@triton.jit
def k(x):
    pass
""",
        """
import torch

def to_gpu(x):
    return x.cuda()
""",
        # a test skipped unless on CUDA; `or` after a platform test
        """
import pytest
import torch
import triton

@triton.jit
def k(x):
    pass

@pytest.mark.skipif(not is_cuda() or torch.cuda.get_device_capability()[0] < 9, reason="sm90")
def test_k():
    x = torch.zeros(4, device="cuda")
    k[(1,)](x)
""",
        # the GPU side of a dispatch: named for it, or called only under a platform test
        """
import torch
import triton

@triton.jit
def k(x):
    pass

def gpu_reference(x):
    torch.cuda.synchronize()
    return x.cuda()

def _sync_gpu():
    torch.cuda.synchronize()

def bench(x, device_name):
    k[(1,)](x)
    if device_name == "npu":
        torch.npu.synchronize()
    else:
        _sync_gpu()
""",
        # an early exit under a platform test guards the rest
        """
import torch
import triton

@triton.jit
def k(x):
    pass

def bench(x):
    if not torch.cuda.is_available():
        return
    torch.cuda.synchronize()
""",
        # device names chosen by the platform, assigned under a platform test, taken
        # from the active driver, rebound, or never used as a device
        """
import torch
import triton
import triton.language as tl

from .utils import is_npu

DEVICE = "npu" if is_npu() else "cuda"
if is_npu():
    FALLBACK = torch.device("npu")
else:
    FALLBACK = torch.device("cuda")
ACTIVE = triton.runtime.driver.active.get_active_torch_device()
DEFAULT_DEVICE = "cuda"  # named, never used as a device
WANTED = "cuda"


def pick(name):
    global WANTED
    WANTED = name


@triton.jit
def fill_kernel(o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + offs, 1.0, mask=offs < n)


def fill(n, device="cuda"):
    target = "cuda:0"
    if is_npu():
        target = "npu:0"
    o = torch.empty(n, device=DEVICE)
    fill_kernel[(triton.cdiv(n, 128),)](o, n, BLOCK=128)
    return (
        o.to(FALLBACK),
        torch.empty(n, device=ACTIVE),
        torch.empty(n, device=device),
        torch.empty(n, device=target),
        torch.empty(n, device=WANTED),
        [torch.empty(n, device=d) for d in (ACTIVE, DEVICE)],
    )
""",
        # `cuda` and `Stream` bound to something other than torch's CUDA module
        """
import triton
import triton.language as tl
from numba import cuda

from .streams import Stream


@triton.jit
def k(x):
    pass


def launch(x):
    k[(1,)](x)
    cuda.synchronize()
    return Stream()
""",
    ]
    INVALID = [
        # the Example of ASC014.md, which must stay the first case (tests/test_docs.py)
        Invalid(
            """
import torch
import triton
import triton.language as tl
from torch import cuda
from triton.language.extra.cuda import libdevice  # ASC014

DEVICE = "cuda"


@triton.jit
def gelu_kernel(x, y, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n, other=0.0)
        tl.store(y + offs, 0.5 * v * (1 + libdevice.erf(v * 0.7071067811865476)), mask=offs < n)


def gelu(x):
    y = torch.empty_like(x, device="cuda")  # ASC014
    props = triton.runtime.driver.active.utils.get_device_properties(x.device.index)
    grid = (props["multiprocessor_count"],)  # ASC014
    gelu_kernel[grid](x, y, x.numel(), BLOCK=1024)
    torch.cuda.synchronize()  # ASC014
    return y


def check_gelu(n=4096):
    x = torch.randn(n, device=DEVICE)  # ASC014 (DEVICE is "cuda")
    y = gelu(x.to(DEVICE))  # ASC014
    cuda.synchronize()  # ASC014 (torch.cuda.synchronize)
    return y
""",
            rows=[6, 20, 22, 24, 29, 30, 31],
        ),
        Invalid(
            """
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

@triton.jit
def k(x, o, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o + offs, libdevice.exp(tl.load(x + offs)))
    tl.store(o + offs, tl.extra.cuda.libdevice.tanh(tl.load(x + offs)))

def launch(n):
    x = torch.randn(n, device="cuda")
    o = torch.empty(n).cuda()
    props = triton.runtime.driver.active.utils.get_device_properties(0)
    grid = (props["multiprocessor_count"],)
    k[grid](x, o, BLOCK=64)
    torch.cuda.synchronize()
    cores = torch.cuda.get_device_properties(0).multi_processor_count
    return o.to("cuda:0"), torch.device("cuda")
""",
            rows=[5, 11, 14, 15, 17, 19, 20, 21, 21],
        ),
        # torch's CUDA module under other names
        Invalid(
            """
import torch as th
import torch.cuda as tcuda
import triton
import triton.language as tl
from torch import cuda
from torch.cuda import Event, current_device


@triton.jit
def scale_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x):
    y = th.empty_like(x)
    done = Event()
    side = cuda.Stream(device=current_device())
    with cuda.stream(side):
        scale_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        done.record()
    cuda.synchronize()
    tcuda.empty_cache()
    th.cuda.reset_peak_memory_stats()
    if cuda.is_available():
        cuda.synchronize()
    return y
""",
            rows=[18, 19, 19, 20, 23, 24, 25],
        ),
        # a CUDA device held in a name, reported where the name is used as a device
        Invalid(
            """
import torch
import triton
import triton.language as tl

DEVICE = "cuda"
HOME = torch.device("cuda:0")


@triton.jit
def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(o + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


def check_add(n=1000):
    x = torch.rand(n, device=DEVICE)
    y = torch.rand(n).to(DEVICE)
    dev = HOME
    o = torch.empty(n, device=dev)
    add_kernel[(triton.cdiv(n, 256),)](x, y, o, n, BLOCK=256)
    return o.to(device=DEVICE)
""",
            rows=[18, 19, 21, 23],
        ),
    ]


def _replace_attr(ctx: RuleContext, call: ast.Call, attr: str) -> str:
    args = node_text(ctx.source, call)[len(node_text(ctx.source, call.func)) :]
    return f"{node_text(ctx.source, call.func.value)}.{attr}{args}"
