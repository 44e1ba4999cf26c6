"""ASC019 masked-negative-offset: `rule.py` (the check and its VALID/INVALID examples), `ASC019.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
