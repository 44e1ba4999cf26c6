"""ASC003 runtime-branch-in-loop: `rule.py` (the check and its VALID/INVALID examples), `ASC003.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
