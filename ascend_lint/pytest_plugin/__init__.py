"""``pytest --ascend-compile``: compile every kernel specialisation a test run launches
through the Ascend compiler front end (triton-ascend's ``ttir`` and ``ttadapter``
stages, no NPU or CANN needed), and confirm static findings from the lowered IR.

Registered through the ``pytest11`` entry point.  Without ``--ascend-compile`` it only
adds its options: nothing here imports triton or torch, and no hook runs.

    pytest tests/ --ascend-compile          # report what the Ascend front end rejects
    pytest --ascend-compile=strict tests/   # and fail the tests that launched it
    pytest tests/ --ascend-compile --ascend-compile-report=ascend-compile.json

The JSON report (``version`` 1) has ``summary`` (counts, compile times), one entry per
specialisation in ``specialisations`` (``kernel``, ``file``, ``def_line``, ``key``: triton's
specialisation key (rejections too), ``specialisation``: its runtime arguments in words,
``signature``, ``constants``, ``grid``, ``status``: ok / rejected / not-compiled, for a
rejection ``stage``, ``reason`` (the probable cause first), ``message`` (the compiler's
error lines), ``location`` and, for one caused by an import-time platform switch,
``cause``: ``platform-switch``; the ``tests`` that launched it, ``ms``, and for a lowered
one the ``ir`` facts and ``ub``: the Unified Buffer ``verdict`` fits / overflows /
uncertain with ``ub_bits_lower``, ``ub_bits_upper`` and ``capacity_bits``; strict mode
also fails a test that launches an ``overflows`` one), ``ir_confirmation`` (each static
finding inside a lowered kernel: ``code``, ``line``, ``status`` confirmed / contradicted /
unverifiable / not-lowered, and the specialisations that say so)
and ``ir_only`` (IR facts no static finding predicted).

Kernel tests must run under the interpreter (``TRITON_INTERPRET=1`` before the kernel
modules are imported); the compiling happens in a separate worker process without it.
With the gate on, ``@triton.autotune`` works without a driver: each config runs once on
the first launch of a tuning key and the first config is kept (``cpu_device/autotune.py``).

``--ascend-sanitize`` (``report`` / ``strict``; ini ``ascend_sanitize``), with or without
the gate, checks every lane of every memory access of the launched kernels against the
storage its pointer derives from, and stores of one launch against each other
(``sanitize.py``, ``ascend_lint.sanitizer``).
"""

from __future__ import annotations

from ascend_lint.pytest_plugin.names import (
    GRID_MARKER_HELP,
    MODES,
    PLUGIN_NAME,
    SANITIZE_MARKER_HELP,
    SANITIZE_MODES,
    SANITIZE_PLUGIN_NAME,
)


def _mode(value: str) -> str:
    if value not in MODES:
        import argparse

        # `pytest --ascend-compile tests/` hands the path to the option (argparse's rule
        # for an optional value): say how to write it instead
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a mode ({', '.join(MODES)}); write --ascend-compile=report, "
            "or put the paths before --ascend-compile"
        )
    return value


def _sanitize_mode(value: str) -> str:
    if value not in SANITIZE_MODES:
        import argparse

        raise argparse.ArgumentTypeError(
            f"{value!r} is not a mode ({', '.join(SANITIZE_MODES)}); write "
            "--ascend-sanitize=report, or put the paths before --ascend-sanitize"
        )
    return value


def pytest_addoption(parser):
    group = parser.getgroup("ascend-compile", "compile launched kernels for Ascend")
    group.addoption(
        "--ascend-compile",
        action="store",
        nargs="?",
        const="report",
        default=None,
        type=_mode,
        metavar="MODE",
        help="compile every kernel specialisation the tests launch through the Ascend "
        "front end: 'report' (the default when given alone) prints what it rejects, "
        "'strict' also fails the tests that launched it, 'off' disables it.",
    )
    group.addoption(
        "--ascend-compile-report",
        action="store",
        default=None,
        metavar="FILE",
        help="write the --ascend-compile report as JSON to FILE.",
    )
    group.addoption(
        "--ascend-compile-timeout",
        action="store",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="longest one specialisation may take to compile (default 300).",
    )
    group.addoption(
        "--ascend-sanitize",
        action="store",
        nargs="?",
        const="report",
        default=None,
        type=_sanitize_mode,
        metavar="MODE",
        help="check every memory access of the kernels the tests launch under the "
        "interpreter against the tensor it derives from, and stores of one launch "
        "against each other: 'report' (the default when given alone) lists what touches "
        "memory the kernel does not own, 'strict' also fails the tests that launched it, "
        "'off' disables it.",
    )
    parser.addini(
        "ascend_sanitize",
        "default --ascend-sanitize mode for this project (report, strict or off)",
        default="off",
    )
    parser.addini(
        "ascend_compile",
        "default --ascend-compile mode for this project (report, strict or off)",
        default="off",
    )


def mode(config) -> str:
    chosen = config.getoption("ascend_compile")
    if chosen is None:
        chosen = (config.getini("ascend_compile") or "off").strip()
        if chosen not in MODES:
            import pytest

            raise pytest.UsageError(
                f"ascend_compile = {chosen!r} in the pytest configuration; use one of {', '.join(MODES)}"
            )
    return chosen


def sanitize_mode(config) -> str:
    chosen = config.getoption("ascend_sanitize")
    if chosen is None:
        chosen = (config.getini("ascend_sanitize") or "off").strip()
        if chosen not in SANITIZE_MODES:
            import pytest

            raise pytest.UsageError(
                f"ascend_sanitize = {chosen!r} in the pytest configuration; use one of "
                f"{', '.join(SANITIZE_MODES)}"
            )
    return chosen


def _early_mode(early_config, option: str) -> str:
    chosen = getattr(early_config.known_args_namespace, option, None)
    if chosen is None:
        chosen = (early_config.getini(option) or "off").strip()
    return chosen


def pytest_load_initial_conftests(early_config, parser, args):
    # a root conftest.py may import autotuned kernels before pytest_configure runs; the
    # gate and the sanitizer both need autotuned kernels to run without a driver
    if any(
        _early_mode(early_config, option) not in ("off", None)
        for option in ("ascend_compile", "ascend_sanitize")
    ):
        from ascend_lint.cpu_device import autotune

        autotune.install()


def pytest_configure(config):
    config.addinivalue_line("markers", GRID_MARKER_HELP)
    config.addinivalue_line("markers", SANITIZE_MARKER_HELP)
    sanitizing = sanitize_mode(config)
    chosen = mode(config)
    if chosen == "off" and sanitizing == "off":
        return
    from ascend_lint.cpu_device import autotune

    autotune.install()
    if sanitizing != "off":
        from ascend_lint.pytest_plugin.sanitize import SanitizeGate

        config.pluginmanager.register(
            SanitizeGate(
                config,
                strict=sanitizing == "strict",
                report_path=config.getoption("ascend_compile_report"),
            ),
            SANITIZE_PLUGIN_NAME,
        )
    if chosen == "off":
        return
    from ascend_lint.pytest_plugin.gate import CompileGate

    gate = CompileGate(
        config,
        strict=chosen == "strict",
        report_path=config.getoption("ascend_compile_report"),
        timeout_s=config.getoption("ascend_compile_timeout"),
    )
    config.pluginmanager.register(gate, PLUGIN_NAME)
