"""ASC030 aliased-pointer-args: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC030.md` (its documentation).
"""

CODE = "ASC030"
NAME = "aliased-pointer-args"
SUMMARY = (
    "one tensor passed to two pointer parameters of a launch, written through one and "
    "read back (or written) through the other: the compiler assumes they do not alias"
)
REFERENCES = ("ub_rows.py::softmax_fwd_kernel",)
SHOWS = "y + p_x"
