"""Corrected reference Triton-Ascend kernels that the ascend-lint rule docs point to.

Importing this package is cheap on purpose: it pulls in neither ``torch`` nor
``triton``, so ``ascend-lint rule ASC001`` can locate and print the kernel source
on a machine that has neither installed.  Import the submodules to run kernels:

* ``reference_kernels.chunk_o``: gated chunk output family (forward ``o``, backward
  ``dv`` local, backward ``dq/dk/dw`` and ``dg``) with the stride-1 gate layout
  (the G_T_CONTIG pattern) and the legacy layout kept only for ``HV == 1``.
* ``reference_kernels.core_grid``: host helpers for 1-D core-grid launches
  (``num_ai_cores`` / ``num_vector_cores``) and RMSNorm forward launched on them.
* ``reference_kernels.shift_window``: depthwise causal conv over time on the
  vector-core grid (clamped look-back offsets, 2-D tile indexing).
* ``reference_kernels.cumsum``: chunk-local cumulative sum of a gate with the tail
  chunk split into its own constexpr path.
* ``reference_kernels.torch_reference``: plain torch oracles for all of the above.
"""

from pathlib import Path

#: Directory holding the kernel sources; the linter reads them as text.
KERNEL_DIR = Path(__file__).resolve().parent

#: Kernel modules shipped in this package (source files, relative to KERNEL_DIR).
KERNEL_MODULES = ("chunk_o.py", "core_grid.py", "cumsum.py", "shift_window.py")

__all__ = ["KERNEL_DIR", "KERNEL_MODULES"]
