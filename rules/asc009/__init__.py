"""ASC009 int32-varlen-offsets: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC009.md` (its documentation).
"""

CODE = "ASC009"
NAME = "int32-varlen-offsets"
SUMMARY = "`tl.load(cu_seqlens + i).to(tl.int32)` feeding pointer arithmetic: token offsets wrap past 2**31 elements"
REFERENCES = ("chunk_o.py::locate_chunk", "chunk_o.py::_check_inputs")
SHOWS = ("(eos - bos).to(tl.int32)", "torch.int64")
