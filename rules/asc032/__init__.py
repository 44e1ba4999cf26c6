"""ASC032 int-vector-compare: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC032.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC032"
NAME = "int-vector-compare"
SUMMARY = (
    "an integer vector compare feeding `tl.where`, or an integer vector shift or mask, "
    "in a loop body: it runs on the Scalar unit on Ascend"
)
REFERENCES = ("row_ops.py::row_variance_kernel", "row_ops.py::nf4_dequant_kernel")
SHOWS = (".to(tl.float32) <", "tl.floor(")
