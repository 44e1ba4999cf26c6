"""ASC026 core-type-mismatch: `rule.py` (the check and its VALID/INVALID examples), `ASC026.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
