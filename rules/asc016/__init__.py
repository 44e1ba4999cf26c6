"""ASC016 dot-precision-option: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC016.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC016"
NAME = "dot-precision-option"
SUMMARY = '`tl.dot` with `allow_tf32=True`, `input_precision="tf32"` or a half `out_dtype`: rejected by triton-ascend'
REFERENCES = ("chunk_o.py::chunk_fwd_o_task",)
SHOWS = 'input_precision="ieee"'
