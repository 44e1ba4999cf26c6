"""ASC008 int64-block-ptr-offset: `rule.py` (the check and its VALID/INVALID examples), `ASC008.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
