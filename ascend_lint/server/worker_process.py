"""Work on a big buffer in a process of its own (a fix-all, or a lint of the whole text),
its result pickled back through a pipe: a fork of the server on Linux, else `python -m
ascend_lint.server.worker_process`, which reads the pickled job from stdin. A job is a
module-level function and its arguments (pickled by name: this module imports none of
its callers).

In the server, each parse of a big buffer would hold the interpreter lock for hundreds of
milliseconds at a time (a hover sent meanwhile would wait for it), and the syntax tree
and index of a whole lint would leave the server's memory fragmented: an 818 KB module's
lint takes ~115 MB, of which the allocator hands back under a fifth. The process has
only pipes to the server (none to the editor) and ends with its one job.
"""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys

from ascend_lint.forks import CAN_FORK, cores, end_all, forked
from ascend_lint.options import LintOptions

_running: list[subprocess.Popen] = []
# On Linux the job runs in a fork of the server: the engine is already imported there
# (a new interpreter takes ~0.3 s to start and import it). Elsewhere, a new interpreter.
FORK = CAN_FORK
# A job still running after this long is ended (and, for a lint, done in the server):
# generous for a real job, whose time grows with the text, but a bound on a hung one.
TIMEOUT_S = 60.0
TIMEOUT_S_PER_MB = 100.0
SPAWNED = [sys.executable, "-m", __name__]  # the new interpreter, off Linux


def run_apart(job: tuple, chars: int) -> tuple[bool, object]:
    """(done, result) of `job`, `(function, *arguments)`, on a text of `chars`
    characters, in a process of its own; not done if that process failed or ran out of
    time."""
    timeout = TIMEOUT_S + TIMEOUT_S_PER_MB * chars / 1e6
    return _run_forked(job, timeout) if FORK else _run_spawned(job, timeout)


def _run_spawned(job: tuple, timeout: float) -> tuple[bool, object]:
    process = subprocess.Popen(
        SPAWNED,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    _running.append(process)
    try:
        out, _ = process.communicate(pickle.dumps(job), timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return False, "timeout"
    finally:
        _running.remove(process)
    if process.returncode != 0:
        return False, process.returncode
    return True, pickle.loads(out)


def _run_forked(job: tuple, timeout: float) -> tuple[bool, object]:
    try:
        return forked(lambda: _do(job), quiet=True).result(timeout)
    except Exception:  # what the job raised: the process failed at its job
        return False, 1


def lint_whole_in_process(path: str, raw: bytes, options: LintOptions, lines: list[str]):
    """`incremental.lint_whole` in a new process (the same result and memo), or in this
    one if that process fails. `lines`: the text's lines, which the memo keeps."""
    from ascend_lint.incremental import lint_whole

    done, result = run_apart((_lint_whole_job, path, raw, options), len(raw))
    if not done:
        return lint_whole(path, raw, options)
    outcome, memo = result  # type: ignore[misc]
    if memo is not None:
        memo.lines = lines  # not sent back: the caller has them
    return outcome, memo


def end_running() -> None:
    """The server is leaving: its worker processes go with it."""
    for process in list(_running):
        with contextlib.suppress(OSError):
            process.kill()
    end_all()


def _do(job: tuple) -> object:
    function, *arguments = job
    return function(*arguments)


def _lint_whole_job(path: str, raw: bytes, options: LintOptions):
    from ascend_lint.incremental import lint_whole

    # This process runs only the job: it may fork to share the lint among the cores.
    outcome, memo = lint_whole(path, raw, options, cores())
    if memo is not None:
        memo.lines = []  # the server has its own copy of the text's lines
    return outcome, memo


def main() -> int:
    job = pickle.loads(sys.stdin.buffer.read())
    sys.stdout.buffer.write(pickle.dumps(_do(job), protocol=pickle.HIGHEST_PROTOCOL))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
