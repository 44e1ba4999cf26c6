"""The triton-ascend release a project compiles with, for rules whose trap a later release
fixed (`triton-ascend` in `[tool.ascend-lint]`, `--triton-ascend` on the command line).

A release is written as its version (`3.2.0`, `3.2.2`); the default is the one release on
PyPI, 3.2.0, which this project's `constraints.txt` also pins. The release travels to the
rules with the SoC target, as one string (`lint_target`): the cache key, the worker
processes and the language server pass the target string along already, so a project
that sets another release gets its own cached findings without another argument on
every path. `split_lint_target` undoes it where the rules' context is built.

What changed, release by release (each rule that keys on the release says so in its doc):

* `EMPTY_GRID_GUARDED`: the generated launcher returns before the runtime call when the
  grid has no programs (triton-ascend PR #1221, merged 2026-07-24, for issue #984).
  Releases 3.2.0 and 3.2.1 (out before the merge) abort with `coreDim ... value 0`;
  3.2.2, whose release notes went up a week after the merge, is taken as the first
  guarded release (ASC025).
"""

from __future__ import annotations

import functools
import re

DEFAULT_TRITON_ASCEND = "3.2.0"
# The SoC whose Unified Buffer the UB checks budget for when a project names none (910B,
# Atlas A2; `ub_model` has the targets). Here rather than in `ub_model` so that settings
# and options, which every run reads, need not import the model to know its default.
DEFAULT_TARGET = "ascend910b"
EMPTY_GRID_GUARDED = (3, 2, 2)

_SEPARATOR = ";triton-ascend="
_VERSION = re.compile(r"^\d+(\.\d+){0,2}([a-z]+\d*)?$")


@functools.lru_cache(maxsize=64)  # asked for every file a run lints
def parse_version(text: str) -> tuple[int, ...]:
    """`3.2.0` -> (3, 2, 0); `3.2.0rc4` -> (3, 2, 0) (a release candidate counts as the
    release it leads to). ValueError for anything else."""
    text = text.strip()
    if not _VERSION.match(text):
        raise ValueError(f"not a release version: `{text}` (expected e.g. 3.2.0)")
    numbers = re.match(r"[\d.]+", text).group(0).rstrip(".").split(".")  # type: ignore[union-attr]
    parts = [int(n) for n in numbers]
    return tuple(parts + [0] * (3 - len(parts)))


def lint_target(target: str, triton_ascend: str) -> str:
    """The one string that carries the SoC target and the release to the rules."""
    if parse_version(triton_ascend) == parse_version(DEFAULT_TRITON_ASCEND):
        return target
    return f"{target}{_SEPARATOR}{triton_ascend}"


def split_lint_target(text: str) -> tuple[str, tuple[int, ...]]:
    """(SoC target, release) from `lint_target`'s string (a bare target: the default)."""
    target, _, version = text.partition(_SEPARATOR)
    return target, parse_version(version or DEFAULT_TRITON_ASCEND)


def show_version(version: tuple[int, ...]) -> str:
    return ".".join(str(v) for v in version)
