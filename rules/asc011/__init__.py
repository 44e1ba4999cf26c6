"""ASC011 inplace-pointer-advance-in-loop: `rule.py` (the check and its VALID/INVALID examples), `ASC011.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
