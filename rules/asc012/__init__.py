"""ASC012 grid-over-core-count: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC012.md` (its documentation).
"""

CODE = "ASC012"
NAME = "grid-over-core-count"
SUMMARY = (
    "a launch grid sized by a token/row/chunk count for a kernel with no task loop: "
    "Ascend has a few dozen cores"
)
REFERENCES = ("core_grid.py::rms_norm_fwd", "core_grid.py::rms_norm_fwd_kernel")
SHOWS = ("num_vector_cores(", "for task in range(")
