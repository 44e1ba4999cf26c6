"""ASC015 gpu-only-memory-hint: `rule.py` (the check and its VALID/INVALID examples), `ASC015.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
