"""ASC003 runtime-branch-in-loop: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC003.md` (its documentation).
"""

CODE = "ASC003"
NAME = "runtime-branch-in-loop"
SUMMARY = "`if` on a runtime value inside a loop of a kernel (scalar work each iteration, both sides live in UB)"
REFERENCES = ("chunk_o.py::chunk_bwd_kernel_dqkwg",)
SHOWS = "tl.where("
