"""ASC014 cuda-only-api: `rule.py` (the check and its VALID/INVALID examples), `ASC014.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
