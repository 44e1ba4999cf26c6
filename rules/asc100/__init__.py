"""ASC100 unused-noqa: `rule.py` (the check and its VALID/INVALID examples), `ASC100.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
