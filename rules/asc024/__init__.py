"""ASC024 where-arm-load: `rule.py` (the check and its VALID/INVALID examples), `ASC024.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
