"""ASC032 int-vector-compare: `rule.py` (the check and its VALID/INVALID examples), `ASC032.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
