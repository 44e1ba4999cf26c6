"""ASC028 unaligned-innermost-dim: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC028.md` (its documentation).
"""

CODE = "ASC028"
NAME = "unaligned-innermost-dim"
SUMMARY = (
    "a 2-D tile whose row (innermost dimension) is not a multiple of 32 bytes where the "
    "sizes are visible: the DMA rounds into the next row"
)
REFERENCES = ("row_ops.py::row_variance_kernel", "row_ops.py::row_variance")
SHOWS = ("D_PAD", "padded_pitch(")
