"""ASC001 strided-time-gather: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC001.md` (its documentation), `fix.py` (its
fix), `snapshots/` (the fixed output of its examples).
"""

CODE = "ASC001"
NAME = "strided-time-gather"
SUMMARY = "1-D block pointer or vector access along time with a non-unit stride (a DMA gather)"
REFERENCES = ("chunk_o.py::gate_block_ptr", "chunk_o.py::_gate_arg")
SHOWS = ("(T,), (1,)", ".transpose(1, 2).contiguous()")
