"""Stands in for ``triton.language.extra.cann.extension`` and
``triton.language.extra.cann.libdevice``, the Ascend language extensions of later
triton-ascend releases, absent from the triton-ascend 3.2.0 wheel (which has
``triton.language.extra.ascend.libdevice`` and the slice ops in ``triton.language``).

Kernels written against them (``tl.extra.cann.extension.extract_slice(...)``,
``from triton.language.extra.cann.libdevice import tanh``) run under the interpreter
and compile through triton-ascend 3.2's own implementations (``ascend_ops.py``).  An
extension with no CPU implementation (``sub_vec_id``: which of a cube core's two vector
cores runs the code, a distinction a program run by the interpreter does not have;
``fixpipe``, ``copy`` and the other explicit buffer moves) raises ``NotOnCpuError``
naming it when a kernel calls it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types

from ascend_lint.cpu_device import ascend_ops

PACKAGE = "triton.language.extra.cann"

# the public names of triton-ascend's cann.extension (third_party/ascend/language/cann/
# extension/__init__.py) and cann.libdevice, for those not implemented here to fail
# by name
EXTENSION_NAMES = (
    "builtin", "copy_from_ub_to_l1", "copy", "CORE", "debug_barrier", "fixpipe",
    "FixpipeDMAMode", "FixpipeDualDstMode", "FixpipePreQuantMode", "FixpipePreReluMode",
    "int64", "is_builtin", "MODE", "PIPE", "IteratorType", "sub_vec_id", "sub_vec_num",
    "sync_block_all", "sync_block_set", "sync_block_wait", "SYNC_IN_VF",
    "ascend_address_space", "scope", "custom", "custom_semantic", "register_custom_op",
    "atan2", "isfinited", "finitef", "parallel", "compile_hint", "multibuffer",
    "insert_slice", "extract_slice", "get_element", "sort", "flip", "cast", "index_put",
    "gather_out_to_ub", "scatter_ub_to_out", "index_select_simd",
)  # fmt: skip
LIBDEVICE_NAMES = (
    "reciprocal", "log1p", "relu", "isinf", "tan", "atan", "tanh", "ilogb", "ldexp", "pow",
    "isnan", "div_rz", "fast_dividef", "fast_expf", "fmod", "float_as_int", "atan2",
    "round", "acos", "sinh", "cosh", "acosh", "asinh", "atanh", "expm1", "nextafter",
    "hypot", "cyl_bessel_i0", "signbit", "erfinv", "gamma", "lgamma", "trunc",
    "nearbyint", "asin", "log10", "copysign",
)  # fmt: skip


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def build_extension() -> types.ModuleType:
    import triton.language as tl
    from triton.triton_patch.language import core as ascend_core

    module = types.ModuleType(f"{PACKAGE}.extension", __doc__)
    compiled = {name: getattr(ascend_core, name, None) for name in EXTENSION_NAMES}
    ops = {
        "extract_slice": ascend_ops.extract_slice_interp,
        "insert_slice": ascend_ops.insert_slice_interp,
        "get_element": ascend_ops.get_element_interp,
        "flip": ascend_ops.flip_interp,
        "sort": ascend_ops.sort_interp,
        "compile_hint": ascend_ops.nothing_interp,
        "multibuffer": ascend_ops.nothing_interp,
        "sync_block_set": ascend_ops.nothing_interp,
        "sync_block_wait": ascend_ops.nothing_interp,
        "sync_block_all": ascend_ops.sync_block_all_interp,
        "debug_barrier": ascend_ops.nothing_interp,
    }
    compiled["debug_barrier"] = tl.debug_barrier
    for name, interpret in ops.items():
        setattr(module, name, ascend_ops.dual(f"extension.{name}", interpret, compiled[name]))
    for name in ("atan2", "isfinited", "finitef"):
        setattr(module, name, ascend_ops.math_op(name, ascend_core))
    module.parallel = ascend_ops.parallel_interp if _interpreting() else ascend_core.parallel
    module.builtin = tl.core.builtin
    module.is_builtin = tl.core.is_builtin
    module.int64 = tl.int64
    why = {
        "sub_vec_id": "which of an AI core's two vector cores runs the code; the "
        "interpreter runs each program once, on no vector core",
        "sub_vec_num": "the number of vector cores per AI core of a mixed kernel",
    }
    for name in EXTENSION_NAMES:
        if not hasattr(module, name):
            reason = why.get(name, "an explicit Ascend buffer, core or pipe operation")
            setattr(
                module,
                name,
                ascend_ops.unavailable(f"extension.{name}", reason, compiled.get(name)),
            )
    module.__all__ = list(EXTENSION_NAMES)
    return module


def build_libdevice() -> types.ModuleType:
    from triton.language.extra.ascend import libdevice as ascend_libdevice

    module = types.ModuleType(f"{PACKAGE}.libdevice", __doc__)
    for name in LIBDEVICE_NAMES:
        if name in ascend_ops.MATH:
            op = ascend_ops.math_op(name, ascend_libdevice)
        else:
            op = ascend_ops.unavailable(
                f"libdevice.{name}", "no CPU implementation", getattr(ascend_libdevice, name, None)
            )
        setattr(module, name, op)
    module.__all__ = list(LIBDEVICE_NAMES)
    return module


class _CannFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the three module names, built on first import."""

    builders = {
        PACKAGE: lambda: _package(),
        f"{PACKAGE}.extension": build_extension,
        f"{PACKAGE}.libdevice": build_libdevice,
    }

    def find_spec(self, name, path=None, target=None):
        if name not in self.builders:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=name == PACKAGE)

    def create_module(self, spec):
        return self.builders[spec.name]()

    def exec_module(self, module):
        pass


def _package() -> types.ModuleType:
    package = types.ModuleType(PACKAGE, "triton-ascend's cann language extensions (CPU stand-in)")
    package.__path__ = []
    return package


def install() -> dict:
    """Make the modules importable and reachable as ``tl.extra.cann``; returns what was
    replaced (nothing when triton itself ships them)."""
    import importlib.util

    import triton.language.extra as extra

    if not any(isinstance(f, _CannFinder) for f in sys.meta_path):
        if importlib.util.find_spec(PACKAGE) is not None and PACKAGE not in sys.modules:
            return {}  # a triton-ascend that has them: keep its own
        sys.meta_path.insert(0, _CannFinder())
    package = importlib.import_module(PACKAGE)
    package.extension = importlib.import_module(f"{PACKAGE}.extension")
    package.libdevice = importlib.import_module(f"{PACKAGE}.libdevice")
    extra.cann = package
    return {PACKAGE: None}
