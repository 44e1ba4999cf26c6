"""The names the plugin registers with pytest (its two plugin objects, the modes of its
options, its markers), shared by the option hooks (``__init__``), the compile gate and
the sanitizer gate.
"""

from __future__ import annotations

from ascend_lint.sanitizer.findings import KINDS

MODES = ("report", "strict", "off")
PLUGIN_NAME = "ascend-compile-gate"
SANITIZE_PLUGIN_NAME = "ascend-sanitize"
SANITIZE_MODES = ("report", "strict", "off")
# A test that makes a sanitizer finding on purpose (registered in every mode).
SANITIZE_MARKER = "ascend_sanitize_allow"
SANITIZE_MARKER_HELP = (
    f"{SANITIZE_MARKER}(kind=..., tensor=..., kernel=...): the test makes this sanitizer "
    f"finding on purpose (kind: {', '.join(KINDS)}, or a list of them; tensor and "
    "kernel narrow it); --ascend-sanitize=strict does not fail it"
)
# A test that launches a grid that misses work on purpose (registered in every mode, so
# that a marked test runs without the gate too).
GRID_MARKER = "ascend_grid_misses_work"
GRID_MARKER_HELP = (
    f"{GRID_MARKER}: the test launches a grid that misses work on purpose; the compile "
    "gate expects its grid finding instead of failing the test for it"
)
