"""How a lowered kernel uses its grid, read from the TTIR of one specialisation in the
compile worker: which ``tt.get_program_id x/y/z`` axes survive lowering (a dead read is
folded away) and the first kernel line reading each, whether it reads
``tt.get_num_programs``, and whether an ``scf.for`` takes its bounds or step from either
(a task loop).  The gate's grid check (``pytest_plugin/grid_coverage.py``) judges each
launch against it.
"""

from __future__ import annotations

import re

from ascend_lint.lowering.mlir import lines_in_file, location_aliases, op_location

_AXES = "xyz"
_VALUE = r"%[\w.$#-]+"
_PROGRAM_ID = re.compile(rf"^\s*({_VALUE})\s*=\s*tt\.get_program_id\s+([xyz])\b")
_NUM_PROGRAMS = re.compile(rf"^\s*({_VALUE})\s*=\s*tt\.get_num_programs\s+([xyz])\b")
_RESULTS = re.compile(rf"^\s*({_VALUE}(?::\d+)?(?:\s*,\s*{_VALUE})*)\s*=\s*(.*)$")
_FOR = re.compile(rf"\bscf\.for\s+{_VALUE}\s*=\s*({_VALUE})\s+to\s+({_VALUE})\s+step\s+({_VALUE})")
_OPERAND = re.compile(_VALUE)


def grid_use(text: str, kernel_path: str) -> dict:
    """{"program_id_axes": {"1": line, ...}, "reads_num_programs": bool,
    "loops_over_programs": bool} from the TTIR of one specialisation."""
    aliases = location_aliases(text)
    axes: dict[str, int] = {}
    from_grid: set[str] = set()  # values computed from a program id or the program count
    reads_count = loops = False
    for line in text.splitlines():
        found = _PROGRAM_ID.match(line)
        if found:
            from_grid.add(found.group(1))
            mine = lines_in_file(op_location(line), aliases, kernel_path)
            axes.setdefault(str(_AXES.index(found.group(2))), mine[0] if mine else 0)
            continue
        found = _NUM_PROGRAMS.match(line)
        if found:
            from_grid.add(found.group(1))
            reads_count = True
            continue
        header = _FOR.search(line)
        if header and set(header.groups()) & from_grid:
            loops = True
        defined = _RESULTS.match(line)
        if defined and set(_OPERAND.findall(defined.group(2))) & from_grid:
            from_grid.update(v.split(":")[0] for v in _OPERAND.findall(defined.group(1)))
    return {
        "program_id_axes": axes,
        "reads_num_programs": reads_count,
        "loops_over_programs": loops,
    }
