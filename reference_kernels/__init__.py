"""Corrected reference Triton-Ascend kernels that the ascend-lint rule docs point to.

The sources live in the repository's top-level ``reference_kernels/`` folder; the wheel
ships them as ``ascend_lint.reference_kernels``. Importing this package is cheap on
purpose: it pulls in neither ``torch`` nor ``triton``, so ``ascend-lint rule ASC001``
can print a kernel's source on a machine that has neither. Import a submodule to run
its kernels; without the kernel dependencies that import says which extra installs
them (``pip install "ascend-lint[kernels]"``).

* ``reference_kernels.chunk_o``: gated chunk output family (forward ``o``, backward
  ``dv`` local, backward ``dq/dk/dw/dg`` in one kernel) on 1-D core grids, with the
  stride-1 gate layout (the G_T_CONTIG pattern) and the legacy layout kept only for
  ``HV == 1``.
* ``reference_kernels.core_grid``: host helpers for 1-D core-grid launches
  (``num_ai_cores`` / ``num_vector_cores``) and RMSNorm forward launched on them.
* ``reference_kernels.shift_window``: depthwise causal conv over time on the
  vector-core grid (clamped look-back offsets, 2-D tile indexing).
* ``reference_kernels.segments``: segment starts and lengths from an inclusive
  cumulative count (the clamped index kept under a ``tl.where`` select).
* ``reference_kernels.cumsum``: chunk-local cumulative sum of a gate with the tail
  chunk split into its own constexpr path.
* ``reference_kernels.ub_rows``: a row softmax whose tile is sized by the UB model
  (``ub_block_size``) with a column loop for wide rows; it cannot overflow the UB.
* ``reference_kernels.torch_reference``: plain torch oracles for all of the above.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from pathlib import Path

#: Directory holding the kernel sources; the linter reads them as text.
KERNEL_DIR = Path(__file__).resolve().parent

#: Kernel modules shipped in this package (source files, relative to KERNEL_DIR): every
#: module of the folder but the torch oracles.
KERNEL_MODULES = tuple(
    sorted(
        p.name
        for p in KERNEL_DIR.glob("*.py")
        if not p.name.startswith("_") and p.name != "torch_reference.py"
    )
)

#: What running the kernels needs: the `kernels` extra of ascend-lint.
KERNEL_DEPENDENCIES = ("torch", "triton", "numpy")
INSTALL_HINT = 'pip install "ascend-lint[kernels]"'

__all__ = ["INSTALL_HINT", "KERNEL_DEPENDENCIES", "KERNEL_DIR", "KERNEL_MODULES"]


class _SaysWhichExtra(importlib.abc.Loader):
    """Runs a kernel module; a missing kernel dependency becomes an ImportError that
    names the extra to install instead of a bare `No module named 'torch'`."""

    def __init__(self, loader: importlib.abc.Loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        try:
            self._loader.exec_module(module)
        except ModuleNotFoundError as exc:
            missing = (exc.name or "").partition(".")[0]
            if missing not in KERNEL_DEPENDENCIES:
                raise
            raise ImportError(
                f"{module.__name__} runs Triton kernels and needs `{missing}`, which is not "
                f"installed: {INSTALL_HINT}",
                name=module.__name__,
            ) from exc

    def __getattr__(self, name):  # get_source, get_code, ... as the wrapped loader has them
        return getattr(self._loader, name)


class _KernelModuleFinder(importlib.abc.MetaPathFinder):
    """Finds this package's submodules (every module in the folder, whatever its
    name) the usual way, and hands them to `_SaysWhichExtra`."""

    def __init__(self, package: str):
        self.package = package

    def find_spec(self, name, path, target=None):
        if not name.startswith(self.package + ".") or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _SaysWhichExtra(spec.loader)
        return spec


if not any(getattr(f, "package", None) == __name__ for f in sys.meta_path):
    sys.meta_path.insert(0, _KernelModuleFinder(__name__))
