"""ASC023 grid-misses-work: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC023.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC023"
NAME = "grid-misses-work"
SUMMARY = (
    "a launch grid that misses work: a program-id axis it lacks, a core-count grid over "
    "a one-tile-per-program kernel, or a task index with no bound check"
)
REFERENCES = ("shift_window.py::causal_conv1d_fwd_kernel",)
SHOWS = "for task in range("
