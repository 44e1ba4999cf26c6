"""ASC100 unused-noqa: here its identity (code, name, one-line summary, and the reference
functions that show its fix, read without importing the check); `rule.py` (the check and
its VALID/INVALID examples), `ASC100.md` (its documentation), `snapshots/` (the fixed
output of its examples).
"""

CODE = "ASC100"
NAME = "unused-noqa"
SUMMARY = "a `# noqa: ASC...` code that suppresses no finding on its line"
REFERENCES = ()
SHOWS = ()
