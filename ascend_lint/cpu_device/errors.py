"""The error the CPU stand-in raises for what it cannot run, instead of a wrong result."""

from __future__ import annotations


class NotOnCpuError(NotImplementedError):
    """An Ascend feature the CPU stand-in has no CPU implementation of.

    It names the feature, so that a failing test says what it needs an NPU for."""

    def __init__(self, what: str, why: str = ""):
        self.what = what
        message = f"{what} has no CPU implementation in ascend-lint's CPU stand-in"
        if why:
            message += f": {why}"
        message += " (run this test on an Ascend NPU)"
        super().__init__(message)
