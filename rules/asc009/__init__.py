"""ASC009 int32-varlen-offsets: `rule.py` (the check and its VALID/INVALID examples), `ASC009.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
