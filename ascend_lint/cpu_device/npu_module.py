"""Stands in for ``torch.npu``, the device module ``torch_npu`` registers with torch.

One device, index 0, whose tensors are CPU tensors.  What suites call around their
kernels works: device selection, synchronisation (a no-op: the interpreter runs every
launch to completion before it returns), events and streams that time on the host
clock, memory statistics (numbers: nothing is allocated on a device, and the total is
the host's memory), seeding (torch's CPU generator, which ``device="npu"`` tensors use
here).  NPU graph capture cannot be run on CPU and says so.
"""

from __future__ import annotations

import contextlib
import os
import time
import types

from ascend_lint.cpu_device.errors import NotOnCpuError
from ascend_lint.cpu_device.targets import Target

DEVICE_COUNT = 1


def _index(device) -> int:
    """The device index of ``device`` (None, an int, "npu", "npu:0", torch.device)."""
    if device is None:
        return 0
    if isinstance(device, int):
        index = device
    else:
        text = str(device)
        kind, _, number = text.partition(":")
        if kind == "cpu":
            return 0  # an "npu" tensor's device here: the stand-in's one device
        if kind != "npu":
            raise ValueError(f"{device!r} is not an npu device")
        index = int(number) if number else 0
    if not 0 <= index < DEVICE_COUNT:
        raise ValueError(
            f"npu:{index} does not exist: the CPU stand-in has {DEVICE_COUNT} device (npu:0)"
        )
    return index


def _host_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


class Event:
    """A point on the host clock; ``elapsed_time`` in milliseconds, as torch reports it."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess=False):
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream=None) -> None:
        self._time = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Events were not created with enable_timing=True")
        if self._time is None or end_event._time is None:
            raise RuntimeError("elapsed_time needs both events recorded")
        return (end_event._time - self._time) * 1e3


class Stream:
    """A stream whose work is always done: launches complete before they return."""

    def __init__(self, device=None, priority: int = 0, **_kwargs):
        self.device_index = _index(device)
        self.priority = priority
        self.npu_stream = 0

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def wait_stream(self, stream) -> None:
        pass

    def wait_event(self, event) -> None:
        pass

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device_index == self.device_index

    def __hash__(self):
        return hash(("npu-stream", self.device_index))


def build(target: Target) -> types.ModuleType:
    """A ``torch.npu`` module for ``target``."""
    import torch

    module = types.ModuleType("torch.npu", __doc__)
    state = {"device": 0, "stream": Stream()}

    def is_available() -> bool:
        return True

    def device_count() -> int:
        return DEVICE_COUNT

    def current_device() -> int:
        return state["device"]

    def set_device(device) -> None:
        state["device"] = _index(device)

    @contextlib.contextmanager
    def device(index):
        previous = state["device"]
        state["device"] = _index(index)
        try:
            yield
        finally:
            state["device"] = previous

    def synchronize(device=None) -> None:
        _index(device)

    def current_stream(device=None) -> Stream:
        _index(device)
        return state["stream"]

    def default_stream(device=None) -> Stream:
        return current_stream(device)

    def set_stream(stream) -> None:
        state["stream"] = stream

    @contextlib.contextmanager
    def stream(chosen=None):
        previous = state["stream"]
        if chosen is not None:
            state["stream"] = chosen
        try:
            yield chosen
        finally:
            state["stream"] = previous

    def get_device_name(device=None) -> str:
        _index(device)
        return target.arch

    def get_device_properties(device=None):
        _index(device)
        return types.SimpleNamespace(
            name=target.arch,
            total_memory=_host_memory_bytes(),
            cube_core_num=target.num_aicore,
            vector_core_num=target.num_vectorcore,
            L2_cache_size=0,
        )

    def get_device_capability(device=None):
        _index(device)
        return None

    def mem_get_info(device=None):
        total = _host_memory_bytes()
        return total, total

    def _zero(device=None) -> int:
        _index(device)
        return 0

    def _nothing(*_args, **_kwargs) -> None:
        return None

    def memory_stats(device=None) -> dict:
        _index(device)
        return {
            "allocated_bytes.all.current": 0,
            "allocated_bytes.all.peak": 0,
            "reserved_bytes.all.current": 0,
            "reserved_bytes.all.peak": 0,
        }

    def manual_seed(seed: int) -> None:
        torch.manual_seed(seed)

    def graph_unavailable(*_args, **_kwargs):
        raise NotOnCpuError("NPU graph capture (torch.npu.NPUGraph / torch.npu.graph)")

    functions = {
        "is_available": is_available,
        "device_count": device_count,
        "current_device": current_device,
        "set_device": set_device,
        "device": device,
        "synchronize": synchronize,
        "current_stream": current_stream,
        "default_stream": default_stream,
        "set_stream": set_stream,
        "stream": stream,
        "Stream": Stream,
        "Event": Event,
        "get_device_name": get_device_name,
        "get_device_properties": get_device_properties,
        "get_device_capability": get_device_capability,
        "mem_get_info": mem_get_info,
        "memory_allocated": _zero,
        "max_memory_allocated": _zero,
        "memory_reserved": _zero,
        "max_memory_reserved": _zero,
        "memory_cached": _zero,
        "max_memory_cached": _zero,
        "memory_stats": memory_stats,
        "reset_peak_memory_stats": _nothing,
        "reset_max_memory_allocated": _nothing,
        "reset_accumulated_memory_stats": _nothing,
        "empty_cache": _nothing,
        "set_compile_mode": _nothing,
        "manual_seed": manual_seed,
        "manual_seed_all": manual_seed,
        "seed": torch.seed,
        "seed_all": torch.seed,
        "initial_seed": torch.initial_seed,
        "get_rng_state": lambda device=None: torch.get_rng_state(),
        "set_rng_state": lambda state, device=None: torch.set_rng_state(state),
        "is_bf16_supported": lambda: True,
        "is_initialized": lambda: True,
        "init": _nothing,
        "NPUGraph": graph_unavailable,
        "graph": graph_unavailable,
        "FloatTensor": torch.FloatTensor,
        "HalfTensor": torch.HalfTensor,
        "BFloat16Tensor": torch.BFloat16Tensor,
        "IntTensor": torch.IntTensor,
        "LongTensor": torch.LongTensor,
        "BoolTensor": torch.BoolTensor,
    }
    vars(module).update(functions)
    module.config = types.SimpleNamespace(allow_internal_format=False)
    module.matmul = types.SimpleNamespace(allow_hf32=False)
    module.conv = types.SimpleNamespace(allow_hf32=True)
    module.amp = torch.amp
    module.stand_in_target = target
    return module
