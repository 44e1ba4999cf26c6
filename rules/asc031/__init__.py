"""ASC031 ascend-api-limit: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC031.md` (its documentation).
"""

CODE = "ASC031"
NAME = "ascend-api-limit"
SUMMARY = (
    "a call triton-ascend 3.2 rejects or miscompiles although upstream Triton runs it "
    "(one table: integer vectors cast to pointers, offset pointers bitcast to bytes, "
    "fp16/bf16 scalar arguments)"
)
REFERENCES = ("byte_copy.py::copy_rows_kernel",)
SHOWS = "tl.pointer_type(tl.uint8)"
