"""ASC011 inplace-pointer-advance-in-loop: here its identity (code, name, one-line summary,
and the reference functions that show its fix, read without importing the check);
`rule.py` (the check and its VALID/INVALID examples), `ASC011.md` (its documentation).
"""

CODE = "ASC011"
NAME = "inplace-pointer-advance-in-loop"
SUMMARY = "`ptr += step` inside a loop: loop-carried pointers have miscompiled (NaN) on Ascend"
REFERENCES = ("chunk_o.py::chunk_fwd_o_task",)
SHOWS = "tl.make_block_ptr(q_base,"
