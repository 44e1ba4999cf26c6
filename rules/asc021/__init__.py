"""ASC021 transposed-batch-base: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC021.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC021"
NAME = "transposed-batch-base"
SUMMARY = (
    "`g + bos + i_h * T` on a tensor stored [B, HV, T], reached on the fixed-length path: "
    "wrong rows for every batch but the first"
)
REFERENCES = ("chunk_o.py::gate_base",)
SHOWS = "* HV * T_seq"
