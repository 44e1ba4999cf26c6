"""``pytest --ascend-cpu-device[=TARGET]``: run a test suite written for Ascend NPUs on
a CPU (``ascend_lint.cpu_device``: ``torch_npu`` and the ``npu`` device, the NPU
driver's properties, triton-ascend's launch options and language extensions, and the
interpreter fills its kernels need).

Registered through its own ``pytest11`` entry point.  Without the option (or the
``ascend_cpu_device`` ini key) it only adds them: nothing is imported, no hook acts.
The stand-in is installed in ``pytest_load_initial_conftests``, before the suite's
root ``conftest.py`` imports ``torch_npu`` or its kernels; it works with or without
``--ascend-compile``, whose worker installs it too (it reads ``ASCEND_LINT_CPU_DEVICE``
from the environment the stand-in leaves for subprocesses).
"""

from __future__ import annotations

import argparse

import pytest

CHOICES = ("off", "A2", "A3", "A5")
DEFAULT = "A2"
_RECORD = pytest.StashKey[object]()  # the install record, when the option is on


def _choice(value: str) -> str:
    for choice in CHOICES:
        if value.strip().lower() == choice.lower():
            return choice
    # `pytest --ascend-cpu-device tests/` hands the path to the option (argparse's rule
    # for an optional value): say how to write it instead
    raise argparse.ArgumentTypeError(
        f"{value!r} is not an Ascend target ({', '.join(CHOICES)}); write "
        "--ascend-cpu-device=A2, or put the paths before --ascend-cpu-device"
    )


def pytest_addoption(parser):
    group = parser.getgroup("ascend-cpu-device", "run Ascend NPU test suites on a CPU")
    group.addoption(
        "--ascend-cpu-device",
        action="store",
        nargs="?",
        const=DEFAULT,
        default=None,
        type=_choice,
        metavar="TARGET",
        help="stand in for an Ascend NPU on this CPU: torch_npu and the 'npu' device, "
        "the NPU driver's core counts, triton-ascend's launch options and language "
        "extensions, kernels under triton's interpreter. TARGET: A2 (the default when "
        "given alone), A3, A5; 'off' disables it.",
    )
    parser.addini(
        "ascend_cpu_device",
        "run this project's NPU tests on a CPU standing in for this Ascend target "
        "(off, A2, A3 or A5)",
        default="off",
    )


def chosen_target(config) -> str:
    """The target the command line or the ini file chose, or "off"."""
    options = getattr(config, "known_args_namespace", None) or config.option
    chosen = getattr(options, "ascend_cpu_device", None)
    if chosen is None:
        value = (config.getini("ascend_cpu_device") or "off").strip()
        try:
            chosen = _choice(value)
        except argparse.ArgumentTypeError:
            raise pytest.UsageError(
                f"ascend_cpu_device = {value!r} in the pytest configuration; use one of "
                f"{', '.join(CHOICES)}"
            ) from None
    return chosen


def pytest_load_initial_conftests(early_config, parser, args):
    target = chosen_target(early_config)
    if target == "off":
        return
    from ascend_lint import cpu_device

    try:
        record = cpu_device.install(target)
    except (RuntimeError, ValueError) as exc:
        raise pytest.UsageError(f"--ascend-cpu-device: {exc}") from None
    early_config.stash[_RECORD] = record


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.config.stash.get(_RECORD, None) is None:
        return
    from ascend_lint.cpu_device import torch_npu_stub

    torch_npu_stub.restore_device_mode()


def pytest_report_header(config):
    record = config.stash.get(_RECORD, None)
    if record is None:
        return None
    target = record.target
    reason = record.replaced.get("torch_npu")
    torch_npu = f"stand-in ({reason})" if reason != "kept the real torch_npu" else "the real one"
    return [
        f"ascend-cpu-device: {target.name} ({target.arch}: {target.num_aicore} AI cores, "
        f"{target.num_vectorcore} vector cores) under triton's interpreter; torch_npu: {torch_npu}"
    ]
