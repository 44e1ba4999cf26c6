"""ASC007 late-int64-cast: `rule.py` (the check and its VALID/INVALID examples), `ASC007.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
