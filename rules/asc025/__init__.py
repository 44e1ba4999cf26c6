"""ASC025 zero-size-launch: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC025.md` (its documentation).
"""

CODE = "ASC025"
NAME = "zero-size-launch"
SUMMARY = (
    "a launch an empty input turns into 0 programs (the runtime aborts with `coreDim "
    "... value 0`) or into `tl.arange(0, next_power_of_2(0))`, with no guard before it"
)
REFERENCES = ("core_grid.py::rms_norm_fwd",)
SHOWS = "if n_rows == 0 or N == 0:"
