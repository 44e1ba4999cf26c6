"""ASC006 constexpr-or-runtime: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC006.md` (its documentation).
"""

CODE = "ASC006"
NAME = "constexpr-or-runtime"
SUMMARY = "`if FLAG or <runtime>` mixes a pointer-guarding constexpr with a runtime test; the dead side still compiles"
REFERENCES = ("cumsum.py::chunk_local_cumsum_kernel",)
SHOWS = "if HAS_INITIAL:"
