"""ASC010 dot-lhs-reuse: `rule.py` (the check and its VALID/INVALID examples), `ASC010.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
