"""ASC022 ub-overflow: `rule.py` (the check and its VALID/INVALID examples), `ASC022.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
