"""ASC026 core-type-mismatch: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC026.md` (its documentation).
"""

CODE = "ASC026"
NAME = "core-type-mismatch"
SUMMARY = (
    "a vector-only kernel on `num_aicore` programs (half the vector cores idle), a "
    "`tl.dot` kernel on `num_vectorcore`, or a literal core count above the target's"
)
REFERENCES = ("core_grid.py::rms_norm_fwd", "chunk_o.py::chunk_fwd_o")
SHOWS = ("num_vector_cores(", "num_ai_cores(")
