"""ASC010 dot-lhs-reuse: here its identity (code, name, one-line summary, and the reference
functions that show its fix, read without importing the check); `rule.py` (the check and
its VALID/INVALID examples), `ASC010.md` (its documentation).
"""

CODE = "ASC010"
NAME = "dot-lhs-reuse"
SUMMARY = "a `tl.dot` lhs tile read again later: Ascend's matmul may overwrite its lhs in UB"
REFERENCES = ("chunk_o.py::chunk_fwd_o_task",)
SHOWS = "= b_q + 0.0"
