"""ASC004 launch-num-warps-stages: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC004.md` (its documentation), `fix.py` (its
fix), `snapshots/` (the fixed output of its examples).
"""

CODE = "ASC004"
NAME = "launch-num-warps-stages"
SUMMARY = "`num_warps`/`num_stages` at a launch or in a triton.Config: no effect on Ascend, but recompiles"
REFERENCES = ("chunk_o.py::chunk_fwd_o",)
SHOWS = "BT=BT"
