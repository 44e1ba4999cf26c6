"""``@triton.autotune`` on a machine without an NPU or a GPU (the test process and the worker).

triton-ascend 3.2.0's ``Autotuner.__init__`` asks the active driver for its benchmarker
(``driver.active.get_benchmarker()``) when the decorator gives none.  Under the
interpreter on CPU there is no active driver, so every module with an autotuned kernel
fails to import ("0 active drivers").  With ``--ascend-compile`` on, an autotuner made
without a driver gets ``run_each_config_once`` instead: the first launch of each tuning
key runs every (pruned) config once under the interpreter, so that each config's
specialisation is launched, recorded and compiled, and then keeps the first config that
can run on the NPU (the gate tells: a config the front end rejects or that overflows the
Unified Buffer is one triton-ascend's autotuner drops), as interpreter timings would pick
one by noise.  The test's result comes from that config.  A machine with a driver (an NPU, a GPU) keeps triton's own benchmarker.

The patch is applied when ``triton.runtime.autotuner`` is imported and not before, so
this module never imports triton itself (the kernel tests must set ``TRITON_INTERPRET``
first).
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Callable

AUTOTUNER_MODULE = "triton.runtime.autotuner"
_PATCHED = "_ascend_compile_cpu_benchmarker"


# Set by the compile gate: did the launch just made compile to something that cannot run
# on the NPU (rejected by the front end, or over the Unified Buffer)?
last_launch_cannot_run: Callable[[], bool] | None = None
_tuning = 0  # > 0 while a config runs for the autotuner


def tuning() -> bool:
    """Is the launch being made one config's trial run for the autotuner?"""
    return _tuning > 0


def run_each_config_once(kernel_call, quantiles=None, **_options):
    """A benchmarker that runs the config once and reports it as free, so every config
    ties and the autotuner's ``min`` keeps the first, except a config the compile gate
    found cannot run on the NPU: triton-ascend's autotuner drops a config that fails to
    compile, so it costs infinity here too, and the next one is kept."""
    global _tuning
    _tuning += 1
    try:
        kernel_call()
    finally:
        _tuning -= 1
    judge = last_launch_cannot_run
    cost = float("inf") if judge is not None and judge() else 0.0
    if quantiles is None:
        return cost
    return [cost] * len(quantiles)


def install() -> None:
    """Patch the autotuner now if triton has loaded it, else as soon as it is imported."""
    module = sys.modules.get(AUTOTUNER_MODULE)
    if module is not None:
        _patch(module)
        return
    if not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())


def _driver_available() -> bool:
    from triton.runtime.driver import driver

    try:
        driver.active.get_benchmarker  # noqa: B018 (the lookup creates the driver)
    except (RuntimeError, AttributeError):
        return False
    return True


def _patch(module) -> None:
    autotuner = module.Autotuner
    if getattr(autotuner.__init__, _PATCHED, False):
        return
    original = autotuner.__init__

    def __init__(self, *args, **kwargs):
        deprecated = any(kwargs.get(k) for k in ("warmup", "rep", "use_cuda_graph"))
        if kwargs.get("do_bench") is None and not deprecated and not _driver_available():
            kwargs["do_bench"] = run_each_config_once
            _interpreter_accepts_config_options(module.Config)
        original(self, *args, **kwargs)

    setattr(__init__, _PATCHED, True)
    __init__.__wrapped__ = original
    autotuner.__init__ = __init__


def _interpreter_accepts_config_options(config_class) -> None:
    """triton-ascend's ``Config.all_kwargs()`` hands the launch options it adds
    (``num_buffers_warp_spec``, ``force_simt_template``, ``multibuffer`` ...) to every
    autotuned launch, and its interpreter drops only the upstream ones (``num_warps``,
    ``num_stages`` ...), so each config's launch fails with "unexpected keyword
    argument".  Add the rest to the interpreter's list of launch options it drops.  The
    gate still records them: they reach the compiler in the worker as on the NPU."""
    from triton.runtime import interpreter

    reserved = getattr(interpreter, "RESERVED_KWS", None)
    if not isinstance(reserved, list):
        return
    options = [name for name in vars(config_class({})) if name not in ("kwargs", "pre_hook")]
    reserved.extend(name for name in options if name not in reserved)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of the autotuner module to patch it."""

    def find_spec(self, name, path=None, target=None):
        if name != AUTOTUNER_MODULE:
            return None
        sys.meta_path.remove(self)
        try:
            import importlib.util

            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module):
            original_exec(module)
            _patch(module)

        loader.exec_module = exec_module
        return spec
