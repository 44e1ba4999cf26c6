"""Nothing lost, nothing contradictory: the command line never deletes or rewrites what
the user did not ask it to, and says plainly when it could not do what was asked."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
import textwrap

from lint_helpers import KERNEL_WITH_NUM_WARPS

from ascend_lint.cache import CACHE_TAG, is_cache_folder
from ascend_lint.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_refuses_a_folder_that_is_not_its_cache(project, capsys):
    (project / "keep.txt").write_text("precious")
    code, _, err = run(capsys, "clean", "--cache-dir", ".")
    assert code == 2
    assert "refusing to remove" in err and "nothing was deleted" in err
    assert (project / "keep.txt").read_text() == "precious"


def test_clean_with_a_configured_source_folder_deletes_nothing(project, capsys):
    (project / "pyproject.toml").write_text('[tool.ascend-lint]\ncache-dir = "src"\n')
    (project / "src").mkdir()
    (project / "src" / "kernel.py").write_text(KERNEL_WITH_NUM_WARPS)
    assert run(capsys, "src")[0] == 1  # a lint run must not claim the folder either
    assert sorted(p.name for p in (project / "src").iterdir()) == ["kernel.py"]
    code, _, err = run(capsys, "clean")
    assert code == 2 and "refusing" in err
    assert (project / "src" / "kernel.py").exists()


def test_clean_removes_the_cache_it_wrote(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    run(capsys, "k.py")
    cache = project / ".ascend_lint_cache"
    assert is_cache_folder(cache) and (cache / CACHE_TAG).exists()
    code, out, _ = run(capsys, "clean")
    assert code == 0 and "Removing cache" in out
    assert not cache.exists()
    assert run(capsys, "clean")[0] == 0  # nothing to remove is not an error


def test_report_into_a_missing_folder_creates_it(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, _, _ = run(capsys, "k.py", "--output-format", "sarif", "-o", "reports/x.sarif")
    assert code == 1
    assert (project / "reports" / "x.sarif").read_text().startswith("{")


def test_report_onto_a_folder_is_an_error_not_a_traceback(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    (project / "out").mkdir()
    code, _, err = run(capsys, "k.py", "-o", "out")
    assert code == 2
    assert "cannot write the report to out" in err


def test_a_missing_path_is_not_all_checks_passed(project, capsys):
    code, out, err = run(capsys, "does/not/exist.py")
    assert code == 2
    assert "No such file or directory" in err
    assert "All checks passed" not in out


def test_help_and_version_are_commands_not_paths(project, capsys):
    code, out, _ = run(capsys, "help")
    assert code == 0 and "  rule     explain a rule" in out
    code, out, _ = run(capsys, "help", "clean")
    assert code == 0 and "usage: ascend-lint clean" in out
    code, out, _ = run(capsys, "version")
    assert code == 0 and out.startswith("ascend-lint ")


def test_unsafe_fixes_enabled_hides_no_fixes(project, capsys):
    (project / "k.py").write_text(
        KERNEL_WITH_NUM_WARPS
        + "\n\n@triton.jit\ndef k2(x):\n    i = tl.program_id(0)\n    y = (i * 4).to(tl.int64)\n"
    )
    _, out, _ = run(capsys, "k.py")
    hint = "can be enabled with the `--unsafe-fixes` option"
    assert (
        "(1 hidden fix can be enabled with the `--unsafe-fixes` option.)" in out
    )  # one, not "fixes"
    _, out, _ = run(capsys, "k.py", "--unsafe-fixes")
    assert hint not in out
    assert "[*] 2 fixable with the `--fix` option." in out


def test_fix_leaves_a_read_only_file_untouched(project, capsys):
    target = project / "k.py"
    target.write_text(KERNEL_WITH_NUM_WARPS)
    os.chmod(target, 0o444)
    try:
        code, _, err = run(capsys, "--fix", "k.py")
        assert code == 2
        assert "read-only" in err and "file left unchanged" in err
        assert target.read_text() == KERNEL_WITH_NUM_WARPS
        assert stat.S_IMODE(target.stat().st_mode) == 0o444
    finally:
        os.chmod(target, 0o644)


def test_fix_keeps_the_file_mode(project, capsys):
    target = project / "k.py"
    target.write_text(KERNEL_WITH_NUM_WARPS)
    os.chmod(target, 0o750)
    assert run(capsys, "--fix", "k.py")[0] == 0
    assert "num_warps" not in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


def test_an_explicit_fifo_is_an_error_that_says_what_it_is(project, capsys):
    import pytest

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    os.mkfifo(project / "pipe.py")
    code, out, err = run(capsys, "pipe.py")
    assert code == 2
    assert (
        err
        == "error: pipe.py: not a regular file or folder (a named pipe); name a file or a folder\n"
    )
    assert "All checks passed" not in out


def test_an_index_bug_in_one_file_loses_no_other_file(project, capsys, monkeypatch):
    """A crash while indexing one file is that file's internal error (exit 2, named with
    the file); the other files are still linted and reported."""
    from ascend_lint.index import KernelIndex

    real_build = KernelIndex.build.__func__

    def build(cls, tree):
        if any(isinstance(n, ast.Name) and n.id == "boom" for n in ast.walk(tree)):
            raise AttributeError("a bug")
        return real_build(cls, tree)

    monkeypatch.setattr(KernelIndex, "build", classmethod(build))
    (project / "good.py").write_text(KERNEL_WITH_NUM_WARPS)
    (project / "bad.py").write_text(KERNEL_WITH_NUM_WARPS + "boom = 1\n")
    code, out, err = run(capsys, "--no-cache", "-j", "1", "--output-format", "concise", ".")
    assert code == 2
    assert "bad.py: internal error while indexing: AttributeError: a bug" in err
    assert "good.py:" in out and "ASC004" in out and "bad.py:" not in out


_INTERRUPT_AFTER_THE_RUN = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from ascend_lint import cli

    done = threading.Event()
    run = cli.main

    def main_then_signal(argv=None):
        try:
            return run(argv)
        finally:
            done.set()

    def interrupt_after_the_run():
        done.wait()
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)

    cli.main = main_then_signal
    threading.Thread(target=interrupt_after_the_run).start()
    # a thread the interpreter waits for on its way out, as it does for a worker pool's
    threading.Thread(target=time.sleep, args=(3,)).start()
    sys.argv = ["ascend-lint", "--no-cache", sys.argv[1]]
    cli.run_console()
    """
)


def test_ctrl_c_while_exiting_is_status_130_without_a_traceback(tmp_path):
    (tmp_path / "plain.py").write_text("x = 1\n")
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPT_AFTER_THE_RUN, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr
    assert "All checks passed!" in done.stdout
