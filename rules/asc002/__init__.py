"""ASC002 stale-pointer-math: `rule.py` (the check and its VALID/INVALID examples), `ASC002.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
