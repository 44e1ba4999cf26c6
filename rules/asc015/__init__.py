"""ASC015 gpu-only-memory-hint: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC015.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC015"
NAME = "gpu-only-memory-hint"
SUMMARY = "`cache_modifier`/`eviction_policy`/`volatile` or atomic `sem`/`scope`: GPU hints with no effect on Ascend"
REFERENCES = ("core_grid.py::rms_norm_fwd_kernel",)
SHOWS = "other=0.0)"
