"""A memory sanitizer for Triton kernels run under triton-ascend's interpreter.

Every lane of every load, store and atomic a launched kernel performs (its ``@triton.jit``
helpers included, block pointers with their boundary checks) is checked against the
whole storage of the tensor argument its pointer derives from, and every stored element
against the program of the same launch that stored it first.  Findings (``findings``):
``out-of-bounds``, ``masked-out-of-bounds`` (the masked-out lanes Ascend still issues;
which ones: ``masks``) and ``race``; each names the kernel, the access line, the tensor,
the program and the first offending element, aggregated per (kind, kernel, line, tensor)
with counts.  Stores that only repeat the bytes another program of the launch stored are
counted apart (``sanitizer.duplicates``), not findings.

The pytest plugin turns it on with ``--ascend-sanitize``; used directly::

    from ascend_lint.sanitizer import Sanitizer

    with Sanitizer() as sanitizer:
        kernel[grid](x, y, n, BLOCK=64)
    for finding in sanitizer.findings.values():
        print("\\n".join(finding.lines()))

Nothing here imports triton until ``install()``: the kernels must already run under
the interpreter (``TRITON_INTERPRET=1`` before they were decorated).
"""

from ascend_lint.sanitizer.findings import (
    DUPLICATE_STORE,
    KINDS,
    MASKED_OUT_OF_BOUNDS,
    OUT_OF_BOUNDS,
    RACE,
    DuplicateStores,
    Finding,
    Unattributed,
)

__all__ = [
    "DUPLICATE_STORE",
    "KINDS",
    "MASKED_LANES_POLICY",
    "MASKED_OUT_OF_BOUNDS",
    "OUT_OF_BOUNDS",
    "RACE",
    "DuplicateStores",
    "Finding",
    "Sanitizer",
    "Unattributed",
]


def __getattr__(name: str):
    # the checks need numpy; the pytest plugin reads the kinds without paying for it
    if name == "Sanitizer":
        from ascend_lint.sanitizer.instrument import Sanitizer

        return Sanitizer
    if name == "MASKED_LANES_POLICY":
        from ascend_lint.sanitizer.checks import MASKED_LANES_POLICY

        return MASKED_LANES_POLICY
    raise AttributeError(name)
