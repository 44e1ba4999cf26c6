"""ASC006 constexpr-or-runtime: `rule.py` (the check and its VALID/INVALID examples), `ASC006.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
