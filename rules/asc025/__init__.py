"""ASC025 zero-size-launch: `rule.py` (the check and its VALID/INVALID examples), `ASC025.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
