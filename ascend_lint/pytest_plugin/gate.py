"""The compile gate as a pytest plugin object (registered only with ``--ascend-compile``).

One instance per test process.  It records each launch (``capture.py``), compiles each
new specialisation once in the worker (``client.py``), attributes every launch of a
rejected specialisation to the test that made it, fails those tests in strict mode, and
at the end prints the report and writes it as JSON.  Under pytest-xdist each worker
node compiles what its own tests launch and hands its records to the controller, which
merges them and reports once.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from ascend_lint.cpu_device import autotune
from ascend_lint.lowering import diagnosis, ir_facts, ub_verdict
from ascend_lint.lowering.client import WorkerClient
from ascend_lint.lowering.worker import DEFAULT_NPU_ARCH, NPU_ARCH_ENV, STAGES
from ascend_lint.pytest_plugin import capture, confirm, grid_coverage
from ascend_lint.pytest_plugin.names import GRID_MARKER, SANITIZE_PLUGIN_NAME
from ascend_lint.text import plural

REPORT_VERSION = 1
WORKEROUTPUT_KEY = "ascend_compile"
_LOC = re.compile(r'loc\("([^"]+)":(\d+):(\d+)\)|((?:/|\w:)?[^\s:"()]+\.py):(\d+):(\d+)')


class CompileGate:
    def __init__(self, config, strict: bool, report_path: str | None, timeout_s: float):
        self.config = config
        self.strict = strict
        self.report_path = report_path
        self.client = WorkerClient(timeout_s=timeout_s, cwd=str(config.rootpath))
        self.records: dict[tuple, dict] = {}  # launch key -> specialisation record
        self.by_triton_key: dict[tuple, dict] = {}
        self.current: str | None = None  # node id of the running test
        self.unreported: dict[str, list[dict]] = {}  # node id -> rejected records
        self.grid_pending: dict[str, list[dict]] = {}  # node id -> its grid findings
        self._uninstall = None
        self.is_xdist_controller = False
        self.startup_ms: float | None = None  # waiting for the worker's first answer
        self.is_xdist_worker = hasattr(config, "workerinput")
        self.ub_target = ub_verdict.target_for_arch(os.environ.get(NPU_ARCH_ENV, DEFAULT_NPU_ARCH))
        self.interpreter_seen = False  # did this process load triton's interpreter?
        self.last_cannot_run = False  # the last launch's specialisation cannot run
        autotune.last_launch_cannot_run = lambda: self.last_cannot_run

    # -- session ------------------------------------------------------------------------
    def pytest_sessionstart(self, session):
        self.is_xdist_controller = self.config.pluginmanager.hasplugin("dsession")

    def pytest_collection_finish(self, session):
        if self._install() and os.environ.get("TRITON_INTERPRET") == "1":
            # start the worker (it imports triton, ~3 s) while the first tests run
            self.client.start()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        self._install()

    def _install(self) -> bool:
        """Wrap the interpreter's launch once triton is imported, and not before: this
        plugin must not be the first to import triton, or triton's own ``@jit``
        helpers (``tl.cdiv`` ...) would be made without the interpreter."""
        if self._uninstall is not None:
            return True
        if self.is_xdist_controller or "triton.runtime.interpreter" not in sys.modules:
            return False
        self._uninstall = capture.install(self.on_launch)
        self.interpreter_seen = True
        return True

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.current = item.nodeid
        try:
            yield
        finally:
            self.current = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if call.when == "call":
            self._grid_verdict(item, report)
        pending = self.unreported.get(item.nodeid)
        if not (self.strict and pending):
            return
        if report.skipped:
            pending.clear()  # an expected failure (xfail) already says the test fails
            return
        text = "\n\n".join(_strict_text(r) for r in pending)
        if report.passed:
            report.outcome = "failed"
            what = (
                (
                    "launched a grid that misses work",
                    any(r.get("stage") == "grid" for r in pending),
                ),
                (
                    "rejected by the Ascend compiler front end",
                    any(r.get("status") == "rejected" for r in pending),
                ),
                ("does not fit the Ascend Unified Buffer", any(map(_overflows, pending))),
                (
                    "launched a kernel the compile worker could not load",
                    any(r.get("status") == "not-compiled" for r in pending),
                ),
            )
            headline = "; ".join(words for words, present in what if present)
            report.longrepr = f"{headline} (--ascend-compile=strict):\n\n{text}"
            pending.clear()
        elif report.failed:
            report.sections.append(("Ascend compile (strict)", text))
            pending.clear()

    def _grid_verdict(self, item, report) -> None:
        """A test's grid findings fail it (strict) like a rejection, unless the test is
        marked as showing the defect on purpose: then it fails without one."""
        found = self.grid_pending.pop(item.nodeid, [])
        if item.get_closest_marker(GRID_MARKER) is not None:
            if self.strict and not found and report.passed:
                report.outcome = "failed"
                report.longrepr = (
                    f"marked {GRID_MARKER}, but no launch of the test missed work "
                    "by the compile gate's grid check"
                )
            return
        if found:
            pending = self.unreported.setdefault(item.nodeid, [])
            pending.extend(grid_coverage.as_failure(f) for f in found)

    def pytest_sessionfinish(self, session):
        if self._uninstall is not None:
            self._uninstall()
            self._uninstall = None
        self.client.close()
        if self.is_xdist_worker:
            records = [_portable(r) for r in self.records.values()]
            self.config.workeroutput[WORKEROUTPUT_KEY] = json.dumps(records)

    # pytest-xdist's hook: optional, so a run without xdist installed still loads the gate
    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        data = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if data:
            for record in json.loads(data):
                self._merge(record)

    def pytest_terminal_summary(self, terminalreporter):
        if self.is_xdist_worker:
            return
        report = self.report()
        sanitizing = self.config.pluginmanager.get_plugin(SANITIZE_PLUGIN_NAME)
        if sanitizing is not None:  # one report file for both: its findings ride along
            report.update(sanitizing.report_section())
        if self.report_path:
            path = Path(self.report_path)
            if not path.is_absolute():
                path = Path(self.config.invocation_params.dir) / path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        if report["specialisations"]:
            _print_report(terminalreporter, report, self.report_path)
        elif not self.config.option.collectonly:
            _print_nothing_captured(terminalreporter, self.interpreter_seen)
            if self.report_path:
                terminalreporter.write_line(f"report written to {self.report_path}")

    # -- launches -----------------------------------------------------------------------
    def on_launch(self, launch: capture.Launch) -> None:
        record = self.records.get(launch.key)
        if record is None:
            record = self._compile(launch)
            self.records[launch.key] = record
        test = self.current or "<outside a test>"
        if test not in record["tests"]:
            record["tests"].append(test)
        for found in grid_coverage.record(record, launch, self._grid_use(record), test):
            if self.current is not None:
                self.grid_pending.setdefault(self.current, []).append(found)
        cannot_run = record["status"] == "rejected" or _overflows(record)
        self.last_cannot_run = cannot_run
        if autotune.tuning():
            # one config's trial run for the autotuner: a config that cannot run is one
            # triton-ascend's tuner drops (the benchmarker asks `last_cannot_run`), not
            # the test's failure; if every config is dropped, the launch the tuner then
            # makes with its pick cannot run either, and that one fails the test
            if cannot_run:
                record["dropped_by_autotuner"] = True
            return
        # a kernel the worker could not load is not checked: strict says so (a kernel
        # defined inside a function is one no worker can load: reported, not failed)
        unloadable = (
            record["status"] == "not-compiled"
            and record.get("stage") == "import"
            and "<locals>" not in record["kernel"]
        )
        if (cannot_run or unloadable) and self.current is not None:
            pending = self.unreported.setdefault(self.current, [])
            if record not in pending:
                pending.append(record)

    def _grid_use(self, record: dict) -> dict | None:
        """The lowered kernel's use of the grid; a specialisation the worker had already
        lowered under another launch key shares that one's."""
        if record.get("grid_use") is None and record.get("cached"):
            for other in self.records.values():
                if other.get("key") == record.get("key") and other.get("grid_use"):
                    record["grid_use"] = other["grid_use"]
                    break
        return record.get("grid_use")

    def _compile(self, launch: capture.Launch) -> dict:
        record = {
            "kernel": launch.qualname,
            "module": launch.module,
            "file": launch.file,
            "def_line": launch.def_line,
            "last_line": launch.last_line,
            "grid": list(launch.grid),
            "launch_site": _where(launch.launch_site),
            "tests": [],
        }
        request = launch.request()
        if launch.problems:
            record.update(status="not-compiled", key="", message="; ".join(launch.problems))
            return record
        if self.startup_ms is None:
            started = time.perf_counter()
            self.client.wait_ready()
            self.startup_ms = round((time.perf_counter() - started) * 1e3, 1)
        started = time.perf_counter()
        answer = self.client.compile(request)
        record["ms"] = round((time.perf_counter() - started) * 1e3, 2)
        record["worker_ms"] = answer.get("ms")
        record["stage_ms"] = answer.get("stage_ms", {})
        record["key"] = answer.get("key") or ""
        if answer.get("loaded_from_source"):
            record["loaded_from_source"] = answer["loaded_from_source"]
        record["signature"] = answer.get("signature", {})
        record["constants"] = answer.get("constants", {})
        if answer.get("specialisation"):
            record["specialisation"] = answer["specialisation"]
        if answer.get("ok"):
            record.update(status="ok", stage=STAGES[-1], cached=bool(answer.get("cached")))
            record["grid_use"] = answer.get("grid_use")
            if answer.get("ir"):
                lowered = ir_facts.parse(answer["ir"], launch.file)
                record["ir"] = {
                    "facts": [f.as_dict() for f in lowered.facts],
                    "lines_seen": sorted(lowered.lines_seen),
                    "branch_copies": {str(k): n for k, n in sorted(lowered.branch_copies.items())},
                    "mix_mode": lowered.mix_mode,
                }
                started = time.perf_counter()
                multibuffer = launch.kwargs.get("multibuffer")  # triton-ascend's option
                ub = ub_verdict.estimate(
                    answer["ir"],
                    launch.file,
                    self.ub_target,
                    multibuffer=multibuffer if isinstance(multibuffer, bool) else None,
                )
                record["ub"] = ub.as_dict()
                record["ub_ms"] = round((time.perf_counter() - started) * 1e3, 2)
            return record
        stage = answer.get("stage", "?")
        message = answer.get("error", "")
        if stage in ("import", "startup", "protocol"):
            record.update(status="not-compiled", stage=stage, message=message)
            return record
        record.update(status="rejected", stage=stage, message=message)
        record["location"] = _locate(message, launch, stage)
        record["reason"] = diagnosis.reason(message, stage)
        if diagnosis.PLATFORM_PREFIX in message:
            record["cause"] = "platform-switch"
        return record

    def _merge(self, record: dict) -> None:
        # one record per specialisation (triton's key: signature, alignment, constexprs);
        # the grid check is the launch's, not the specialisation's: its own record
        key = record.get("key") or json.dumps(record["grid"])
        ident = (record["file"], record["kernel"], key, record.get("stage") == "launch")
        mine = self.by_triton_key.get(ident)
        if mine is None:
            self.by_triton_key[ident] = record
            return
        for test in record["tests"]:
            if test not in mine["tests"]:
                mine["tests"].append(test)
        if record.get("dropped_by_autotuner"):
            mine["dropped_by_autotuner"] = True
        grid_coverage.merge(mine, record)

    # -- report -------------------------------------------------------------------------
    def report(self) -> dict:
        for record in self.records.values():
            self._merge(_portable(record))
        specs = list(self.by_triton_key.values())
        compiled = [s for s in specs if s["status"] in ("ok", "rejected") and not s.get("cached")]
        times = [s["ms"] for s in compiled if s.get("ms") is not None]
        verdicts, ir_only = confirm.judge(specs)
        return {
            "version": REPORT_VERSION,
            "target": {"backend": "npu", "arch": os.environ.get(NPU_ARCH_ENV, DEFAULT_NPU_ARCH)},
            "stages": list(STAGES),
            "mode": "strict" if self.strict else "report",
            "summary": {
                "kernels": len({(s["file"], s["kernel"]) for s in specs}),
                "specialisations": len(specs),
                "rejected": sum(s["status"] == "rejected" for s in specs),
                "not_compiled": sum(s["status"] == "not-compiled" for s in specs),
                "compile_ms_total": round(sum(times), 1),
                "compile_ms_mean": round(sum(times) / len(times), 1) if times else None,
                "worker_restarts": self.client.restarts,
                "worker_startup_wait_ms": self.startup_ms,
                "confirmed": sum(v["status"] == "confirmed" for v in verdicts),
                "contradicted": sum(v["status"] == "contradicted" for v in verdicts),
                "unverifiable": sum(v["status"] == "unverifiable" for v in verdicts),
                **ub_verdict.summary(specs, self.ub_target),
                "grid_findings": sum(len(s.get("grid_coverage", ())) for s in specs),
                "dropped_by_autotuner": sum(bool(s.get("dropped_by_autotuner")) for s in specs),
                "loaded_from_source": len(
                    {(s["file"], s["kernel"]) for s in specs if s.get("loaded_from_source")}
                ),
            },
            "specialisations": sorted(specs, key=lambda s: (s["file"], s["def_line"], s["key"])),
            "ir_confirmation": verdicts,
            "ir_only": ir_only,
            "grid_coverage": [f for s in specs for f in s.get("grid_coverage", ())],
        }


def _overflows(record: dict) -> bool:
    return (record.get("ub") or {}).get("verdict") == "overflows"


def _strict_text(record: dict) -> str:
    if record.get("stage") == "grid":  # grid_coverage.as_failure: no specialisation to show
        loc = record["location"]
        where = f"{diagnosis.shown_path(loc['file'], os.getcwd())}:{loc['line']}"
        return f"{where}: {record['kernel']} (grid): {record['reason']}"
    if record["status"] == "rejected":
        return _failure_text(record)
    where = f"{diagnosis.shown_path(record['file'], os.getcwd())}:{record['def_line']}"
    if record["status"] == "not-compiled":
        return f"{where}: {record['kernel']}: not compiled: {record['message']}"
    return ub_verdict.failure_text(record, where)


def _portable(record: dict) -> dict:
    return {k: v for k, v in record.items()}


def _where(site) -> dict | None:
    return None if site is None else {"file": site[0], "line": site[1]}


def _locate(message: str, launch: capture.Launch, stage: str) -> dict:
    """The best source line for a failure: the compiler's own location in the kernel's
    file, else any source location it names, else (grid check) the launch, else the
    kernel's ``def`` line."""
    inferred = (
        (diagnosis.PLATFORM_PREFIX, "the call (the compiler names where its result is used)"),
        (diagnosis.HINT_PREFIX, "TTIR (the compiler gave none)"),
    )
    for prefix, source in inferred:
        hinted = message.split(prefix, 1)[1].split("\n", 1)[0] if prefix in message else ""
        for m in _LOC.finditer(hinted):
            if m.group(1):
                return {
                    "file": os.path.realpath(m.group(1)),
                    "line": int(m.group(2)),
                    "column": int(m.group(3)),
                    "source": source,
                }
    found = []
    for m in _LOC.finditer(message):
        path, line, col = (m.group(1), m.group(2), m.group(3)) if m.group(1) else m.group(4, 5, 6)
        found.append((os.path.realpath(path), int(line), int(col)))
    kernel_file = os.path.realpath(launch.file)
    in_kernel = [f for f in found if f[0] == kernel_file and int(f[1]) > 0]
    if in_kernel:
        path, line, col = in_kernel[0]
        return {"file": path, "line": line, "column": col, "source": "compiler"}
    if stage == "launch" and launch.launch_site:
        return {"file": launch.launch_site[0], "line": launch.launch_site[1], "source": "launch"}
    user = [f for f in found if "site-packages" not in f[0] and f[1] > 0]
    if user:
        path, line, col = user[0]
        return {"file": path, "line": line, "column": col, "source": "compiler"}
    return {"file": kernel_file, "line": launch.def_line, "source": "kernel (no location given)"}


def _failure_text(record: dict, root: str | None = None) -> str:
    """The probable cause first, then the specialisation, then the compiler's words."""
    root = root or os.getcwd()
    loc = record.get("location") or {}
    where = f"{diagnosis.shown_path(loc.get('file', record['file']), root)}:{loc.get('line', record['def_line'])}"
    head = f"{where}: {record['kernel']} ({record['stage']}): {record['reason']}"
    lines = [
        head,
        f"  rejected by {diagnosis.front_end()}'s front end (the version this gate runs)",
        f"  specialisation: {diagnosis.specialisation_text(record)}",
    ]
    if loc.get("source") and loc["source"] != "compiler":
        lines.append(f"  location: {loc['source']}")
    inferred = (diagnosis.HINT_PREFIX, diagnosis.PLATFORM_PREFIX)
    detail = [
        ln
        for ln in record["message"].splitlines()
        if ln.strip() and not ln.startswith(inferred) and ln.strip() != record["reason"]
    ]
    shown = detail[:DETAIL_LINES]
    lines.extend("  | " + ln for ln in shown)
    if len(detail) > len(shown):
        lines.append(f"  | ... {len(detail) - len(shown)} more lines in the report's message")
    return "\n".join(lines)


DETAIL_LINES = 10


def _print_nothing_captured(tr, interpreter_seen: bool) -> None:
    """A gate that compiled nothing must say so: a strict run would pass unchecked."""
    tr.write_sep("=", "Ascend compile")
    tr.write_line("0 specialisations captured: no kernel launch was checked.")
    tr.write_line("Usual causes:")
    if not interpreter_seen and os.environ.get("TRITON_INTERPRET") != "1":
        tr.write_line("  * TRITON_INTERPRET is not 1 in this process: the kernels ran on a device")
        tr.write_line(
            "    (a GPU run) or not at all; the gate records launches under the interpreter"
        )
    tr.write_line(
        "  * kernel modules imported before TRITON_INTERPRET=1 was set: set it first, in the"
    )
    tr.write_line('    root conftest.py: import os; os.environ.setdefault("TRITON_INTERPRET", "1")')
    tr.write_line("  * the selected tests launch no kernel (or were all skipped)")


def _print_report(tr, report: dict, report_path: str | None) -> None:
    s = report["summary"]
    root = str(tr.config.rootpath)
    tr.write_sep("=", "Ascend compile")
    mean = f", {s['compile_ms_mean']} ms mean per new one" if s["compile_ms_mean"] else ""
    tr.write_line(
        f"{plural(s['specialisations'], 'specialisation')} of {plural(s['kernels'], 'kernel')} through "
        f"{' -> '.join(report['stages'])} ({report['target']['arch']}){mean}: "
        f"{s['rejected']} rejected, {s['not_compiled']} not compiled"
    )
    for line in ub_verdict.report_lines(report, lambda path: diagnosis.shown_path(path, root)):
        tr.write_line(line)
    not_compiled: dict[tuple[str, str], list[dict]] = {}
    for spec in report["specialisations"]:
        if spec["status"] == "rejected":
            tr.write_line(_failure_text(spec, root))
            tests = spec["tests"]
            tr.write_line(
                f"  launched by: {', '.join(tests[:5])}{' ...' if len(tests) > 5 else ''}"
            )
        elif spec["status"] == "not-compiled":
            reason = spec["message"].splitlines()[0] if spec["message"] else "?"
            where = (
                f"{diagnosis.shown_path(spec['file'], root)}:{spec['def_line']}: {spec['kernel']}"
            )
            not_compiled.setdefault((where, reason), []).append(spec)
    for (where, reason), same in not_compiled.items():
        times = f" ({len(same)} specialisations)" if len(same) > 1 else ""
        tr.write_line(f"{where}: not compiled{times}: {reason}")
    loaded = {}
    for spec in report["specialisations"]:
        if spec.get("loaded_from_source"):
            where = (
                f"{diagnosis.shown_path(spec['file'], root)}:{spec['def_line']}: {spec['kernel']}"
            )
            loaded.setdefault(where, spec["loaded_from_source"])
    for where, stood_in in loaded.items():
        replaced = ", ".join(stood_in["replaced"]) or "nothing"
        tr.write_line(
            f"{where}: loaded from its source (its module does not import here: "
            f"{stood_in['import_failure']}); stood in for: {replaced}"
        )
    for v in sorted(report["ir_confirmation"], key=lambda v: (v["file"], v["line"], v["code"])):
        where = f"{diagnosis.shown_path(v['file'], root)}:{v['line']}: {v['code']}"
        if v["status"] == "not-lowered":
            tr.write_line(f"{where} not judged: no specialisation lowered its lines")
            continue
        if v["status"] == "unverifiable":
            tr.write_line(
                f"{where} unverifiable from the lowered IR: its loop is a tl.static_range, "
                f"unrolled, and none of {plural(v['specialisations'], 'specialisation')} shows the branch "
                "repeated"
            )
            continue
        count = len(v["confirmed_by"]) or len(v["contradicted_by"])
        tr.write_line(
            f"{where} {v['status']} by the lowered IR in {count} of "
            f"{plural(v['specialisations'], 'specialisation')}"
        )
    for found in report.get("grid_coverage", ()):
        tr.write_line(grid_coverage.summary_line(found, root))
    for fact in report["ir_only"]:
        tr.write_line(
            f"{diagnosis.shown_path(fact['file'], root)}:{fact['lines'][0]}: IR only: {fact['kind']}: {fact['detail']}"
        )
    if report_path:
        tr.write_line(f"report written to {report_path}")
