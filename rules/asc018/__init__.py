"""ASC018 vector-int-div-mod: `rule.py` (the check and its VALID/INVALID examples), `ASC018.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
