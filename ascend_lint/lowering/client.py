"""The test process's handle on the compile worker: start it, ask it, restart it.

The worker is a long-lived subprocess so that triton and torch are imported once, and
so that a compiler abort (a C++ assertion in a pass, a segfault) kills only the worker:
the request it died on is answered with the signal and the end of its stderr, and the
next request starts a fresh worker.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

STARTUP_TIMEOUT_S = 300.0


class WorkerClient:
    def __init__(self, timeout_s: float = 300.0, cwd: str | None = None):
        self.timeout_s = timeout_s
        self.cwd = cwd
        self.restarts = 0
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._log = None
        self._ready = False
        self._next_id = 0

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker without waiting for it (it imports triton meanwhile)."""
        if self._proc is not None and self._proc.poll() is None:
            return
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        env["TRITON_DISABLE_LINE_INFO"] = "0"  # keeps loc("file":L:C) in the adapter's output
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        if self._log is not None:
            self._log.close()
        # lives as long as the worker; closed in close() or on the next start
        self._log = tempfile.TemporaryFile(mode="w+b")  # noqa: SIM115
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "ascend_lint.lowering.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            cwd=self.cwd,
        )
        self._lines = queue.Queue()
        self._ready = False
        threading.Thread(
            target=_pump, args=(self._proc.stdout, self._lines), daemon=True, name="ascend-compile"
        ).start()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                proc.stdin.close()
                proc.wait(timeout=10)
            except Exception:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    # -- requests -----------------------------------------------------------------------
    def wait_ready(self) -> bool:
        """Block until the worker has imported triton and said so."""
        self.start()
        if not self._ready:
            first = self._read(STARTUP_TIMEOUT_S)
            self._ready = isinstance(first, dict) and bool(first.get("ready"))
        return self._ready

    def compile(self, request: dict) -> dict:
        """One answer for one launch; never raises for the worker's failures."""
        if not self.wait_ready():
            return self._died(request, "the compile worker did not start", startup=True)
        self._next_id += 1
        request = {**request, "id": self._next_id}
        log_offset = self._log.tell() if self._log else 0
        try:
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._died(request, "the compile worker exited", log_offset=log_offset)
        answer = self._read(self.timeout_s)
        if answer is None:
            return self._died(request, "the compile worker exited", log_offset=log_offset)
        if answer == "timeout":
            self._proc.kill()
            return self._died(
                request,
                f"compiling took longer than {self.timeout_s:g} s; the worker was stopped",
                log_offset=log_offset,
                stage="timeout",
            )
        return answer

    def _read(self, timeout: float):
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout"
        if line is None:
            return None
        try:
            return json.loads(line)
        except ValueError:
            return {"ok": False, "stage": "protocol", "error": line.decode(errors="replace")}

    def _died(self, request, what, log_offset=0, startup=False, stage="abort") -> dict:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
        tail = self._log_tail(log_offset)
        self._proc = None
        self._ready = False
        self.restarts += 1
        if code is not None and code < 0:
            what += f" (killed by signal {-code})"
        elif code is not None:
            what += f" (exit status {code})"
        return {
            "id": request.get("id"),
            "ok": False,
            "stage": "startup" if startup else stage,
            "error": f"{what}\n{tail}".strip(),
            "ms": None,
        }

    def _log_tail(self, offset: int, limit: int = 6000) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        self._log.seek(offset)
        data = self._log.read().decode(errors="replace")
        self._log.seek(0, 2)
        # drop the worker's own request banners
        lines = [ln for ln in data.splitlines() if not ln.startswith("== request ")]
        return "\n".join(lines)[-limit:]


def _pump(stream, lines: queue.Queue) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(None)
