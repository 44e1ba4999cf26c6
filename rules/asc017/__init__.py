"""ASC017 unsupported-dtype: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC017.md` (its documentation).
"""

CODE = "ASC017"
NAME = "unsupported-dtype"
SUMMARY = "`tl.float64` or an fp8 dtype in a kernel: rejected by triton-ascend except on 910_95"
REFERENCES = ("core_grid.py::rms_norm_fwd_kernel",)
SHOWS = "dtype=tl.float32"
