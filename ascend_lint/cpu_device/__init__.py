"""Run test suites written for Ascend NPUs on a CPU: ``install("A2")`` stands in for
the NPU and its software where a suite reaches for them.

One module per concern, each saying what it stands in for:

* ``torch_npu_stub``: ``torch_npu`` (when the real one cannot be imported), the ``npu``
  device mapped to the CPU, ``Tensor.npu()``, ``torch.ops.load_library``;
* ``npu_module``: ``torch.npu`` (devices, streams, events, memory statistics);
* ``driver``: triton-ascend's NPU driver (device properties: core counts, the target);
* ``launch_options``: triton-ascend's launch options (``multibuffer=`` ...) at an
  interpreted launch, and its ``libentry`` launch cache;
* ``cann_modules``: ``triton.language.extra.cann.extension`` / ``.cann.libdevice``;
* ``interpreter_gaps`` and ``ascend_ops``: what triton 3.2's interpreter lacks or gets
  wrong for Ascend kernels (bf16, negative-axis reductions, small ``tl.dot``, the
  slice ops, ``tl.gather`` ...);
* ``targets``: the parts (A2, A3, A5) and their core counts.

Kernels run under triton's interpreter (``TRITON_INTERPRET=1``, which ``install`` sets
when it is unset).  What it cannot run raises ``NotOnCpuError`` naming it.

This module imports neither torch nor triton until ``install`` is called, which imports
both.
"""

from __future__ import annotations

import os
import sys

from ascend_lint.cpu_device.errors import NotOnCpuError
from ascend_lint.cpu_device.install_record import InstallRecord, installed, remember
from ascend_lint.cpu_device.targets import DEFAULT_TARGET, TARGETS, Target, get_target

__all__ = [
    "DEFAULT_TARGET",
    "ENV_VAR",
    "TARGETS",
    "InstallRecord",
    "NotOnCpuError",
    "Target",
    "driver_utils",
    "install",
    "installed",
    "target_from_environment",
]

ENV_VAR = "ASCEND_LINT_CPU_DEVICE"
"""Names the target in a process the stand-in was installed in, for its subprocesses
(the compile gate's worker installs it at start-up from this)."""
NPU_ARCH_ENV = "ASCEND_LINT_NPU_ARCH"  # the arch the compile gate lowers for


def target_from_environment() -> str | None:
    value = os.environ.get(ENV_VAR, "").strip()
    return value or None


def install(target: str = DEFAULT_TARGET, *, compile_worker: bool = False) -> InstallRecord:
    """Stand in for an Ascend ``target`` (A2, A3, A5) on this CPU.  Idempotent: a second
    call for the same target returns the first call's record; another target is an
    error.  ``compile_worker``: for a process that compiles kernels instead of
    interpreting them (the compile gate's worker): no interpreter fills, no driver
    (the worker brings its own)."""
    chosen = get_target(target)
    previous = installed()
    if previous is not None:
        if previous.target != chosen:
            raise ValueError(
                f"the CPU stand-in is already installed for {previous.target.name}; "
                f"it cannot also stand in for {chosen.name}"
            )
        return previous
    if not compile_worker:
        _require_interpreter()
    record = InstallRecord(chosen, compile_worker)
    os.environ[ENV_VAR] = chosen.name
    os.environ.setdefault(NPU_ARCH_ENV, chosen.arch)
    from ascend_lint.cpu_device import torch_npu_stub

    record.replaced.update(torch_npu_stub.install(chosen))
    remember(record)
    # triton now, not on the suite's first import of it: an import hook of our own can be
    # bypassed (an assertion-rewriting hook placed in front of it claims every module),
    # and suites read the driver at import time.  TRITON_INTERPRET is already 1 here, so
    # triton's own @jit helpers are made for the interpreter.
    import triton  # noqa: F401

    _install_triton_side()
    return record


def _require_interpreter() -> None:
    value = os.environ.get("TRITON_INTERPRET")
    if value is None:
        if _triton_loaded():
            raise RuntimeError(
                "triton was imported before the CPU stand-in was installed and without "
                "TRITON_INTERPRET=1: its kernels would not run on the CPU; install the "
                "stand-in (or set TRITON_INTERPRET=1) before importing triton"
            )
        os.environ["TRITON_INTERPRET"] = "1"
    elif value != "1":
        raise RuntimeError(
            f"TRITON_INTERPRET={value} in the environment: the CPU stand-in runs kernels "
            "under triton's interpreter, which needs TRITON_INTERPRET=1"
        )


def _triton_loaded() -> bool:
    module = sys.modules.get("triton")
    return module is not None and hasattr(module, "jit")


def _install_triton_side() -> None:
    record = installed()
    from ascend_lint.cpu_device import cann_modules

    record.replaced.update(cann_modules.install())
    if record.compile_worker:
        return
    from ascend_lint.cpu_device import driver, interpreter_gaps, launch_options

    record.replaced.update(driver.install(record.target))
    record.replaced.update(launch_options.install())
    record.replaced.update(interpreter_gaps.install())


def driver_utils():
    """``driver.active.utils`` of the installed target (for the compile worker's own
    driver); AttributeError when the stand-in is not installed."""
    record = installed()
    if record is None:
        raise AttributeError("utils: the CPU stand-in is not installed")
    from ascend_lint.cpu_device.driver import DeviceUtils

    return DeviceUtils(record.target)
