"""ASC013 per-call-constexpr: `rule.py` (the check and its VALID/INVALID examples), `ASC013.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
