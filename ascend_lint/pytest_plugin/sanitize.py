"""``pytest --ascend-sanitize``: the memory sanitizer (``ascend_lint.sanitizer``) over every
kernel the tests launch under the interpreter (registered only when the option or the
``ascend_sanitize`` ini key turns it on).

Each finding is attributed to the tests that launched it; ``strict`` fails those tests
unless a ``@pytest.mark.ascend_sanitize_allow(kind=..., tensor=..., kernel=...)`` marker
accepts the finding.  Stores that repeat the bytes another program of the launch stored
are duplicate work, not findings: the summary counts them and strict mode ignores them.
The terminal summary lists the findings; with
``--ascend-compile-report`` the JSON report carries them under ``sanitizer`` (the
compile gate writes the file when it runs, this plugin when it runs alone).  Under
pytest-xdist each worker checks its own tests' launches and hands the findings to the
controller, which merges them and reports once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ascend_lint.pytest_plugin.names import PLUGIN_NAME as GATE_PLUGIN_NAME
from ascend_lint.pytest_plugin.names import SANITIZE_MARKER as ALLOW_MARKER
from ascend_lint.sanitizer import KINDS, MASKED_LANES_POLICY, Finding, Sanitizer
from ascend_lint.sanitizer.findings import DuplicateStores, Unattributed

REPORT_VERSION = 1
WORKEROUTPUT_KEY = "ascend_sanitize"


class SanitizeGate:
    def __init__(self, config, strict: bool, report_path: str | None):
        self.config = config
        self.strict = strict
        self.report_path = report_path
        self.sanitizer = Sanitizer(on_finding=self._on_finding)
        self.item = None
        self.pending: dict[str, list[Finding]] = {}  # node id -> findings to fail it for
        self.merged: dict[tuple, Finding] = {}  # the controller's, from xdist workers
        self.merged_notes: dict[tuple, Unattributed] = {}
        self.merged_duplicates: dict[tuple, DuplicateStores] = {}
        self.merged_counts: dict[str, int] = {}
        self.merged_kernels: set[tuple[str, str]] = set()
        self.is_xdist_worker = hasattr(config, "workerinput")
        self.is_xdist_controller = False

    # -- session ------------------------------------------------------------------------
    def pytest_sessionstart(self, session):
        self.is_xdist_controller = self.config.pluginmanager.hasplugin("dsession")

    def pytest_collection_modifyitems(self, session, config, items):
        for item in items:
            check_marker(item)

    def pytest_collection_finish(self, session):
        self._install()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        self._install()

    def _install(self) -> None:
        # not before triton's interpreter is loaded: importing triton here would decorate
        # triton's own helpers before the test suite set TRITON_INTERPRET
        if self.sanitizer.installed or self.is_xdist_controller:
            return
        if "triton.runtime.interpreter" in sys.modules:
            self.sanitizer.install()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.item = item
        self.sanitizer.current_test = item.nodeid
        try:
            yield
        finally:
            self.item = None
            self.sanitizer.current_test = None

    def _on_finding(self, finding: Finding, test: str | None) -> None:
        if test is None or self.item is None:
            return
        if _allowed(self.item, finding):
            finding.allowed_by.append(test)
        else:
            self.pending.setdefault(test, []).append(finding)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.when != "call" or not self.strict:
            return
        found = self.pending.pop(item.nodeid, [])
        if not found:
            return
        report = outcome.get_result()
        if report.skipped:
            return  # an expected failure (xfail) already says the test fails
        root = str(self.config.rootpath)
        text = "\n\n".join("\n".join(f.lines(root)) for f in found)
        if report.passed:
            report.outcome = "failed"
            report.longrepr = (
                "a kernel touched memory it does not own (--ascend-sanitize=strict); "
                f"mark the test @pytest.mark.{ALLOW_MARKER}(kind=...) if it does so on purpose:"
                f"\n\n{text}"
            )
        elif report.failed:
            report.sections.append(("Ascend sanitize (strict)", text))

    def pytest_sessionfinish(self, session):
        self.sanitizer.uninstall()
        if self.is_xdist_worker:
            self.config.workeroutput[WORKEROUTPUT_KEY] = json.dumps(
                {
                    "findings": self.sanitizer.as_dicts(),
                    "unattributed": [n.as_dict() for n in self.sanitizer.unattributed.values()],
                    "duplicates": [n.as_dict() for n in self.sanitizer.duplicates.values()],
                    "counts": self.sanitizer.counts.as_dict(),
                    "kernels": sorted(self.sanitizer.counts.kernels),
                    "race_untracked": sorted(self.sanitizer.untracked),
                }
            )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        data = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if not data:
            return
        data = json.loads(data)
        for entry in data["findings"]:
            found = Finding.from_dict(entry)
            mine = self.merged.get(found.key)
            if mine is None:
                self.merged[found.key] = found
            else:
                mine.merge(found)
        for entry in data["unattributed"]:
            note = Unattributed(**entry)
            mine = self.merged_notes.get(note.key)
            if mine is None:
                self.merged_notes[note.key] = note
            else:
                mine.lanes += note.lanes
                mine.tests.extend(t for t in note.tests if t not in mine.tests)
        for entry in data["duplicates"]:
            note = DuplicateStores(**entry)
            mine = self.merged_duplicates.get(note.key)
            if mine is None:
                self.merged_duplicates[note.key] = note
            else:
                mine.merge(note)
        for name, value in data["counts"].items():
            self.merged_counts[name] = self.merged_counts.get(name, 0) + value
        self.merged_kernels.update(tuple(k) for k in data["kernels"])
        self.sanitizer.untracked.update(tuple(k) for k in data["race_untracked"])

    # -- report -------------------------------------------------------------------------
    def findings(self) -> list[Finding]:
        found = dict(self.sanitizer.findings)
        for key, value in self.merged.items():
            if key in found:
                found[key].merge(value)
            else:
                found[key] = value
        return sorted(found.values(), key=lambda f: (f.site.path, f.site.line, f.kind))

    def notes(self) -> list[Unattributed]:
        notes = {**self.sanitizer.unattributed, **self.merged_notes}
        return sorted(notes.values(), key=lambda n: (n.path, n.line))

    def duplicates(self) -> list[DuplicateStores]:
        found = {k: DuplicateStores(**n.as_dict()) for k, n in self.sanitizer.duplicates.items()}
        for key, note in self.merged_duplicates.items():
            if key in found:
                found[key].merge(note)
            else:
                found[key] = note
        return sorted(found.values(), key=lambda n: (n.path, n.line, n.tensor))

    def counts(self) -> dict:
        counts = self.sanitizer.counts.as_dict()
        for name, value in self.merged_counts.items():
            counts[name] = counts.get(name, 0) + value
        counts["kernels"] = len(self.sanitizer.counts.kernels | self.merged_kernels)
        return counts

    def report_section(self) -> dict:
        """What the JSON report carries: ``sanitizer`` (the findings) and
        ``sanitizer_summary``."""
        findings = [f.as_dict() for f in self.findings()]
        counts = self.counts()
        duplicates = [n.as_dict() for n in self.duplicates()]
        by_kind = {kind: sum(f["kind"] == kind for f in findings) for kind in KINDS}
        return {
            "sanitizer": findings,
            "sanitizer_summary": {
                "mode": "strict" if self.strict else "report",
                **counts,
                "findings": len(findings),
                **{kind.replace("-", "_"): n for kind, n in by_kind.items()},
                "allowed": sum(f["allowed"] for f in findings),
                "masked_lanes_policy": MASKED_LANES_POLICY,
                "unattributed": [n.as_dict() for n in self.notes()],
                "duplicate_store_lanes": sum(n["lanes"] for n in duplicates),
                "duplicate_stores": duplicates,
                "race_untracked": sorted(f"{k}: {t}" for k, t in self.sanitizer.untracked),
            },
        }

    def pytest_terminal_summary(self, terminalreporter):
        if self.is_xdist_worker:
            return
        section = self.report_section()
        gate_writes = self.config.pluginmanager.get_plugin(GATE_PLUGIN_NAME) is not None
        if self.report_path and not gate_writes:
            path = Path(self.report_path)
            if not path.is_absolute():
                path = Path(self.config.invocation_params.dir) / path
            path.parent.mkdir(parents=True, exist_ok=True)
            report = {"version": REPORT_VERSION, **section}
            path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        if self.config.option.collectonly:
            return
        _print(
            terminalreporter,
            section,
            self.findings(),
            self.notes(),
            self.duplicates(),
            str(self.config.rootpath),
        )


def _allowed(item, finding: Finding) -> bool:
    for marker in item.iter_markers(ALLOW_MARKER):
        kinds = marker.kwargs.get("kind", marker.args[0] if marker.args else None)
        if isinstance(kinds, str):
            kinds = (kinds,)
        if kinds is not None and finding.kind not in kinds:
            continue
        tensor = marker.kwargs.get("tensor")
        if tensor is not None and finding.storage.param != tensor:
            continue
        kernel = marker.kwargs.get("kernel")
        if kernel is not None and finding.site.kernel != kernel:
            continue
        return True
    return False


def check_marker(item) -> None:
    """A marker naming a kind that does not exist is a usage error, not a silent allow."""
    for marker in item.iter_markers(ALLOW_MARKER):
        kinds = marker.kwargs.get("kind", marker.args[0] if marker.args else None)
        for kind in (kinds,) if isinstance(kinds, str) else (kinds or ()):
            if kind not in KINDS:
                raise pytest.UsageError(
                    f"{item.nodeid}: {ALLOW_MARKER}(kind={kind!r}): the kinds are {', '.join(KINDS)}"
                )


def _print(
    tr,
    section: dict,
    findings: list[Finding],
    notes: list[Unattributed],
    duplicates: list[DuplicateStores],
    root: str,
) -> None:
    s = section["sanitizer_summary"]
    tr.write_sep("=", "Ascend sanitize")
    if not s["launches"]:
        tr.write_line("0 launches checked: no kernel ran under the interpreter in this run.")
        tr.write_line(
            "  the sanitizer checks kernels launched with TRITON_INTERPRET=1 set before the "
            "kernel modules were imported (the usual place: the root conftest.py)"
        )
        return
    kinds = ", ".join(f"{s[k.replace('-', '_')]} {k}" for k in KINDS if s[k.replace("-", "_")])
    allowed = f", {s['allowed']} accepted by a marker" if s["allowed"] else ""
    twice = (
        f"; {_n(s['duplicate_store_lanes'], 'lane')} stored twice with the same bytes"
        if s["duplicate_store_lanes"]
        else ""
    )
    tr.write_line(
        f"{_n(s['launches'], 'launch', 'launches')} of {_n(s['kernels'], 'kernel')} checked "
        f"({_n(s['programs'], 'program')}; {_n(s['loads'], 'load')}, {_n(s['stores'], 'store')}, "
        f"{_n(s['atomics'], 'atomic')}): {_n(s['findings'], 'finding')}"
        + (f" ({kinds})" if kinds else "")
        + allowed
        + twice
    )
    for found in findings:
        for line in found.lines(root):
            tr.write_line(line)
    for note in notes:
        tr.write_line(note.line_text(root))
    for note in duplicates:
        tr.write_line(note.line_text(root))
    for entry in s["race_untracked"]:
        tr.write_line(f"races not tracked (storage too large): {entry}")


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else (plural or word + 's')}"
