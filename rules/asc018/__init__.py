"""ASC018 vector-int-div-mod: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC018.md` (its documentation).
"""

CODE = "ASC018"
NAME = "vector-int-div-mod"
SUMMARY = "`//` or `%` of a block index by a runtime divisor: a scalar loop per element on Ascend"
REFERENCES = ("shift_window.py::causal_conv1d_fwd_kernel",)
SHOWS = "[:, None] * D"
