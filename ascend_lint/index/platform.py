"""Platform facts: which code runs only on one kind of device, and where a module asks
for CUDA-only things (torch's CUDA API, NVIDIA device properties, CUDA libdevice).

Ports keep a GPU path next to the NPU one (`if is_npu(): ... else: torch.cuda...`,
`"npu" if _is_npu else "cuda"`); code under such a test is platform dispatch, not a
CUDA dependency.

Host code also spells CUDA through names: `from torch import cuda`, `from torch.cuda
import Stream`, `DEVICE = "cuda"` ... `device=DEVICE`. `torch_cuda_call` says which
callee is in `torch.cuda` however it is imported, and `cuda_device` which expression
always names a CUDA device (a literal, `torch.device` of one, or a name every binding
of which is one, none under a platform test), by Python's scoping (`scopes`).

Depends on: the core facts (the tree, kernels, host functions, launches, the calls to
a host function), `host` (whether a launch value comes from a platform test) and the
host-side name bindings of `scopes` (which depend on the core only):

    core ──> host ──┐
      │             ├──> platform
      └──> scopes ──┘

Nothing else of the index depends on this object.

Costs: the spans of platform-tested code and the NVIDIA device-property lookups in
one walk over host code, once per module on first use; the import statements once;
the platform flags of a kernel once per kernel; `platform_only_host` once per host
function; `host_at` and `platform_guarded` scan the host functions and the spans;
the host-side scopes on the first name asked (`torch_cuda_call` asks only for names an
import binds to torch's CUDA module), each function's bindings once; `cuda_device`
follows names at most 8 levels deep.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ascend_lint.index.aliases import LANGUAGE
from ascend_lint.index.core import CoreFacts
from ascend_lint.index.host import HostFacts
from ascend_lint.index.kernels import JitFunction
from ascend_lint.index.launches import HostFunction
from ascend_lint.index.scopes import HostNames, Imported
from ascend_lint.index.syntax import (
    LEAVES,
    all_statements,
    children,
    dotted,
    frozen_names,
    mentioned_texts,
)

# Words that name a device platform in identifiers and strings (`is_npu`, `"cuda:0"`,
# `torch.version.hip`, `IS_NVIDIA_HOPPER`, `current_platform`), matched as whole
# `_`/`.`/`:`-separated tokens so that `input` is not `npu` and `ship` not `hip`.
PLATFORM_WORDS = frozenset(
    {"cuda", "npu", "gpu", "nvidia", "ascend", "hip", "rocm", "amd", "xpu", "musa", "platform"}
)
_TOKEN = re.compile(r"[a-z0-9]+")
# The platform words that name a GPU: a host function called `gpu_add` or `run_cuda`
# is the GPU side of a port's dispatch.
GPU_WORDS = frozenset({"cuda", "gpu", "nvidia", "hip", "rocm", "amd"})
CUDA_LANGUAGE = f"{LANGUAGE}.extra.cuda"
# Keys of NVIDIA device properties (triton's driver dict and torch's attribute) that
# triton-ascend's driver does not provide: it returns num_aicore / num_vectorcore.
NVIDIA_DEVICE_PROPERTIES = frozenset(
    {"multiprocessor_count", "multi_processor_count", "max_shared_mem"}
)
Span = tuple[tuple[int, int], tuple[int, int]]
TORCH_CUDA = "torch.cuda"
_MAX_DEPTH = 8  # names followed through names


def _words(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def is_platform_test(expr: ast.AST) -> bool:
    """Whether a condition looks at the device platform: it mentions a platform word in
    a name, an attribute or a string (`is_npu()`, `device == "npu"`,
    `torch.cuda.is_available()`, `hasattr(torch, "npu")`, `x.is_cuda`)."""
    return any(_words(text) & PLATFORM_WORDS for text in mentioned_texts(expr))


# Names and strings of the 910_95 (A5): `IS_910_95`, `is_a5`, `"Ascend910_95"`, `ascend950`.
_A5_SOC = re.compile(r"910_?95|ascend_?950|(?:^|[^a-z0-9])(?:a5|950)(?:[^a-z0-9]|$)")


def _a5_test(test: ast.AST) -> bool | None:
    """True when a branch test holds only on the 910_95 (A5), False when it holds only
    elsewhere (`not IS_A5`, `soc != "Ascend910_95"`), None when it says nothing of it."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _a5_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return True if any(_a5_test(v) is True for v in test.values) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], (ast.Eq, ast.In)):
            return True if any(_names_a5(n) for n in (test.left, *test.comparators)) else None
        if isinstance(test.ops[0], (ast.NotEq, ast.NotIn)):
            return False if any(_names_a5(n) for n in (test.left, *test.comparators)) else None
        return None
    if isinstance(test, (ast.Name, ast.Attribute, ast.Call)) and _names_a5(test):
        return True
    return None


def _names_a5(node: ast.AST) -> bool:
    return any(_A5_SOC.search(text.lower()) for text in mentioned_texts(node))


def _span(node: ast.AST) -> Span:
    return (node.lineno, node.col_offset), (
        node.end_lineno or node.lineno,
        node.end_col_offset or 0,
    )


def _exits(body: list[ast.stmt]) -> bool:
    """A block that leaves its function or test (`return`, `raise`, `pytest.skip(...)`)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and (dotted(last.value.func) or [""])[-1] in ("skip", "exit")
    )


def _skip_decorator(dec: ast.AST) -> bool:
    """`@pytest.mark.skipif(not torch.cuda.is_available(), ...)` and friends."""
    return (
        isinstance(dec, ast.Call)
        and (dotted(dec.func) or [""])[-1] in ("skipif", "skipIf", "skipUnless")
        and any(is_platform_test(a) for a in dec.args)
    )


@dataclass
class CudaImport:
    """An import of `triton.language.extra.cuda` (or a member of it)."""

    node: ast.Import | ast.ImportFrom
    module: str  # the dotted module text to replace in a suggestion


def is_cuda_string(node: ast.AST | None) -> bool:
    """`"cuda"` or `"cuda:0"`: a CUDA device."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value == "cuda" or node.value.startswith("cuda:"))
    )


def is_cuda_fstring(node: ast.AST | None) -> bool:
    """`f"cuda:{rank}"`: a CUDA device picked by its index."""
    if not isinstance(node, ast.JoinedStr) or not node.values:
        return False
    head = node.values[0]
    return (
        isinstance(head, ast.Constant)
        and isinstance(head.value, str)
        and head.value.startswith("cuda:")
    )


def is_torch_device(call: ast.Call, torch: frozenset[str]) -> bool:
    """`torch.device(...)`, with `torch` under any local name."""
    parts = dotted(call.func) or []
    return parts[-2:] == ["torch", "device"] or (
        len(parts) == 2 and parts[0] in torch and parts[1] == "device"
    )


def in_torch_cuda(qual: str) -> bool:
    return qual == TORCH_CUDA or qual.startswith(TORCH_CUDA + ".")


@dataclass
class DeviceOrigin:
    """Where a name's CUDA device comes from: the literal, and the assigned values the
    name was followed through (the first one is the name's own assignment)."""

    literal: ast.expr
    through: list[ast.expr]


class PlatformFacts:
    """Platform dispatch and CUDA-only code (see the module doc)."""

    def __init__(self, core: CoreFacts, host: HostFacts):
        self._core = core
        self._host_values = host.host_values
        self._platform_spans_cache: list[Span] | None = None
        self._device_lookups_cache: list[tuple[ast.AST, str]] | None = None
        self._imports_cache: list[ast.Import | ast.ImportFrom] | None = None
        self._platform_hosts_cache: dict[int, bool] = {}
        self._platform_flags_cache: dict[int, frozenset[str]] = {}
        self._cuda_imports_cache: list[CudaImport] | None = None
        self._torch_names_cache: frozenset[str] | None = None
        self._names: HostNames | None = None
        self._torch_cuda_imports_cache: set[str] | None = None

    def platform_spans(self) -> list[Span]:
        """Source spans of host code that runs only on a tested platform: both sides and
        the test of an `if`/`elif`/conditional expression that tests the platform, the
        operands of `and` / `or` from a platform test on, the statements after an early exit
        under such a test, and functions skipped unless a platform is present. (Inside
        kernels, `kernel_platform_guarded` answers from the kernel's own branches.)"""
        if self._platform_spans_cache is None:
            self._scan_host_platform()
        return self._platform_spans_cache

    def device_property_lookups(self) -> list[tuple[ast.AST, str]]:
        """Host-code lookups of NVIDIA device properties (`props["multiprocessor_count"]`,
        `torch.cuda.get_device_properties(0).multi_processor_count`): (node, key)."""
        if self._device_lookups_cache is None:
            self._scan_host_platform()
        return self._device_lookups_cache

    def _scan_host_platform(self) -> None:
        """One walk over host code (kernel bodies skipped, their decorators kept) for
        `platform_spans` and `device_property_lookups`."""
        spans: list[Span] = []
        for stmt in all_statements(self._core.tree.body):
            for name in ("body", "orelse", "finalbody"):
                block = getattr(stmt, name, None)
                if isinstance(block, list):
                    spans += _after_early_exit(block)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _skip_decorator(d) for d in stmt.decorator_list
            ):
                spans.append(_span(stmt))
        spans += _after_early_exit(self._core.tree.body)
        kernels = {id(k.node) for k in self._core.kernels}
        lookups: list[tuple[ast.AST, str]] = []
        stack: list[ast.AST] = list(self._core.tree.body)
        while stack:
            node = stack.pop()
            kind = type(node)
            if id(node) in kernels:
                stack.extend(node.decorator_list)
                continue
            if kind in (ast.If, ast.IfExp, ast.While) and is_platform_test(node.test):
                spans.append(_span(node))
            elif kind is ast.BoolOp:  # `is_cuda() and X`, `not is_cuda() or X`
                tested = next((v for v in node.values if is_platform_test(v)), None)
                if tested is not None:
                    spans.append((_span(tested)[0], _span(node)[1]))
            elif kind is ast.Attribute and node.attr in NVIDIA_DEVICE_PROPERTIES:
                lookups.append((node, node.attr))
            elif (
                kind is ast.Subscript
                and isinstance(node.slice, ast.Constant)
                and node.slice.value in NVIDIA_DEVICE_PROPERTIES
            ):
                lookups.append((node, node.slice.value))
            for child in children(node):
                if type(child) not in LEAVES:
                    stack.append(child)
        lookups.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
        self._platform_spans_cache = spans
        self._device_lookups_cache = lookups

    def _imports(self) -> list[ast.Import | ast.ImportFrom]:
        """The module's import statements, nested ones included: statements only, not
        the walk over every host expression that the platform spans need."""
        if self._imports_cache is None:
            self._imports_cache = [
                stmt
                for stmt in all_statements(self._core.tree.body)
                if isinstance(stmt, (ast.Import, ast.ImportFrom))
            ]
        return self._imports_cache

    def platform_guarded(self, node: ast.AST) -> bool:
        """Whether `node` runs only on a platform the code tests for (see
        `platform_spans`): such code is dispatch, not a dependency on that platform."""
        start, end = _span(node)
        return any(s <= start and end <= e for s, e in self.platform_spans())

    def platform_only_host(self, host: HostFunction) -> bool:
        """Whether a host function is one platform's side of a dispatch: its name says
        it is the GPU path (`gpu_vector_add`, `run_cuda`), or every call of it in the
        module is under a platform test or inside such a function."""
        cache = self._platform_hosts_cache
        if id(host) not in cache:
            cache[id(host)] = False  # a recursive call does not vouch for itself
            if host.name != "<module>":
                calls = self._core.calls_to(host)
                cache[id(host)] = bool(_words(host.name) & GPU_WORDS) or (
                    bool(calls)
                    and all(
                        self.platform_guarded(call) or self.platform_only_host(caller)
                        for call, caller in calls
                    )
                )
        return cache[id(host)]

    def host_at(self, node: ast.AST) -> HostFunction:
        """The innermost host function (or the module) whose body holds `node`."""
        start, end = _span(node)
        best, best_start = self._core.hosts[0], (0, 0)
        for host in self._core.hosts[1:]:
            s, e = _span(host.node)
            if best_start <= s <= start and end <= e:
                best, best_start = host, s
        return best

    def platform_flags(self, fn: JitFunction) -> frozenset[str]:
        """Constexpr parameters of `fn` that a launch sets from a platform test
        (`USE_PDL=_supports_pdl()` where the helper returns False under
        `if device_name == "npu"`, `IS_CUDA=x.is_cuda`): a branch on one of them is
        compiled only on the platform the host selected."""
        cache = self._platform_flags_cache
        if id(fn) not in cache:
            flags = set()
            for binding in self._core.launches:
                if binding.callee is not fn:
                    continue
                for param, values in binding.args.items():
                    if param in fn.constexpr_params and any(
                        self._platform_dependent(v, binding.host) for v in values
                    ):
                        flags.add(param)
            cache[id(fn)] = frozenset(flags)
        return cache[id(fn)]

    def _platform_dependent(self, value: ast.AST, host) -> bool:
        """A host value that is a platform test, or that some platform test selects."""
        return is_platform_test(value) or any(
            is_platform_test(v) or any(is_platform_test(test) for test, _taken in guards)
            for v, guards in self._host_values(value, host)
        )

    def kernel_platform_guarded(self, fn: JitFunction, stmt: ast.stmt) -> bool:
        """Whether a kernel statement sits under a compile-time branch on a platform
        flag (see `platform_flags`) or a test of the platform itself."""
        flags = self.platform_flags(fn)
        return any(
            is_platform_test(branch.test) or frozen_names(branch.test) & flags
            for branch in fn.context(stmt).branches
        )

    @staticmethod
    def kernel_on_a5_only(fn: JitFunction, stmt: ast.stmt) -> bool:
        """Whether a kernel statement runs only where the SoC is the 910_95 (A5, the one
        whose triton-ascend build has fp8 and fp64): it sits on the side of a branch
        whose test holds only there (`if IS_910_95:`, the `else` of `if not is_a5:`)."""
        for branch in fn.context(stmt).branches:
            holds = _a5_test(branch.test)
            if holds is not None and holds == branch.taken:
                return True
        return False

    def cuda_language_imports(self) -> list[CudaImport]:
        """Imports of triton's CUDA-only language module, `triton.language.extra.cuda`
        (`from triton.language.extra.cuda import libdevice`, `import ....cuda.libdevice`,
        `from triton.language.extra import cuda`), anywhere in the module."""
        if self._cuda_imports_cache is not None:
            return self._cuda_imports_cache
        found: list[CudaImport] = []
        for stmt in self._imports():
            if isinstance(stmt, ast.Import):
                for item in stmt.names:
                    if item.name == CUDA_LANGUAGE or item.name.startswith(CUDA_LANGUAGE + "."):
                        found.append(CudaImport(stmt, CUDA_LANGUAGE))
                        break
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                mod = stmt.module
                if mod == CUDA_LANGUAGE or mod.startswith(CUDA_LANGUAGE + "."):
                    found.append(CudaImport(stmt, CUDA_LANGUAGE))
                elif mod == f"{LANGUAGE}.extra" and any(i.name == "cuda" for i in stmt.names):
                    found.append(CudaImport(stmt, f"{LANGUAGE}.extra"))
        self._cuda_imports_cache = found
        return found

    def torch_names(self) -> frozenset[str]:
        """Local names bound to the `torch` module (`import torch`, `import torch as th`)."""
        cached = self._torch_names_cache
        if cached is None:
            names = set()
            for stmt in self._imports():
                if isinstance(stmt, ast.Import):
                    for item in stmt.names:
                        if item.name == "torch" or item.name.startswith("torch."):
                            names.add(
                                item.asname if item.asname and item.name == "torch" else "torch"
                            )
            cached = self._torch_names_cache = frozenset(names)
        return cached

    # -- host-side names: torch's CUDA module and CUDA devices ---------------------------
    @property
    def names(self) -> HostNames:
        """What a name read in host code stands for (`scopes`), built on first use."""
        if self._names is None:
            self._names = HostNames(self._core)
        return self._names

    def torch_cuda_imports(self) -> set[str]:
        """Local names some import binds to torch's CUDA module or a member of it
        (`from torch import cuda`, `import torch.cuda as tc`): the scopes are consulted
        only for these."""
        found = self._torch_cuda_imports_cache
        if found is None:
            found = self._torch_cuda_imports_cache = set()
            for stmt in self._imports():
                if isinstance(stmt, ast.Import):
                    found.update(a.asname for a in stmt.names if a.asname and in_torch_cuda(a.name))
                elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                    found.update(
                        a.asname or a.name
                        for a in stmt.names
                        if in_torch_cuda(f"{stmt.module}.{a.name}")
                    )
        return found

    def torch_cuda(self, name: str, host) -> str | None:
        """The qualified name of a local name bound only to torch's CUDA module or a
        member of it: `cuda` after `from torch import cuda`, `tc` after
        `import torch.cuda as tc`, `Stream` after `from torch.cuda import Stream`."""
        found = self.names.bindings(name, host)
        if found is None:
            return None
        quals = {value.qual if isinstance(value, Imported) else None for value, _ in found[1]}
        qual = quals.pop() if len(quals) == 1 else None
        return qual if qual and in_torch_cuda(qual) else None

    def torch_cuda_call(self, func: ast.AST, host) -> tuple[list[str], list[str]] | None:
        """The dotted callee as written and as qualified, when it is in `torch.cuda`
        (`torch.cuda.synchronize`, `th.cuda.Stream`, `cuda.current_device` after
        `from torch import cuda`, `Stream` after `from torch.cuda import Stream`)."""
        parts = dotted(func) or []
        if not parts:
            return None
        if len(parts) >= 3 and parts[0] in self.torch_names() and parts[1] == "cuda":
            return parts, ["torch", *parts[1:]]
        if parts[0] not in self.torch_cuda_imports():
            return None
        qual = self.torch_cuda(parts[0], host)
        if qual is None:
            return None
        full = [*qual.split("."), *parts[1:]]
        return (parts, full) if len(full) >= 3 else None

    def cuda_device(self, expr: ast.AST, host, depth: int = 0) -> DeviceOrigin | None:
        """Where `expr` always names a CUDA device: a `"cuda"` / `"cuda:0"` /
        `f"cuda:{i}"` literal, `torch.device` of one, or a name every binding of which is
        one of these (followed through simple assignments, none under a platform test)."""
        if is_cuda_string(expr) or is_cuda_fstring(expr):
            return DeviceOrigin(expr, [])
        if depth >= _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Call) and is_torch_device(expr, self.torch_names()) and expr.args:
            return self.cuda_device(expr.args[0], host, depth + 1)
        if not isinstance(expr, ast.Name):
            return None
        found = self.names.bindings(expr.id, host)
        if found is None:
            return None
        scope, bindings = found
        origin = None
        through: list[ast.expr] = []
        for value, where in bindings:
            if not isinstance(value, ast.expr) or self.platform_guarded(where):
                return None  # not followed, or chosen by a platform test
            inner = self.cuda_device(value, scope.host, depth + 1)
            if inner is None:
                return None
            origin = origin or inner
            through += [value, *inner.through]
        return DeviceOrigin(origin.literal, through) if origin else None


def _after_early_exit(block: list[ast.stmt]) -> list[Span]:
    """`if not torch.cuda.is_available(): return` guards the rest of its block."""
    for i, stmt in enumerate(block):
        if (
            isinstance(stmt, ast.If)
            and is_platform_test(stmt.test)
            and _exits(stmt.body)
            and i + 1 < len(block)
        ):
            return [(_span(block[i + 1])[0], _span(block[-1])[1])]
    return []
