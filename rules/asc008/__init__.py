"""ASC008 int64-block-ptr-offset: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC008.md` (its documentation).
"""

CODE = "ASC008"
NAME = "int64-block-ptr-offset"
SUMMARY = "int64 value as a `make_block_ptr` offset or block shape: rejected by the Ascend compiler"
REFERENCES = ("chunk_o.py::chunk_fwd_o_task",)
SHOWS = "(i_t * BT, i_k * BK)"
