"""A job run in a fork of this process, its result pickled back through a pipe.

The fork starts with everything this process has (the engine imported, a buffer's
lint at hand), so it costs milliseconds where a new interpreter costs ~0.3 s. Only a
process with one thread, or whose other threads hold no lock the job needs, forks:
the server's fix process does, the server itself only for the job of that process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

# Forking needs `os.fork`, and a fork of a process with threads is only safe on Linux's
# allocator and loader; elsewhere the callers use a new interpreter, or no second process.
CAN_FORK = sys.platform.startswith("linux") and hasattr(os, "fork")

_live: set[int] = set()  # forks not yet reaped, ended with their parent's `end_all`
_PR_SET_PDEATHSIG = 1


class Fork:
    """A job running in a fork; `result` waits for it."""

    def __init__(self, pid: int, read_end: int) -> None:
        self.pid = pid
        self._read_end: int | None = read_end  # None once a file object owns it
        self._reaped = False  # then its pid and pipe may name another process and file

    def result(self, timeout: float | None = None) -> tuple[bool, object]:
        """(True, what the job returned), or (False, why not: "timeout" or the fork's
        exit code) when it died or ran past `timeout` seconds. What the job raised is
        raised here (if it pickles)."""
        watchdog = None
        if timeout is not None:
            # Ending the fork closes its end of the pipe: the read below returns.
            watchdog = threading.Timer(timeout, _end, (self.pid,))
            watchdog.daemon = True
            watchdog.start()
        try:
            fd, self._read_end = self._read_end, None
            with os.fdopen(fd, "rb") as pipe:
                data = pipe.read()
            _, status = os.waitpid(self.pid, 0)
            self._reaped = True
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if not self._reaped:
                self.abandon()
            _live.discard(self.pid)
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or not data:
            return False, "timeout" if code == -signal.SIGKILL else code
        raised, value = pickle.loads(data)
        if raised:
            raise value
        return True, value

    def abandon(self) -> None:
        """End the fork and reap it, unless `result` did; its result is not wanted."""
        if self._reaped:
            return
        self._reaped = True
        _end(self.pid)
        if self._read_end is not None:
            os.close(self._read_end)
            self._read_end = None
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        _live.discard(self.pid)


def forked(job: Callable[[], object], quiet: bool = False) -> Fork:
    """Start `job` in a fork of this process. `quiet`: the fork's standard streams go
    to /dev/null (the server's are the editor's pipes). Where no fork can be made (out
    of processes or memory), the Fork returned is not done: its caller does the job."""
    try:
        read_end, write_end = os.pipe()
    except OSError as exc:
        return _NotStarted(exc)
    parent = os.getpid()
    try:
        with warnings.catch_warnings():
            # Python 3.12 warns of forking a process with threads: the fork runs only the
            # job, on the engine's pure-Python code, and leaves with os._exit.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError as exc:
        os.close(read_end)
        os.close(write_end)
        return _NotStarted(exc)
    if pid == 0:  # the fork: never returns
        code = 1
        try:
            os.close(read_end)
            _die_with_parent(parent)
            if quiet:
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
            try:
                outcome: tuple[bool, object] = (False, job())
            except Exception as exc:  # raised again in the parent
                outcome = (True, exc)
            try:
                data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # what it returned or raised does not pickle: say what
                raised, value = outcome
                what = f"{type(value).__name__}: {value}" if raised else type(value).__name__
                data = pickle.dumps((True, RuntimeError(f"not sent back from the fork: {what}")))
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    _live.add(pid)
    return Fork(pid, read_end)


class _NotStarted(Fork):
    """A fork that could not be made."""

    def __init__(self, why: OSError) -> None:
        self.pid, self._read_end, self._reaped = 0, None, True
        self.why = f"no fork: {why}"

    def result(self, timeout: float | None = None) -> tuple[bool, object]:
        return False, self.why


def shared(jobs: Sequence[Callable[[], T]]) -> list[T]:
    """What each job returns, in order: the first runs here while each other one runs
    in a fork of this process; a fork that dies, or cannot be made, leaves its job to
    run here after. What a job raises is raised here, and the forks still running are
    ended. Where no fork can be made at all, the jobs run here one after another."""
    if len(jobs) < 2 or not CAN_FORK:
        return [job() for job in jobs]
    started = [forked(job) for job in jobs[1:]]
    try:
        results = [jobs[0]()]
        for job, fork in zip(jobs[1:], started):
            done, value = fork.result()  # raises what the job raised there
            results.append(value if done else job())  # type: ignore[arg-type]
    finally:
        for fork in started:
            fork.abandon()
    return results


def cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count), at
    most 8: a lint shared by more forks spends more on them than it saves. 1 where no
    fork can be made."""
    if not CAN_FORK:
        return 1
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    return max(1, min(count, 8))


def end_all() -> None:
    """This process is leaving: its forks go with it."""
    for pid in list(_live):
        _end(pid)


def _end(pid: int) -> None:
    with contextlib.suppress(OSError):  # already gone
        os.kill(pid, signal.SIGKILL)


def _die_with_parent(parent: int) -> None:
    """The fork is killed when the process that forked it ends (a fix process ended for
    running too long takes the forks sharing its lint with it)."""
    import ctypes  # in the fork only

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it ended before the request above
        os._exit(1)
