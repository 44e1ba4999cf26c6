"""ASC020 chained-bool-op: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC020.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC020"
NAME = "chained-bool-op"
SUMMARY = "`and`/`or` with three or more operands in a kernel: rejected by the 3.2 code generator"
REFERENCES = ("shift_window.py::causal_conv1d_fwd_kernel",)
SHOWS = "(m_t & (o_src >= 0))"
