"""ASC029 mixed-base-pointer: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC029.md` (its documentation).
"""

CODE = "ASC029"
NAME = "mixed-base-pointer"
SUMMARY = (
    "one pointer value drawn from two tensors at run time (`tl.where(c, pa, pb)`, an "
    "`if` assigning each side): the Ascend compiler rejects it"
)
REFERENCES = ("row_ops.py::blend_kernel",)
SHOWS = ("mask=m_a", "mask=m_b")
