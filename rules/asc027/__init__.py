"""ASC027 data-dependent-gather: `rule.py` (the check and its VALID/INVALID examples), `ASC027.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
