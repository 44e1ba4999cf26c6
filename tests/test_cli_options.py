"""Command-line options a Ruff user reaches for, with Ruff's names and behaviour."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from lint_helpers import CLEAN_KERNEL, KERNEL_WITH_NUM_WARPS

from ascend_lint.cli import main
from ascend_lint.reporters.style import style_for
from ascend_lint.settings import load_settings

TWO_RULES = (
    KERNEL_WITH_NUM_WARPS
    + "\n\n@triton.jit\ndef k2(x):\n    i = tl.program_id(0)\n    y = (i * 4).to(tl.int64)\n"
)


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def codes(out: str) -> list[str]:
    return sorted(d["code"] for d in json.loads(out))


def test_repeated_select_combines(project, capsys):
    (project / "k.py").write_text(TWO_RULES)
    _, out, _ = run(capsys, "--output-format", "json", "--select", "ASC004", "k.py")
    assert codes(out) == ["ASC004"]
    args = ["--output-format", "json", "--select", "ASC004", "--select", "ASC007", "k.py"]
    assert codes(run(capsys, *args)[1]) == ["ASC004", "ASC007"]
    args = ["--output-format", "json", "--ignore", "ASC004", "--ignore", "ASC007", "k.py"]
    assert codes(run(capsys, *args)[1]) == []


def test_per_file_ignores_exclude_and_fixability_on_the_command_line(project, capsys):
    (project / "k.py").write_text(TWO_RULES)
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(KERNEL_WITH_NUM_WARPS)
    args = ["--output-format", "json", "--per-file-ignores", "k.py:ASC004", "."]
    found = json.loads(run(capsys, *args)[1])
    assert {(d["filename"].split("/")[-1], d["code"]) for d in found} == {
        ("k.py", "ASC007"),
        ("old.py", "ASC004"),
    }
    args = ["--output-format", "json", "--extend-exclude", "legacy", "."]
    found = json.loads(run(capsys, *args)[1])
    assert {d["filename"].split("/")[-1] for d in found} == {"k.py"}
    _, out, _ = run(capsys, "--output-format", "json", "--unfixable", "ASC004", "k.py")
    assert all(d["fix"] is None for d in json.loads(out) if d["code"] == "ASC004")
    code, _, err = run(capsys, "--per-file-ignores", "k.py", "k.py")
    assert code == 2 and "GLOB:CODES" in err


def test_short_flags_and_silent(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    assert run(capsys, "-e", "-n", "k.py")[0] == 0
    assert not (project / ".ascend_lint_cache").exists()  # -n: no cache written
    code, out, err = run(capsys, "-s", "k.py")
    assert code == 1 and out == "" and err == ""


def test_show_files_lists_what_would_be_linted(project, capsys):
    (project / "k.py").write_text(CLEAN_KERNEL)
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text(CLEAN_KERNEL)
    (project / "notes.txt").write_text("not python")
    code, out, _ = run(capsys, "--show-files", "--extend-exclude", "build", ".")
    assert code == 0
    assert [line.split("/")[-1] for line in out.splitlines()] == ["k.py"]


def test_rule_by_its_kebab_name(project, capsys):
    code, out, _ = run(capsys, "rule", "strided-time-gather")
    assert code == 0 and out.startswith("# strided-time-gather (ASC001)")
    code, _, err = run(capsys, "rule", "strided-gather")
    assert code == 2 and "did you mean `strided-time-gather`?" in err


def test_config_overrides_and_isolated(project, capsys):
    (project / "k.py").write_text(TWO_RULES)
    (project / "pyproject.toml").write_text('[tool.ascend-lint]\nignore = ["ASC007"]\n')
    assert codes(run(capsys, "--output-format", "json", "k.py")[1]) == ["ASC004"]
    args = ["--output-format", "json", "--config", 'ignore = ["ASC004"]', "k.py"]
    assert codes(run(capsys, *args)[1]) == ["ASC007"]  # replaces the file's value, as in Ruff
    assert codes(run(capsys, "--output-format", "json", "--isolated", "k.py")[1]) == [
        "ASC004",
        "ASC007",
    ]
    code, _, err = run(capsys, "--config", "bogus = 1", "k.py")
    assert code == 2 and "unknown key `bogus`" in err


def test_show_settings_prints_what_is_in_force(project, capsys):
    (project / "pyproject.toml").write_text('[tool.ascend-lint]\nignore = ["ASC007"]\n')
    code, out, _ = run(capsys, "--show-settings", "--extend-select", "ASC001", ".")
    shown = json.loads(out)
    assert code == 0
    assert shown["ignore"] == ["ASC007"]
    assert "ASC007" not in shown["enabled-codes"] and "ASC001" in shown["enabled-codes"]


def test_fix_only_fixes_and_reports_nothing_else(project, capsys):
    target = project / "k.py"
    target.write_text(TWO_RULES)
    code, out, _ = run(capsys, "--fix-only", "k.py")
    assert code == 0 and out == "Fixed 1 error.\n"  # the int64 product's fix is unsafe
    assert "num_warps" not in target.read_text()
    code, out, _ = run(capsys, "--fix-only", "k.py")
    assert code == 0 and out == "No errors fixed.\n"


def test_verbose_says_what_was_read(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    (project / "plain.py").write_text("x = 1\n")
    _, _, err = run(capsys, "-v", ".")
    assert "2 files found, 1 read as kernel candidates, 1 finding," in err


def test_gitignore_is_respected_unless_asked_not_to(project, capsys):
    (project / ".git").mkdir()  # a work tree: its .gitignore files apply
    (project / ".git" / "info").mkdir()
    (project / ".git" / "info" / "exclude").write_text("scratch.py\n")
    (project / ".gitignore").write_text("generated/\n*.gen.py\n!keep.gen.py\n")
    (project / "pkg").mkdir()
    (project / "pkg" / ".gitignore").write_text("local_*.py\n")
    for name in (
        "k.py",
        "scratch.py",
        "generated/a.py",
        "x.gen.py",
        "keep.gen.py",
        "pkg/m.py",
        "pkg/local_tmp.py",
    ):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(CLEAN_KERNEL)

    def shown(*extra):
        out = run(capsys, "--show-files", *extra, ".")[1]
        return sorted(str(Path(p)).replace("\\\\", "/") for p in out.split())

    assert shown() == ["k.py", "keep.gen.py", "pkg/m.py"]
    assert len(shown("--no-respect-gitignore")) == 7
    (project / "pyproject.toml").write_text("[tool.ascend-lint]\nrespect-gitignore = false\n")
    assert len(shown()) == 7
    assert run(capsys, "scratch.py")[0] == 0  # a file named on the command line is linted


def test_the_users_global_git_excludes_apply_below_the_repositorys(
    project, capsys, tmp_path_factory, monkeypatch
):
    # As git ranks them (and Ruff reads them): the global excludes file, then
    # .git/info/exclude, then .gitignore, a later source re-including what an earlier
    # one ignored.
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("scratch_*.py\nkeep_*.py\n")
    (project / ".git" / "info").mkdir(parents=True)
    (project / ".git" / "info" / "exclude").write_text("!keep_me.py\nnotes_*.py\n")
    (project / ".gitignore").write_text("!notes_kept.py\n")
    names = ("k.py", "scratch_a.py", "keep_me.py", "keep_not.py", "notes_x.py", "notes_kept.py")
    for name in names:
        (project / name).write_text(CLEAN_KERNEL)

    def shown():
        return sorted(Path(p).name for p in run(capsys, "--show-files", ".")[1].split())

    assert shown() == ["k.py", "keep_me.py", "notes_kept.py"]
    # core.excludesFile in ~/.gitconfig names another file instead.
    (home / "global-ignore").write_text("k.py\n")
    (home / ".gitconfig").write_text(
        '[user]\n\tname = x\n[core]\n\texcludesFile = "~/global-ignore"\n'
    )
    assert shown() == ["keep_me.py", "keep_not.py", "notes_kept.py", "scratch_a.py"]


def test_a_folder_named_is_walked_though_a_gitignore_above_ignores_it(project, capsys):
    # As Ruff walks it: the user named it. The patterns that ignore the folder (or one
    # above it) stop applying beneath it; the other patterns still do.
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("vendor/\n*.gen.py\n")
    for name in ("k.py", "vendor/kernels/a.py", "vendor/kernels/b.gen.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(CLEAN_KERNEL)

    def shown(path):
        out = run(capsys, "--show-files", path)[1]
        return sorted(Path(p).name for p in out.split())

    assert shown(".") == ["k.py"]
    assert shown("vendor") == ["a.py"]
    assert shown("vendor/kernels") == ["a.py"]


ADOPT = '''import triton
import triton.language as tl


@triton.jit
def k(x, N, BT: tl.constexpr):
    i = tl.program_id(0)
    y = (i * 4).to(tl.int64)  # noqa: E501
    for j in range(N):
        if tl.load(x + j) > 0:
            pass
    doc = """a string
    spanning lines"""


def launch(x):
    k[(1,)](x, 8, BT=64,
            num_warps=4, num_stages=2)
    k[(1,)](x, 8, BT=64, \\
            num_warps=4)
'''


def test_add_noqa_silences_every_finding_and_each_comes_back_alone(project, capsys):
    target = project / "k.py"
    target.write_text(ADOPT)
    before = json.loads(run(capsys, "--output-format", "json", "k.py")[1])
    assert len(before) == 5
    code, out, _ = run(capsys, "--add-noqa", "k.py")
    assert code == 0 and out == "Added 4 noqa directives.\n"
    text = target.read_text()
    assert "y = (i * 4).to(tl.int64)  # noqa: E501, ASC007\n" in text  # merged
    assert "num_warps=4, num_stages=2)  # noqa: ASC004\n" in text  # one code per line
    assert "            num_warps=4)  # noqa: ASC004\n" in text  # after the backslash
    assert run(capsys, "k.py")[0] == 0
    # removing one directive brings back exactly that finding
    target.write_text(
        text.replace("if tl.load(x + j) > 0:  # noqa: ASC003", "if tl.load(x + j) > 0:")
    )
    after = json.loads(run(capsys, "--output-format", "json", "k.py")[1])
    assert [(d["code"], d["location"]["row"]) for d in after] == [("ASC003", 10)]
    assert run(capsys, "--add-noqa", "k.py")[1] == "Added 1 noqa directive.\n"  # converges


def test_add_noqa_never_writes_a_read_only_file(project, capsys):
    import os

    target = project / "k.py"
    target.write_text(ADOPT)
    os.chmod(target, 0o444)
    try:
        code, _, err = run(capsys, "--add-noqa", "k.py")
        assert code == 2 and "read-only" in err
        assert target.read_text() == ADOPT
    finally:
        os.chmod(target, 0o644)


def test_ignore_noqa_reports_what_the_comments_silence(project, capsys):
    (project / "k.py").write_text(
        KERNEL_WITH_NUM_WARPS.replace("num_warps=4)", "num_warps=4)  # noqa: ASC004")
    )
    assert run(capsys, "k.py")[0] == 0
    code, out, _ = run(capsys, "--ignore-noqa", "--output-format", "json", "k.py")
    assert code == 1 and codes(out) == ["ASC004"]
    assert run(capsys, "k.py")[0] == 0  # the cache did not keep the unsuppressed result


# --- --watch ---------------------------------------------------------------------------


class _Lines:
    """stdout of a process, read on a thread, waited on with a deadline (never hangs)."""

    def __init__(self, proc):
        import queue
        import threading

        self.seen: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(proc.stdout,), daemon=True).start()

    def _pump(self, stream) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def until(self, needle: str, seconds: float = 60) -> str:
        import queue
        import time

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if needle in line:
                return "".join(self.seen)
        raise AssertionError(f"no {needle!r} within {seconds} s; output:\n{''.join(self.seen)}")


def _start_watch(project: Path, *args: str):
    import os
    import signal
    import subprocess
    import sys

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "ascend_lint", "check", "--no-cache", "--watch", *args, "."],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        # Ctrl-C reaches it even when this run was started with SIGINT ignored (`nohup`,
        # `cmd &`), which a child would inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _stop(proc) -> int:
    import signal
    import subprocess

    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


def test_watch_lints_again_after_a_change_and_ctrl_c_exits_zero(project):
    import time

    import pytest

    pytest.importorskip("watchfiles")
    (project / "k.py").write_text(CLEAN_KERNEL)
    proc = _start_watch(project)
    try:
        lines = _Lines(proc)
        first = lines.until("Watching for file changes.")
        assert "Starting linter in watch mode..." in first and "All checks passed!" in first
        # A polling watcher (where there is no inotify) sees mtimes in whole seconds.
        time.sleep(1.1)
        # A change to a file that is not Python is not worth a run.
        (project / "notes.txt").write_text("not python\n")
        (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
        second = lines.until("Found 1 error", seconds=60)
        assert "File change detected..." in second and "ASC004" in second
        assert second.count("File change detected...") == 1
        lines.until("Watching for file changes.")
    finally:
        code = _stop(proc)
    assert code == 0
    assert "Traceback" not in "".join(lines.seen)


def test_watch_with_fix_fixes_each_change(project):
    import time

    import pytest

    pytest.importorskip("watchfiles")
    (project / "k.py").write_text(CLEAN_KERNEL)
    proc = _start_watch(project, "--fix")
    try:
        lines = _Lines(proc)
        lines.until("Watching for file changes.")
        time.sleep(1.1)
        (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
        lines.until("1 fixed", seconds=60)
    finally:
        assert _stop(proc) == 0
    assert "num_warps" not in (project / "k.py").read_text()


def test_watch_in_combined_short_flags_starts_one_watcher(project):
    import pytest

    pytest.importorskip("watchfiles")
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    proc = _start_watch(project, "-ew")
    try:
        lines = _Lines(proc)
        first = lines.until("Watching for file changes.")
    finally:
        assert _stop(proc) == 0
    assert first.count("Starting linter in watch mode...") == 1 and "ASC004" in first


def test_watch_refuses_standard_input(project, capsys):
    code, _, err = run(capsys, "--watch", "-")
    assert code == 2 and "--watch" in err and "standard input" in err


ESCAPE = "\x1b["


def strip_colour(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.mark.parametrize("output_format", ["full", "concise", "grouped"])
def test_colour_is_asked_for_and_only_adds_escapes(project, capsys, output_format):
    (project / "k.py").write_text(TWO_RULES)
    plain = run(capsys, "--output-format", output_format, "k.py")[1]
    assert ESCAPE not in plain  # captured output is no terminal: auto stays plain
    coloured = run(capsys, "--color", "always", "--output-format", output_format, "k.py")[1]
    assert "\x1b[1;31mASC004\x1b[0m" in coloured  # the code bold red, as Ruff shows it
    assert strip_colour(coloured) == plain
    assert run(capsys, "--color", "never", "--output-format", output_format, "k.py")[1] == plain


def test_colour_never_reaches_the_machine_formats(project, capsys):
    (project / "k.py").write_text(TWO_RULES)
    for output_format in ("json", "sarif", "github", "pylint"):
        out = run(capsys, "--color", "always", "--output-format", output_format, "k.py")[1]
        assert ESCAPE not in out, output_format


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "env", "on_terminal", "coloured"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),  # a pipe or a file
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"TERM": "dumb"}, True, False),
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"CLICOLOR_FORCE": "1"}, False, True),
        ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ("always", {"NO_COLOR": "1"}, False, True),  # the flag wins, as in Ruff
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_colour_is_decided_as_ruff_decides_it(monkeypatch, choice, env, on_terminal, coloured):
    for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = _Terminal() if on_terminal else io.StringIO()
    assert style_for(choice, out).on is coloured


def test_a_pyproject_without_the_table_does_not_hide_the_projects(project, capsys):
    # As Ruff skips a pyproject.toml without [tool.ruff]: a sub-package's own
    # pyproject.toml (its build metadata) leaves the project's settings in force.
    (project / "pyproject.toml").write_text('[tool.ascend-lint]\nignore = ["ASC007"]\n')
    sub = project / "packages" / "kernels"
    sub.mkdir(parents=True)
    (sub / "pyproject.toml").write_text('[project]\nname = "kernels"\ndependencies = []\n')
    (sub / "k.py").write_text(TWO_RULES)
    assert codes(run(capsys, "--output-format", "json", str(sub / "k.py"))[1]) == ["ASC004"]
    assert load_settings(None, sub).ignore == ["ASC007"]
    # A pyproject.toml with the table is the configuration, however little it sets.
    (sub / "pyproject.toml").write_text("[tool.ascend-lint]\n")
    assert codes(run(capsys, "--output-format", "json", str(sub / "k.py"))[1]) == [
        "ASC004",
        "ASC007",
    ]
    # One that cannot be parsed is reported, not looked past.
    (sub / "pyproject.toml").write_text("[tool.ascend-lint\n")
    code, _, err = run(capsys, str(sub / "k.py"))
    assert code == 2 and "invalid TOML" in err
