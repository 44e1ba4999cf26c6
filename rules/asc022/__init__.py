"""ASC022 ub-overflow: here its identity (code, name, one-line summary, and the reference
functions that show its fix, read without importing the check); `rule.py` (the check and
its VALID/INVALID examples), `ASC022.md` (its documentation).
"""

CODE = "ASC022"
NAME = "ub-overflow"
SUMMARY = (
    "the tiles one program keeps live at once need more Unified Buffer than the "
    "target's vector core has: the compiler rejects it with `ub overflow`"
)
REFERENCES = ("ub_rows.py::softmax_blocks", "ub_rows.py::softmax_fwd_kernel")
SHOWS = ("ub_block_size(target)", "range(0, N, BN)")
