"""ASC014 cuda-only-api: CUDA devices, torch.cuda, NVIDIA device properties and CUDA
libdevice in a module with Triton kernels or launches."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascend_lint.codemods import node_text, replace_node
from ascend_lint.diagnostics import Applicability, Fix
from ascend_lint.index import call_name, dotted
from ascend_lint.index.platform import CUDA_LANGUAGE, NVIDIA_DEVICE_PROPERTIES
from ascend_lint.index.syntax import walk
from ascend_lint.rules._base import Finding, Invalid, Rule, RuleContext

CANN_LANGUAGE = "triton.language.extra.cann"
# Probing for CUDA is how code finds out it is not on a GPU.
PROBES = frozenset({"is_available", "is_initialized", "device_count"})


def _is_cuda_string(node: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value == "cuda" or node.value.startswith("cuda:"))
    )


class CudaOnlyApi(Rule):
    code = "ASC014"
    name = "cuda-only-api"
    summary = '`device="cuda"`, `.cuda()`, `torch.cuda.*`, NVIDIA device properties or CUDA libdevice next to Triton kernels'
    reference = "reference_kernels/core_grid.py::num_vector_cores"
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
        torch = index.platform.torch_names()
        for call, host in index.host_calls:
            if id(call) not in reported:
                found = self._host_call(ctx, call, torch)
                if found and not (
                    index.platform.platform_guarded(call) or index.platform.platform_only_host(host)
                ):
                    findings += found
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

    def _host_call(self, ctx: RuleContext, call: ast.Call, torch: frozenset[str]) -> list[Finding]:
        out: list[Finding] = []
        parts = dotted(call.func) or []
        if len(parts) >= 3 and parts[0] in torch and parts[1] == "cuda":
            if parts[-1] not in PROBES:
                suggestion = ".".join([parts[0], "npu", *parts[2:]])
                out.append(
                    Finding(
                        call.func,
                        f"`{'.'.join(parts)}` exists only on CUDA; on Ascend use `{suggestion}` "
                        f"(torch_npu) or the device of the input tensors",
                        fix=self._suggest(ctx, call.func, suggestion, f"Use `{suggestion}`"),
                    )
                )
        elif parts[-2:] == ["torch", "device"] or (
            len(parts) == 2 and parts[0] in torch and parts[1] == "device"
        ):
            if call.args and _is_cuda_string(call.args[0]):
                out.append(self._device_string(ctx, call.args[0], "torch.device({})"))
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
            if call.args and _is_cuda_string(call.args[0]):
                out.append(self._device_string(ctx, call.args[0], ".to({})"))
        for kw in call.keywords:
            if kw.arg == "device" and _is_cuda_string(kw.value):
                out.append(self._device_string(ctx, kw, "device={}"))
        return out

    def _device_string(self, ctx: RuleContext, node: ast.AST, where: str) -> Finding:
        value = node.value if isinstance(node, ast.keyword) else node
        text = value.value.replace("cuda", "npu", 1)
        return Finding(
            node,
            f"`{where.format(repr(value.value))}` names a CUDA device; on Ascend use "
            f'"{text}" or the device of the input tensors',
            fix=self._suggest(ctx, value, repr(text).replace("'", '"'), f'Use "{text}"'),
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
    ]
    INVALID = [
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
    ]


def _replace_attr(ctx: RuleContext, call: ast.Call, attr: str) -> str:
    args = node_text(ctx.source, call)[len(node_text(ctx.source, call.func)) :]
    return f"{node_text(ctx.source, call.func.value)}.{attr}{args}"
