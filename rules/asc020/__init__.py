"""ASC020 chained-bool-op: `rule.py` (the check and its VALID/INVALID examples), `ASC020.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
