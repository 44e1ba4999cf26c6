"""ASC001 strided-time-gather: `rule.py` (the check and its VALID/INVALID examples), `ASC001.md` (its documentation), `fix.py` (its fix), `snapshots/` (the fixed output of its examples)."""
