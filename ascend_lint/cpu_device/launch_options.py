"""Lets triton's interpreter accept triton-ascend's launch options.

On an NPU, ``kernel[grid](..., multibuffer=True)`` passes ``multibuffer`` (and
``enable_auto_bind_sub_block``, ``sync_solver``, ``tile_mix_vector_loop`` ... every field
of triton-ascend's ``NPUOptions``, and the options ``triton.Config`` carries) to the
compiler.  triton 3.2's interpreter drops only the upstream options (``num_warps`` ...)
and hands the rest to the kernel, which fails with "unexpected keyword argument".  The
wrapper drops an option before the interpreter sees it, unless the kernel has a
parameter of that name; unknown keywords still fail as they would on the NPU.  The
compile gate, which wraps the launch on top of this, still sees and compiles them.
"""

from __future__ import annotations

import functools
import inspect

_WRAPPED = "_ascend_cpu_device_launch_options"


def option_names() -> frozenset[str]:
    """Every launch option triton-ascend's compiler accepts."""
    import dataclasses

    from triton.backends.ascend.compiler import NPUOptions
    from triton.runtime.autotuner import Config

    names = {field.name for field in dataclasses.fields(NPUOptions)}
    names.update(name for name in vars(Config({})) if name not in ("kwargs", "pre_hook"))
    names.update(("stream", "debug"))
    names.discard("grid")
    return frozenset(names)


@functools.lru_cache(maxsize=1024)
def _parameters(fn) -> frozenset[str]:
    return frozenset(inspect.signature(fn).parameters)


class InterpretedLibEntry:
    """``LibEntry`` for kernels run by the interpreter: a launch goes straight to the
    wrapped kernel (an interpreted function, an autotuner, heuristics)."""

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = getattr(fn, "arg_names", None)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def run(self, *args, grid, warmup=False, **kwargs):
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)


def _install_libentry() -> dict:
    try:
        import triton.runtime.libentry as libentry_module
    except ImportError:  # a triton without it
        return {}
    if getattr(libentry_module.libentry, _WRAPPED, False):
        return {}
    original = libentry_module.libentry

    def libentry():
        def decorator(fn):
            return InterpretedLibEntry(fn)

        return decorator

    setattr(libentry, _WRAPPED, True)
    libentry_module.libentry = libentry
    return {"triton.runtime.libentry.libentry": original}


def install() -> dict:
    from triton.runtime import interpreter

    executor = interpreter.GridExecutor
    if getattr(executor.__call__, _WRAPPED, False):
        return {}
    original = executor.__call__
    options = option_names()

    def __call__(self, *args, **kwargs):
        dropped = options.difference(_parameters(self.fn)).intersection(kwargs)
        if dropped:
            kwargs = {k: v for k, v in kwargs.items() if k not in dropped}
        return original(self, *args, **kwargs)

    setattr(__call__, _WRAPPED, True)
    __call__.__wrapped__ = original
    executor.__call__ = __call__
    replaced = {"triton.runtime.interpreter.GridExecutor.__call__": original}
    replaced.update(_install_libentry())
    return replaced
