"""ASC016 dot-precision-option: `rule.py` (the check and its VALID/INVALID examples), `ASC016.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
