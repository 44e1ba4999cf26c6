"""ASC013 per-call-constexpr: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC013.md` (its documentation).
"""

CODE = "ASC013"
NAME = "per-call-constexpr"
SUMMARY = (
    "a `tl.constexpr` bound to a token, batch or sequence count: a new compile for every new value"
)
REFERENCES = ("core_grid.py::rms_norm_fwd_kernel",)
SHOWS = "do_not_specialize="
