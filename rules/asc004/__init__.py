"""ASC004 launch-num-warps-stages: `rule.py` (the check and its VALID/INVALID examples), `ASC004.md` (its documentation), `fix.py` (its fix), `snapshots/` (the fixed output of its examples)."""
