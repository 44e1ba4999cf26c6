"""ASC000 unparsable-file: here its identity (code, name, one-line summary, and the
reference functions that show its fix, read without importing the check); `rule.py` (the
check and its VALID/INVALID examples), `ASC000.md` (its documentation).
"""

CODE = "ASC000"
NAME = "unparsable-file"
SUMMARY = "a file that mentions triton cannot be read, decoded or parsed, so no rule could check it"
REFERENCES = ()
SHOWS = ()
