"""ASC005 runtime-dma-path-split: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC005.md` (its documentation).
"""

CODE = "ASC005"
NAME = "runtime-dma-path-split"
SUMMARY = "runtime if/else with a block-pointer load on one side and a masked load on the other"
REFERENCES = ("cumsum.py::chunk_local_cumsum_kernel", "cumsum.py::chunk_local_cumsum")
SHOWS = "TAIL_MODE"
