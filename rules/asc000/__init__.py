"""ASC000 unparsable-file: `rule.py` (the check and its VALID/INVALID examples), `ASC000.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
