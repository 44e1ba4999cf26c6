"""ASC031 ascend-api-limit: `rule.py` (the check and its VALID/INVALID examples), `ASC031.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
