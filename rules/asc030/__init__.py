"""ASC030 aliased-pointer-args: `rule.py` (the check and its VALID/INVALID examples), `ASC030.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
