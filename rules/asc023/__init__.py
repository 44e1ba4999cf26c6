"""ASC023 grid-misses-work: `rule.py` (the check and its VALID/INVALID examples), `ASC023.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
