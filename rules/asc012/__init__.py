"""ASC012 grid-over-core-count: `rule.py` (the check and its VALID/INVALID examples), `ASC012.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
