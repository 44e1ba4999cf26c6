"""ASC029 mixed-base-pointer: `rule.py` (the check and its VALID/INVALID examples), `ASC029.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
