"""ASC005 runtime-dma-path-split: `rule.py` (the check and its VALID/INVALID examples), `ASC005.md` (its documentation), `snapshots/` (the fixed output of its examples)."""
