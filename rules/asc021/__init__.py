"""ASC021 transposed-batch-base: `rule.py` (the check and its VALID/INVALID examples), `ASC021.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
