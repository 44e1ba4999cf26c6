"""ASC019 masked-negative-offset: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC019.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC019"
NAME = "masked-negative-offset"
SUMMARY = (
    "a load/store whose mask keeps out negative offsets the address still uses: "
    "Ascend issues the masked-out access"
)
REFERENCES = ("shift_window.py::causal_conv1d_fwd_kernel",)
SHOWS = "tl.maximum("
