"""ASC017 unsupported-dtype: `rule.py` (the check and its VALID/INVALID examples), `ASC017.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
