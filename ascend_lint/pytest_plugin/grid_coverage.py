"""The gate's grid check: does the grid a launch really used reach the work the kernel
splits over program ids?  (ASC023 at run time.)

Two halves:

* in the compile worker, ``lowering.grid_use`` reads the lowered TTIR of a new specialisation:
  which ``tt.get_program_id x/y/z`` axes survive lowering (a dead read is folded away),
  the first kernel line reading each, whether it reads ``tt.get_num_programs`` and
  whether an ``scf.for`` takes its bounds or step from either (a task loop);
* in the test process, ``check_launch`` judges one launch with that summary, the grid
  it used (rank as written, extents as launched) and its argument values:

  - ``missing-axis``: the kernel reads ``tl.program_id(k)`` and the grid has fewer than
    ``k + 1`` axes (reported exactly: the id is always 0);
  - ``tiles-beyond-grid``: no loop over program ids and no read of the program count,
    and the tiles the kernel's masks admit along an axis (``cdiv(N, BLOCK)`` with ``N``
    the bound it compares with and ``BLOCK`` the block it multiplies the id by, read by
    the static index from the kernel's source) outnumber the grid's extent there;
  - ``unbounded-task-index``: a task loop whose index nothing checks (the static index
    finds it) and a task count, as launched, that is not a multiple of the grid.

  Where a value the count needs is not an integer of this launch, nothing is said.

Findings carry the grid, the axis, the kernel line and the launch site; the gate lists
them in its report and, in strict mode, fails the test that launched them unless the
test is marked ``@pytest.mark.ascend_grid_misses_work`` (a test that shows the defect
on purpose: then the gate fails it if no such finding arrives).
"""

from __future__ import annotations

import ast
import math

from ascend_lint.index import KernelIndex
from ascend_lint.lowering.diagnosis import shown_path
from ascend_lint.pytest_plugin.linted_files import linted_file


# -- in the test process: one launch against its kernel -----------------------------------
def _index_of(path: str) -> KernelIndex | None:
    linted = linted_file(path)
    return linted.index if linted is not None else None


def _kernel(path: str, qualname: str, def_line: int):
    index = _index_of(path)
    if index is None:
        return None, None
    name = qualname.rsplit(".", 1)[-1]
    for fn in index.kernels:
        if fn.name == name and fn.node.lineno == def_line:
            return index, fn
    return index, None


def _bound_values(fn, args: list, kwargs: dict) -> dict[str, int]:
    """The integer value of each parameter at this launch (positional, then keyword)."""
    values = dict(zip(fn.params, args))
    values.update({k: v for k, v in kwargs.items() if k in fn.params})
    out = {}
    for name, value in values.items():
        value = getattr(value, "value", value)  # tl.constexpr
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    return out


def check_launch(launch, use: dict | None) -> list[dict]:
    """The grid findings of one launch (see the module doc); [] where undecidable."""
    if not use:
        return []
    rank = getattr(launch, "rank", 3)
    grid = list(launch.grid[:rank])
    shown = "(" + ", ".join(map(str, grid)) + ("," if rank == 1 else "") + ")"
    site = launch.launch_site
    found = []

    def finding(check: str, axis: int | None, line: int, message: str) -> None:
        found.append(
            {
                "check": check,
                "kernel": launch.qualname,
                "file": launch.file,
                "kernel_line": line,
                "axis": axis,
                "grid": grid,
                "launch_site": None if site is None else {"file": site[0], "line": site[1]},
                "message": message,
            }
        )

    for key, line in sorted(use["program_id_axes"].items()):
        axis = int(key)
        if axis >= rank:
            finding(
                "missing-axis",
                axis,
                line,
                f"the grid {shown} has {rank} ax{'is' if rank == 1 else 'es'} but the kernel "
                f"reads tl.program_id({axis}) (line {line}): that id is always 0, so only the "
                f"first tile along axis {axis} is computed",
            )
    _, fn = _kernel(launch.file, launch.qualname, launch.def_line)
    if fn is None:
        return found
    index = _index_of(launch.file)
    values = _bound_values(fn, launch.args, launch.kwargs)
    shares_out = use["loops_over_programs"] or use["reads_num_programs"]
    for axis in range(rank) if not shares_out else ():
        if str(axis) not in use["program_id_axes"]:
            continue
        tiles = index.coverage.tiles(fn, axis)
        if tiles.opaque or tiles.shifted or not tiles.bounds:
            continue
        if any(b not in values for b in tiles.blocks):
            continue
        block = math.prod(values[b] for b in tiles.blocks) or 1
        counts = {bound: -(-values[bound] // block) for bound in tiles.bounds if bound in values}
        if len(counts) != len(tiles.bounds):
            continue
        bound, count = min(counts.items(), key=lambda item: item[1])
        if count > grid[axis]:
            line = tiles.bounds[bound].lineno
            finding(
                "tiles-beyond-grid",
                axis,
                line,
                f"axis {axis} of the grid {shown} has {grid[axis]} programs but the kernel's "
                "masks admit "
                f"{count} tiles ({bound}={values[bound]}, line {line}) and it has no loop "
                "over program ids: the tiles past the grid are never computed",
            )
    for loop in index.coverage.unbounded_task_loops(fn):
        total = loop.total.id if isinstance(loop.total, ast.Name) else None
        if total not in values or grid[0] <= 0:
            continue
        if values[total] % grid[0]:
            finding(
                "unbounded-task-index",
                0,
                loop.loop.lineno,
                f"the task loop (line {loop.loop.lineno}) never checks {loop.task} against "
                f"{total}={values[total]}, not a multiple of the {grid[0]} programs of the "
                f"grid {shown}: "
                "the last round reads and writes past the end",
            )
    return found


# -- bookkeeping for the gate --------------------------------------------------------------
def _identity(found: dict) -> tuple:
    site = found.get("launch_site") or {}
    return (found["check"], found["axis"], tuple(found["grid"]), site.get("file"), site.get("line"))


def record(spec: dict, launch, use: dict | None, test: str) -> list[dict]:
    """Judge a launch and keep its findings on its specialisation's record (one entry per
    check, axis, grid and launch site, with the tests that made it); returns them."""
    kept = spec.setdefault("grid_coverage", [])
    out = []
    for found in check_launch(launch, use):
        same = next((k for k in kept if _identity(k) == _identity(found)), None)
        if same is None:
            found["tests"] = []
            kept.append(found)
            same = found
        if test not in same["tests"]:
            same["tests"].append(test)
        out.append(same)
    if not kept:
        del spec["grid_coverage"]
    return out


def merge(mine: dict, other: dict) -> None:
    """Fold another process's findings for the same specialisation into `mine`."""
    for found in other.get("grid_coverage", ()):
        kept = mine.setdefault("grid_coverage", [])
        same = next((k for k in kept if _identity(k) == _identity(found)), None)
        if same is None:
            kept.append(found)
            continue
        same["tests"] += [t for t in found["tests"] if t not in same["tests"]]


def as_failure(found: dict) -> dict:
    """A finding in the shape the gate prints a failing test's rejections in."""
    site = found.get("launch_site") or {"file": found["file"], "line": found["kernel_line"]}
    return {
        "kernel": found["kernel"],
        "file": found["file"],
        "def_line": found["kernel_line"],
        "stage": "grid",
        "reason": found["message"],
        "message": "",
        "key": "",
        "location": {"file": site["file"], "line": site["line"], "source": "launch"},
    }


def summary_line(found: dict, root: str) -> str:
    site = found.get("launch_site")
    where = (
        f"{shown_path(site['file'], root)}:{site['line']}"
        if site
        else f"{shown_path(found['file'], root)}:{found['kernel_line']}"
    )
    tests = found.get("tests", [])
    by = f" (launched by {', '.join(tests[:3])}{' ...' if len(tests) > 3 else ''})" if tests else ""
    return f"{where}: {found['kernel']}: grid {found['check']}: {found['message']}{by}"
