"""ASC002 stale-pointer-math: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC002.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC002"
NAME = "stale-pointer-math"
SUMMARY = "legacy [B, T, HV] pointer math applied to a tensor the host stored transposed [B, HV, T]"
REFERENCES = ("chunk_o.py::gate_base", "chunk_o.py::gate_block_ptr")
SHOWS = ("i_h * T_seq", "(T,), (1,)")
