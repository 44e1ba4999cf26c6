"""ASC027 data-dependent-gather: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC027.md` (its documentation).
"""

CODE = "ASC027"
NAME = "data-dependent-gather"
SUMMARY = (
    "a load addressed lane by lane by values loaded in the same kernel "
    "(`tl.load(x + tl.load(idx + o))`): a scalar loop per element on Ascend"
)
REFERENCES = ("row_ops.py::nf4_dequant_kernel",)
SHOWS = "tl.gather("
