"""Stands in for triton-ascend's NPU driver (``triton.runtime.driver.active``).

Suites size their grids from it (``driver.active.utils.get_device_properties(dev)
["num_vectorcore"]``), ask it for the target (``get_current_target()``), the device
and stream, the device module (``torch.npu``) and a benchmarker.  The answers are those
of the chosen part (``targets.py``), in the shapes triton-ascend 3.2's ``NPUDriver``
and ``NPUUtils`` give them.  Kernels still run under triton's interpreter: nothing here
compiles or launches.
"""

from __future__ import annotations

import dataclasses

from ascend_lint.cpu_device.targets import Target


class DeviceUtils:
    """``driver.active.utils`` of the NPU driver."""

    def __init__(self, target: Target):
        self.target = target

    def get_device_properties(self, device=None) -> dict:
        return self.target.device_properties()

    def get_arch(self) -> str:
        return self.target.arch

    def get_aicore_num(self) -> int:
        return self.target.num_aicore

    def get_aivector_core_num(self) -> int:
        return self.target.num_vectorcore

    def set_device_limit(self, device, ty, val) -> None:
        pass


class CpuNpuDriver:
    """``triton.runtime.driver.active`` for a CPU that stands in for ``target`` (the
    installed one when none is given: triton makes its default driver without
    arguments)."""

    def __init__(self, target: Target | None = None):
        if target is None:
            from ascend_lint.cpu_device.install_record import installed

            target = installed().target
        self.target = target
        self.utils = DeviceUtils(target)

    @classmethod
    def is_active(cls) -> bool:
        return True

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget

        return GPUTarget("npu", self.target.arch, 0)

    def get_current_device(self) -> int:
        import torch

        return torch.npu.current_device()

    def set_current_device(self, device) -> None:
        import torch

        torch.npu.set_device(device)

    def get_current_stream(self, device=None) -> int:
        return 0

    def get_device_interface(self):
        import torch

        return torch.npu

    def get_benchmarker(self):
        # interpreter timings say nothing about the NPU: every config runs once, the
        # first is kept (the same choice the compile gate makes without a driver)
        from ascend_lint.cpu_device.autotune import run_each_config_once

        return run_each_config_once

    def get_empty_cache_for_benchmark(self):
        import torch

        # the size triton-ascend's driver flushes (192 MiB)
        return torch.empty(192 * 1024 * 1024 // 4, dtype=torch.int32)

    def clear_cache(self, cache) -> None:
        cache.zero_()


def install(target: Target) -> dict:
    """Make a ``CpuNpuDriver`` the active triton driver; returns what it replaced."""
    from triton.backends import backends
    from triton.runtime.driver import driver

    previous = driver.active
    if isinstance(previous, CpuNpuDriver):
        return {}
    driver.set_active(CpuNpuDriver(target))
    replaced = {"triton.runtime.driver.active": previous}
    # libraries probe for "one active driver" themselves (vLLM's HAS_TRITON counts the
    # backends whose driver is_active()); the NPU backend's own one is not, on a CPU
    for name, backend in backends.items():
        if getattr(backend.driver, "__name__", "") == "NPUDriver":
            replaced[f"triton.backends.backends[{name!r}].driver"] = backend.driver
            backends[name] = dataclasses.replace(backend, driver=CpuNpuDriver)
    return replaced
