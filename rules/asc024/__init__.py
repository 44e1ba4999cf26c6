"""ASC024 where-arm-load: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC024.md` (its documentation), `snapshots/`
(the fixed output of its examples).
"""

CODE = "ASC024"
NAME = "where-arm-load"
SUMMARY = (
    "a load in a `tl.where` arm whose offset is negative on the lanes the select "
    "drops: the load is still issued for them"
)
REFERENCES = ("segments.py::segment_lengths_kernel",)
SHOWS = "tl.maximum("
