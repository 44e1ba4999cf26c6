"""ASC028 unaligned-innermost-dim: `rule.py` (the check and its VALID/INVALID examples), `ASC028.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
