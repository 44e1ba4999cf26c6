"""ASC014 cuda-only-api: CUDA devices, torch.cuda, NVIDIA device properties and CUDA
libdevice in a module with Triton kernels or launches.

Host code spells CUDA in more ways than `torch.cuda.X(...)` and `device="cuda"`: through
imports (`from torch import cuda`, `from torch.cuda import Stream`) and through names
(`DEVICE = "cuda"` ... `device=DEVICE`). Both are followed by Python's scoping, over
simple bindings only; a name bound in any other way, or under a platform test, is not.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascend_lint.codemods import node_text, replace_node
from ascend_lint.diagnostics import Applicability, Fix
from ascend_lint.index import call_name, dotted
from ascend_lint.index.platform import CUDA_LANGUAGE, NVIDIA_DEVICE_PROPERTIES
from ascend_lint.index.syntax import all_params, all_statements, children, walk
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


def _is_cuda_fstring(node: ast.AST | None) -> bool:
    """`f"cuda:{rank}"`: a CUDA device picked by its index."""
    if not isinstance(node, ast.JoinedStr) or not node.values:
        return False
    head = node.values[0]
    return (
        isinstance(head, ast.Constant)
        and isinstance(head.value, str)
        and head.value.startswith("cuda:")
    )


def _is_torch_device(call: ast.Call, torch: frozenset[str]) -> bool:
    """`torch.device(...)`, with `torch` under any local name."""
    parts = dotted(call.func) or []
    return parts[-2:] == ["torch", "device"] or (
        len(parts) == 2 and parts[0] in torch and parts[1] == "device"
    )


# ----------------------------------------------------------------------------- names

TORCH_CUDA = "torch.cuda"
MAX_DEPTH = 8  # names followed through names


@dataclass(frozen=True)
class _Imported:
    """A name bound by an import: the qualified name it stands for."""

    qual: str


@dataclass
class _Scope:
    """The names one function (or the module) binds, each with every (value, statement)
    that binds it in that scope. Nested functions and class bodies are scopes of their
    own; what a lambda or comprehension binds is counted here, as not followed."""

    host: object  # the HostFunction of this scope
    # name -> [(value, where)]: the assigned expression, the imported module or member,
    # or None for a binding whose value is not followed (a parameter, a loop target,
    # `with ... as`, `+=`, unpacking, `def`, a lambda's or a comprehension's variable)
    bindings: dict[str, list[tuple[ast.expr | _Imported | None, ast.AST]]] = field(
        default_factory=dict
    )
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    @classmethod
    def scan(cls, host) -> _Scope:
        node = host.node
        scope = cls(host)
        body = node.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in all_params(node.args):
                scope._bind(arg.arg, None, node)
        stack: list[ast.AST] = list(reversed(body))
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                scope._bind(item.name, None, item)
                outer = list(item.decorator_list)
                if kind is not ast.ClassDef:
                    outer += [d for d in (*item.args.defaults, *item.args.kw_defaults) if d]
                stack.extend(outer)  # evaluated here; a walrus in one binds here
            elif kind is ast.Lambda:
                for arg in all_params(item.args):
                    scope._bind(arg.arg, None, item)
                stack.append(item.body)
            elif kind is ast.Assign:
                for target in item.targets:
                    scope._assign(target, item.value, item)
                stack.append(item.value)
            elif kind is ast.AnnAssign:
                scope._assign(item.target, item.value, item)
                if item.value is not None:
                    stack.append(item.value)
            elif kind is ast.Import:
                for alias in item.names:
                    if alias.asname:
                        scope._bind(alias.asname, _Imported(alias.name), item)
                    else:  # `import torch.cuda` binds `torch`
                        scope._bind(alias.name.split(".")[0], None, item)
            elif kind is ast.ImportFrom:
                for alias in item.names:
                    local = alias.asname or alias.name
                    known = item.module and not item.level and alias.name != "*"
                    value = _Imported(f"{item.module}.{alias.name}") if known else None
                    scope._bind(local, value, item)
            elif kind is ast.Global:
                scope.declared_global.update(item.names)
            elif kind is ast.Nonlocal:
                scope.declared_nonlocal.update(item.names)
            elif kind is ast.Name:
                if not isinstance(item.ctx, ast.Load):  # loop, `with`, `+=`, `del`, walrus
                    scope._bind(item.id, None, item)
            else:
                name = getattr(item, "name", None)  # `except E as name`, `case P(x) as name`
                if isinstance(name, str) and not isinstance(item, ast.alias):
                    scope._bind(name, None, item)
                rest = getattr(item, "rest", None)  # `case {**rest}`
                if isinstance(rest, str):
                    scope._bind(rest, None, item)
                stack.extend(reversed(children(item)))
        return scope

    def _bind(self, name: str, value: ast.expr | _Imported | None, where: ast.AST) -> None:
        self.bindings.setdefault(name, []).append((value, where))

    def _assign(self, target: ast.AST, value: ast.expr | None, stmt: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, value, stmt)
        elif isinstance(target, (ast.Tuple, ast.List)):
            same_shape = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
                target.elts
            )
            for i, elt in enumerate(target.elts):
                if same_shape and not isinstance(elt, ast.Starred):
                    self._assign(elt, value.elts[i], stmt)
                else:
                    for name in walk(elt):
                        if isinstance(name, ast.Name):
                            self._bind(name.id, None, stmt)
        # `x.attr = ...` and `x[i] = ...` bind no name


class _Names:
    """What a name read in host code stands for, by Python's scoping: the innermost
    enclosing function that binds it, else the module. Every binding of the name in that
    scope counts, wherever it is (a later `DEVICE = get_device()` makes `DEVICE` unknown)."""

    def __init__(self, index) -> None:
        self.index = index
        self.module = _Scope.scan(index.hosts[0])
        self._scopes: dict[int, _Scope] = {id(index.hosts[0]): self.module}
        self._chains: dict[int, list[_Scope]] = {}
        self._global_writes: set[str] | None = None

    def _scope(self, host) -> _Scope:
        scope = self._scopes.get(id(host))
        if scope is None:
            scope = self._scopes[id(host)] = _Scope.scan(host)
        return scope

    def _chain(self, host) -> list[_Scope]:
        """The function scopes around `host`, innermost first, then the module (class
        bodies are skipped, as Python skips them)."""
        chain = self._chains.get(id(host))
        if chain is None:
            around = []
            if host is not self.index.hosts[0]:
                start, end = _span(host.node)
                for other in self.index.hosts[1:]:
                    s, e = _span(other.node)
                    if s <= start and end <= e:
                        around.append((s, other))
            around.sort(key=lambda item: item[0], reverse=True)
            chain = [self._scope(h) for _s, h in around]
            chain.append(self.module)
            self._chains[id(host)] = chain
        return chain

    def bindings(
        self, name: str, host
    ) -> tuple[_Scope, list[tuple[ast.expr | _Imported | None, ast.AST]]] | None:
        """The scope that binds `name` where `host` reads it, with every binding there;
        None for a name bound nowhere in the module (a builtin, a star import) or one
        that a function rebinds with `nonlocal` / `global`."""
        for scope in self._chain(host):
            if scope is self.module or name in scope.declared_global:
                break
            if name in scope.declared_nonlocal:
                return None
            if name in scope.bindings:
                return scope, scope.bindings[name]
        if self._global_writes is None:
            self._global_writes = set()
            for other in self.index.hosts[1:]:
                self._global_writes |= self._scope(other).declared_global
        if name in self._global_writes or name not in self.module.bindings:
            return None
        return self.module, self.module.bindings[name]

    def torch_cuda(self, name: str, host) -> str | None:
        """The qualified name of a local name bound only to torch's CUDA module or a
        member of it: `cuda` after `from torch import cuda`, `tc` after
        `import torch.cuda as tc`, `Stream` after `from torch.cuda import Stream`."""
        found = self.bindings(name, host)
        if found is None:
            return None
        quals = {value.qual if isinstance(value, _Imported) else None for value, _ in found[1]}
        qual = quals.pop() if len(quals) == 1 else None
        return qual if qual and _in_torch_cuda(qual) else None


def _in_torch_cuda(qual: str) -> bool:
    return qual == TORCH_CUDA or qual.startswith(TORCH_CUDA + ".")


def _span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (node.lineno, node.col_offset), (
        node.end_lineno or node.lineno,
        node.end_col_offset or 0,
    )


@dataclass
class _Origin:
    """Where a name's CUDA device comes from: the literal, and the assigned values the
    name was followed through (the first one is the name's own assignment)."""

    literal: ast.expr
    through: list[ast.expr]


class _Module:
    """Per-module state of one check: the torch names and the name resolver."""

    def __init__(self, ctx: RuleContext) -> None:
        self.index = ctx.index
        self.torch = ctx.index.platform.torch_names()
        self._names: _Names | None = None
        # Local names some import binds to torch's CUDA module or a member of it; the
        # scopes are consulted only for these.
        self.cuda_imports: set[str] = set()
        for stmt in all_statements(ctx.index.tree.body):
            if isinstance(stmt, ast.Import):
                self.cuda_imports.update(
                    a.asname for a in stmt.names if a.asname and _in_torch_cuda(a.name)
                )
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                self.cuda_imports.update(
                    a.asname or a.name
                    for a in stmt.names
                    if _in_torch_cuda(f"{stmt.module}.{a.name}")
                )

    @property
    def names(self) -> _Names:
        if self._names is None:
            self._names = _Names(self.index)
        return self._names

    def torch_cuda_call(self, func: ast.AST, host) -> tuple[list[str], list[str]] | None:
        """The dotted callee as written and as qualified, when it is in `torch.cuda`
        (`torch.cuda.synchronize`, `th.cuda.Stream`, `cuda.current_device` after
        `from torch import cuda`, `Stream` after `from torch.cuda import Stream`)."""
        parts = dotted(func) or []
        if not parts:
            return None
        if len(parts) >= 3 and parts[0] in self.torch and parts[1] == "cuda":
            return parts, ["torch", *parts[1:]]
        if parts[0] not in self.cuda_imports:
            return None
        qual = self.names.torch_cuda(parts[0], host)
        if qual is None:
            return None
        full = [*qual.split("."), *parts[1:]]
        return (parts, full) if len(full) >= 3 else None

    def cuda_device(self, expr: ast.AST, host, depth: int = 0) -> _Origin | None:
        """Where `expr` always names a CUDA device: a `"cuda"` / `"cuda:0"` /
        `f"cuda:{i}"` literal, `torch.device` of one, or a name every binding of which is
        one of these (followed through simple assignments, none under a platform test)."""
        if _is_cuda_string(expr) or _is_cuda_fstring(expr):
            return _Origin(expr, [])
        if depth >= MAX_DEPTH:
            return None
        if isinstance(expr, ast.Call) and _is_torch_device(expr, self.torch) and expr.args:
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
            if not isinstance(value, ast.expr) or self.index.platform.platform_guarded(where):
                return None  # not followed, or chosen by a platform test
            inner = self.cuda_device(value, scope.host, depth + 1)
            if inner is None:
                return None
            origin = origin or inner
            through += [value, *inner.through]
        return _Origin(origin.literal, through) if origin else None


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
        module = _Module(ctx)
        # `torch.device("cuda")` findings by call, and the assigned values that reported
        # uses of a name were followed through: `DEVICE = torch.device("cuda")` is
        # reported where DEVICE is used, not also where it is assigned.
        device_calls: dict[int, Finding] = {}
        followed: set[int] = set()
        for call, host in index.host_calls:
            if id(call) not in reported:
                found = self._host_call(ctx, module, call, host, device_calls, followed)
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
        module: _Module,
        call: ast.Call,
        host,
        device_calls: dict[int, Finding],
        followed: set[int],
    ) -> list[Finding]:
        out: list[Finding] = []
        pending: list[ast.expr] = []  # values followed by this call's findings

        def device_use(node: ast.AST, value: ast.AST, where: str) -> Finding | None:
            """A device argument: a CUDA literal, or a name that always holds one."""
            if _is_cuda_string(value) or _is_cuda_fstring(value):
                return self._device_string(ctx, node, value, where)
            if isinstance(value, ast.Name):
                origin = module.cuda_device(value, host)
                if origin is not None:
                    pending.extend(origin.through)
                    return self._device_name(ctx, node, value, origin, where)
            return None

        parts = dotted(call.func) or []
        in_cuda = module.torch_cuda_call(call.func, host)
        if in_cuda is not None:
            written, qual = in_cuda
            if qual[-1] not in PROBES:
                # `torch` as this module spells it (`th.cuda.X` -> `th.npu.X`)
                spelled = (
                    written[0] if written[0] in module.torch else min(module.torch, default="torch")
                )
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
        elif _is_torch_device(call, module.torch):
            if call.args:
                found = device_use(call.args[0], call.args[0], "torch.device({})")
                if found is not None:
                    device_calls[id(call)] = found
                    out.append(found)
        elif isinstance(call.func, ast.Attribute) and call_name(call.func) == "cuda":
            if not (len(parts) == 2 and parts[0] in module.torch):
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
        self, ctx: RuleContext, node: ast.AST, name: ast.Name, origin: _Origin, where: str
    ) -> Finding:
        literal = node_text(ctx.source, origin.literal)
        source = origin.through[0] if origin.through else origin.literal
        value = node_text(ctx.source, source)
        via = "" if literal in value else f", which is {literal}"
        return Finding(
            node,
            f"`{where.format(name.id)}` names a CUDA device (`{name.id}` is `{value}`, line "
            f"{source.lineno}{via}); on Ascend use the device of the input tensors or an NPU "
            "device",
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
