"""ASC007 late-int64-cast: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC007.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC007"
NAME = "late-int64-cast"
SUMMARY = (
    "`(a * b).to(tl.int64)` multiplies in int32 before the cast; `.to()` on a "
    "constexpr fails to compile"
)
REFERENCES = ("chunk_o.py::locate_chunk", "chunk_o.py::chunk_fwd_o_task")
SHOWS = "tl.cast("
