"""Stands in for ``torch_npu`` (Ascend's PyTorch adapter) when the real one cannot be
imported: the ``npu`` device name, tensors created or moved to ``npu`` landing on the
CPU, the ``torch.npu`` device module (``npu_module.py``), ``Tensor.npu()``, and
``torch.ops.load_library`` tolerating the custom-op library an NPU build ships.

``device="npu"`` is mapped by a torch function mode, the mechanism torch offers for
rewriting the arguments of every torch call.  Torch keeps that mode per thread: the
mapping holds in the thread that installed it (pytest's), not in threads a test starts.
Tensors so made report ``device.type == "cpu"``.

Ascend's own operators (``torch_npu.npu_rms_norm`` ...) are NPU kernels with no CPU
implementation here: the names exist, so modules that import them still import, and a
call raises ``NotOnCpuError`` naming the operator.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
import types
import warnings

from ascend_lint.cpu_device import npu_module
from ascend_lint.cpu_device.errors import NotOnCpuError
from ascend_lint.cpu_device.targets import Target

DEVICE_NAME = "npu"
_NPU_DEVICE_TEXT = re.compile(r"npu(:\d+)?$")


def real_torch_npu_problem() -> str | None:
    """None when the real ``torch_npu`` imports; else why it cannot be used."""
    if "torch_npu" in sys.modules and not getattr(sys.modules["torch_npu"], "_stand_in", False):
        return None
    if importlib.util.find_spec("torch_npu") is None:
        return "torch_npu is not installed"
    try:
        importlib.import_module("torch_npu")
    except Exception as exc:  # without the CANN libraries its import fails, in various ways
        for name in [m for m in sys.modules if m == "torch_npu" or m.startswith("torch_npu.")]:
            del sys.modules[name]
        return f"torch_npu does not import: {type(exc).__name__}: {exc}"
    return None


def _to_cpu(value):
    import torch

    if isinstance(value, torch.device):
        return torch.device("cpu") if value.type == DEVICE_NAME else value
    if isinstance(value, str) and _NPU_DEVICE_TEXT.match(value):
        return "cpu"
    return value


def _make_mode_class():
    import torch
    from torch.overrides import TorchFunctionMode

    class NpuOnCpuMode(TorchFunctionMode):
        """Rewrites ``npu`` devices among a torch call's arguments to ``cpu``."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if kwargs:
                kwargs = {k: _to_cpu(v) for k, v in kwargs.items()}
                if kwargs.get("pin_memory"):
                    kwargs["pin_memory"] = False  # pinned host memory needs an accelerator
            else:
                kwargs = {}
            args = tuple(_to_cpu(a) for a in args)
            return func(*args, **kwargs)

    del torch
    return NpuOnCpuMode


_device_mode = None  # the installed NpuOnCpuMode


def restore_device_mode() -> bool:
    """Put the npu -> cpu mode back on this thread's torch function mode stack if
    something took it off; True when it had to.  ``torch.set_default_device`` can: it
    exits the previous default-device mode before parsing the new device, so after a
    call with a device that does not parse, the next call exits that mode again and
    pops the stack's bottom, which is this mode.  On an NPU no mode maps the device, so
    the tests after such a call are unaffected: here each test starts with it restored."""
    if _device_mode is None:
        return False
    from torch.overrides import _get_current_function_mode_stack

    if any(mode is _device_mode for mode in _get_current_function_mode_stack()):
        return False
    _device_mode.__enter__()
    return True


def _make_generator_class():
    """``torch.Generator`` whose ``npu`` device is the CPU: the constructor is no torch
    call the mode sees, and torch wants a registered PrivateUse1 hooks interface to make
    a generator for ``npu``.  A subclass maps the device; ``isinstance`` still holds for
    every torch generator (``torch.default_generator`` ...)."""
    import torch

    base = torch.Generator

    class _AnyTorchGenerator(type(base)):
        def __instancecheck__(cls, obj):
            return isinstance(obj, base)

        def __subclasscheck__(cls, subclass):
            return issubclass(subclass, base)

    class Generator(base, metaclass=_AnyTorchGenerator):
        __doc__ = base.__doc__

        def __new__(cls, device="cpu"):
            return super().__new__(cls, _to_cpu(device))

    Generator.__module__ = "torch"
    return Generator


def _unavailable_operator(name: str):
    def operator(*_args, **_kwargs):
        raise NotOnCpuError(f"torch_npu.{name}", "an Ascend operator (an NPU kernel)")

    operator.__name__ = name
    operator.__qualname__ = name
    return operator


def _build_torch_npu(npu: types.ModuleType, problem: str) -> types.ModuleType:
    import torch

    module = types.ModuleType("torch_npu", __doc__)
    module._stand_in = True
    module.stand_in_reason = problem
    module.npu = npu
    module.__version__ = torch.__version__.split("+")[0] + "+cpustandin"
    module.__path__ = []  # a package, so that `import torch_npu.npu` finds the submodule
    profiler = types.ModuleType("torch_npu.profiler")

    def _profiler_getattr(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotOnCpuError(f"torch_npu.profiler.{name}", "the NPU profiler")

    profiler.__getattr__ = _profiler_getattr
    module.profiler = profiler

    def __getattr__(name: str):
        if name.startswith("_"):
            raise AttributeError(f"module 'torch_npu' (CPU stand-in) has no attribute {name!r}")
        operator = _unavailable_operator(name)
        setattr(module, name, operator)
        return operator

    module.__getattr__ = __getattr__
    return module


class _TolerantLoadLibrary:
    """``torch.ops.load_library`` that warns, instead of raising, for a library that is
    missing or does not load (an NPU build's custom operators): its operators stay
    undefined, and a call to one fails with torch's own error naming it."""

    def __init__(self, original):
        self.original = original

    def __call__(self, path):
        try:
            return self.original(path)
        except OSError as exc:
            warnings.warn(
                f"ascend-lint CPU stand-in: custom-operator library {path} not loaded ({exc})",
                stacklevel=2,
            )
            return None


def install(target: Target) -> dict:
    """Register the ``npu`` device and ``torch_npu``; returns what was replaced."""
    import torch

    replaced: dict = {}
    problem = real_torch_npu_problem()
    if problem is None:
        replaced["torch_npu"] = "kept the real torch_npu"
        return replaced
    current = torch._C._get_privateuse1_backend_name()
    if current != DEVICE_NAME:
        if current not in ("privateuse1", "privateuseone"):
            raise RuntimeError(
                f"torch's extension device is already named {current!r}; the CPU stand-in "
                "needs it for 'npu'"
            )
        torch.utils.rename_privateuse1_backend(DEVICE_NAME)
        replaced["privateuse1 backend name"] = current
    npu = getattr(torch, DEVICE_NAME, None)
    if npu is None:
        npu = npu_module.build(target)
        torch._register_device_module(DEVICE_NAME, npu)
        replaced["torch.npu"] = None
    if not hasattr(torch.Tensor, "npu"):

        def tensor_npu(self, device=None, non_blocking=False, **_kwargs):
            npu_module._index(device)
            return self

        torch.Tensor.npu = tensor_npu
        replaced["torch.Tensor.npu"] = None
    if not isinstance(torch.ops.load_library, _TolerantLoadLibrary):
        replaced["torch.ops.load_library"] = torch.ops.load_library
        torch.ops.load_library = _TolerantLoadLibrary(torch.ops.load_library)
    if not getattr(torch.Generator, "_npu_on_cpu", False):
        replaced["torch.Generator"] = torch.Generator
        torch.Generator = _make_generator_class()
        torch.Generator._npu_on_cpu = True
    global _device_mode
    _device_mode = _make_mode_class()()
    _device_mode.__enter__()  # stays on for the life of the process (this thread)
    replaced["torch function mode"] = None
    stand_in = _build_torch_npu(npu, problem)
    for name, module in (
        ("torch_npu", stand_in),
        ("torch_npu.npu", npu),
        ("torch_npu.profiler", stand_in.profiler),
    ):
        # a spec, so that importlib.util.find_spec("torch_npu") (a common "is the NPU
        # stack here" probe) answers instead of raising
        if getattr(module, "__spec__", None) is None:
            module.__spec__ = importlib.machinery.ModuleSpec(
                name, None, origin="ascend-lint CPU stand-in", is_package=name == "torch_npu"
            )
        sys.modules[name] = module
    replaced["torch_npu"] = problem
    return replaced
