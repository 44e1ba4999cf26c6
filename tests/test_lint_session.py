"""One lint session: `--fix` lints and fixes each file in the worker that reads it, with
the number of workers `-j` says, and Ctrl-C ends a run promptly."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ascend_lint.cli import main

KERNEL = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def k_{i}(x, BT: tl.constexpr):
        tl.store(x + tl.arange(0, BT), 0.0)


    def launch_{i}(x):
        k_{i}[(1,)](x, BT=64, num_warps=4)
    """
)


def tree(root: Path, files: int, kernels_per_file: int) -> Path:
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    src = root / "src"
    src.mkdir()
    for f in range(files):
        body = "".join(KERNEL.format(i=i) for i in range(kernels_per_file))
        (src / f"m{f}.py").write_text(body)
    return src


def test_fix_with_one_job_starts_no_worker(tmp_path, monkeypatch, capsys):
    src = tree(tmp_path, files=24, kernels_per_file=60)  # past the pool's size threshold
    monkeypatch.chdir(tmp_path)

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool was started with -j 1")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    assert main(["--fix", "-j", "1", "--no-cache", str(src)]) == 0
    assert "num_warps" not in (src / "m0.py").read_text()
    assert "Found 1440 errors (1440 fixed, 0 remaining)" in capsys.readouterr().out


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT")
def test_ctrl_c_during_fix_into_an_unread_pipe_exits_at_once(tmp_path):
    # large enough that a quiet machine is still fixing it when the signal comes
    src = tree(tmp_path, files=96, kernels_per_file=400)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ascend_lint", "--fix", "-j", "2", "--no-cache", str(src)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,  # never read
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a shell's foreground job
    )
    try:
        time.sleep(3.0)  # workers started and busy
        assert proc.poll() is None, "the run ended before it could be interrupted"
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends: the whole group
        started = time.perf_counter()
        code = proc.wait(timeout=10)
        elapsed = time.perf_counter() - started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert code == 130
    assert elapsed < 2.0, f"took {elapsed:.1f} s to exit after Ctrl-C"
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):  # no process of the group is left
        os.killpg(proc.pid, 0)
