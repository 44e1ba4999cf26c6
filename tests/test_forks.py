"""`forks`: a job in a fork of this process, its result or its exception sent back."""

from __future__ import annotations

import os
import signal
import time

import pytest

from ascend_lint import forks

pytestmark = pytest.mark.skipif(not forks.CAN_FORK, reason="forks only on Linux")


def test_a_fork_returns_what_its_job_returns():
    parent = os.getpid()
    fork = forks.forked(lambda: (os.getpid(), os.getppid(), list(range(100_000))))
    done, (pid, ppid, numbers) = fork.result()
    assert done and pid == fork.pid != parent and ppid == parent
    assert numbers == list(range(100_000))  # more than a pipe's buffer holds


def test_what_the_job_raises_is_raised_in_the_parent():
    class Refused(Exception):
        pass

    def job():
        raise KeyError("no such part")

    with pytest.raises(KeyError, match="no such part"):
        forks.forked(job).result()
    # an exception that does not pickle (a local class) still arrives, as its text
    with pytest.raises(RuntimeError, match="Refused: local"):
        forks.forked(lambda: (_ for _ in ()).throw(Refused("local"))).result()


def test_a_fork_that_dies_or_overruns_is_not_done():
    assert forks.forked(lambda: os._exit(3)).result() == (False, 3)
    started = time.monotonic()
    assert forks.forked(lambda: time.sleep(60)).result(timeout=0.5) == (False, "timeout")
    assert time.monotonic() - started < 10
    assert not forks._live


def test_an_abandoned_fork_is_ended_and_reaped():
    fork = forks.forked(lambda: time.sleep(60))
    fork.abandon()
    with pytest.raises(ProcessLookupError):
        os.kill(fork.pid, 0)  # reaped: no zombie left with its pid
    fork.abandon()  # twice: nothing (its pid may be another process's by now)
    assert not forks._live


def test_a_fork_ends_with_the_process_that_forked_it(tmp_path):
    """A fork of a fix process that is killed for overrunning does not outlive it."""
    pid_file = tmp_path / "grandchild"
    middle = os.fork()
    if middle == 0:  # a fix process: forks a long job, then is killed
        try:
            fork = forks.forked(lambda: time.sleep(60))
            pid_file.write_text(str(fork.pid))
            time.sleep(60)
        finally:
            os._exit(0)
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    grandchild = int(pid_file.read_text())
    os.kill(middle, signal.SIGKILL)
    os.waitpid(middle, 0)
    deadline = time.monotonic() + 10
    while _alive(grandchild):
        assert time.monotonic() < deadline, "the fork outlived its parent"
        time.sleep(0.01)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ")[1][0] != "Z"  # a zombie waits for init to reap it
    except FileNotFoundError:
        return False


def test_cores_is_what_this_process_may_use():
    assert 1 <= forks.cores() <= min(len(os.sched_getaffinity(0)), 8)


def test_a_fork_that_cannot_be_made_is_not_done(monkeypatch):
    def refuse():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    fork = forks.forked(lambda: 1)
    done, why = fork.result()
    assert not done and "Resource temporarily unavailable" in why
    fork.abandon()  # nothing to end
