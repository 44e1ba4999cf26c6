"""Fix-all of a big buffer in a process of its own: `python -m
ascend_lint.server.fix_worker` reads a pickled buffer text with its settings from stdin
and writes the pickled result of `buffers.fix_all_text` to stdout.

In the server, the parse of each round would hold the interpreter lock for hundreds of
milliseconds at a time, and a hover sent meanwhile would wait for it. The process has
only pipes to the server (none to the editor) and ends with its one job.
"""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys

_running: list[subprocess.Popen] = []


def fix_all_in_process(buffer, unsafe: bool) -> tuple:
    """Run on a thread of the server: `fix_all_text(buffer, unsafe)` in a new process.

    Only the text and its settings cross over; the process lints the text again
    itself, since pickling a big file's findings would hold the server's interpreter
    lock for tens of milliseconds."""
    process = subprocess.Popen(
        [sys.executable, "-m", __name__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    _running.append(process)
    try:
        job = (buffer.path, buffer.text, buffer.version, buffer.resolved, unsafe)
        out, _ = process.communicate(pickle.dumps(job))
    finally:
        _running.remove(process)
    if process.returncode != 0:
        return None, 0, f"internal error: the fix process ended with code {process.returncode}"
    return pickle.loads(out)


def end_running() -> None:
    """The server is leaving: its fix processes go with it."""
    for process in list(_running):
        with contextlib.suppress(OSError):
            process.kill()


def main() -> int:
    from ascend_lint.server.buffers import fix_all_text, unlinted

    path, text, version, resolved, unsafe = pickle.loads(sys.stdin.buffer.read())
    buffer = unlinted(path, text, version, resolved)
    sys.stdout.buffer.write(pickle.dumps(fix_all_text(buffer, unsafe, relint=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
