"""Robustness at the file-system edge, through the command line: odd encodings and line
endings, unreadable and special files, symbolic links, configuration mistakes and two
`--fix` runs racing on one tree. Each case gives one clear message (a stderr warning or
an ASC000 finding), the other files are still linted, there is never a traceback, and
the exit code is 0 or 1 (2 only for a missing path named on the command line or a
configuration error)."""

from __future__ import annotations

import ast
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import CLEAN_KERNEL as CLEAN
from lint_helpers import KERNEL_WITH_NUM_WARPS as KERNEL

from ascend_lint.cli import main

FINDING_AT = {"row": 11, "column": 23}  # `num_warps` in KERNEL, 1-based as in JSON
FIX_AT = ({"row": 11, "column": 21}, {"row": 11, "column": 34})  # `, num_warps=4`


def run(capsys, *args):
    code = main(["--no-cache", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def json_findings(capsys, *args):
    code, out, err = run(capsys, "--output-format", "json", *args)
    return code, json.loads(out), err


def cli(*args, cwd, timeout=120, env=None):
    """The real program in a child process: for what must not hang or crash this one."""
    proc = subprocess.run(
        [sys.executable, "-m", "ascend_lint", "--no-cache", *args],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    return proc.returncode, proc.stdout, proc.stderr


def parses(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    return True


# ------------------------------------------------------------- encodings and text layout


def test_non_utf8_file_is_one_asc000_and_the_rest_is_linted(project, capsys):
    (project / "latin.py").write_bytes(b"import triton\nname = '\xe9\xe8'\n")
    (project / "k.py").write_text(KERNEL)
    code, findings, err = json_findings(capsys, ".")
    assert code == 1
    assert [(f["filename"], f["code"]) for f in findings] == [
        ("k.py", "ASC004"),
        ("latin.py", "ASC000"),
    ]
    bad = findings[1]
    assert bad["location"] == bad["end_location"] == {"row": 1, "column": 1}
    assert "not valid source text" in bad["message"] and "utf-8" in bad["message"]
    assert err == ""


def test_declared_latin1_positions_and_fix_keep_the_encoding(project, capsys):
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + KERNEL.replace(
        "k[(1,)](x,", "k[(1,)]('\xe9', x,"
    )
    (project / "latin.py").write_bytes(source.encode("latin-1"))
    code, [finding], _ = json_findings(capsys, "latin.py")
    assert code == 1
    shift = len("'\xe9', ")  # code points, not bytes, in either encoding
    assert finding["location"] == {"row": 13, "column": FINDING_AT["column"] + shift}
    assert run(capsys, "--fix", "latin.py")[0] == 0
    fixed = (project / "latin.py").read_bytes()
    assert fixed == source.replace(", num_warps=4", "").encode("latin-1")


def test_utf8_bom_positions_and_fix_keep_the_bom(project, capsys):
    (project / "bom.py").write_bytes(b"\xef\xbb\xbf" + KERNEL.encode())
    code, [finding], _ = json_findings(capsys, "bom.py")
    assert code == 1
    assert finding["location"] == FINDING_AT
    [edit] = finding["fix"]["edits"]
    assert (edit["location"], edit["end_location"]) == FIX_AT
    assert run(capsys, "--fix", "bom.py")[0] == 0
    assert (project / "bom.py").read_bytes() == b"\xef\xbb\xbf" + CLEAN.encode()


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_line_endings_positions_and_fix_keep_them(project, capsys, newline):
    (project / "k.py").write_bytes(KERNEL.replace("\n", newline).encode())
    code, [finding], _ = json_findings(capsys, "k.py")
    assert code == 1
    assert finding["location"] == FINDING_AT
    assert finding["noqa_row"] == FINDING_AT["row"]
    assert run(capsys, "--fix", "k.py")[0] == 0
    assert (project / "k.py").read_bytes() == CLEAN.replace("\n", newline).encode()


def test_mixed_line_endings(project, capsys):
    lines = KERNEL.splitlines(keepends=True)  # never a `\r` just before an empty `\n` line
    mixed = "".join(line.replace("\n", ("\r\n", "\n", "\r")[i % 3]) for i, line in enumerate(lines))
    (project / "k.py").write_bytes(mixed.encode())
    code, [finding], _ = json_findings(capsys, "k.py")
    assert code == 1 and finding["location"] == FINDING_AT
    assert run(capsys, "--fix", "k.py")[0] == 0
    fixed = (project / "k.py").read_bytes()
    assert fixed == mixed.replace(", num_warps=4", "").encode()


def test_tabs_count_as_one_column(project, capsys):
    source = KERNEL.replace("    k[(1,)](x,", "\tk[(1,)](\tx,\t").replace("    pass", "\tpass")
    (project / "k.py").write_text(source)
    line = source.splitlines()[10]
    code, [finding], _ = json_findings(capsys, "k.py")
    assert code == 1
    assert finding["location"] == {"row": 11, "column": line.index("num_warps") + 1}
    assert finding["end_location"] == {"row": 11, "column": line.index(")", 10) + 1}
    assert run(capsys, "--fix", "k.py")[0] == 0
    assert "num_warps" not in (project / "k.py").read_text()


def test_tabs_and_non_ascii_before_a_finding(project, capsys):
    source = KERNEL.replace("    k[(1,)](x,", "\tk[(1,)](x,\t'\u00e9\u20ac\U0001f600',")
    (project / "k.py").write_text(source, encoding="utf-8")
    line = source.splitlines()[10]
    _, [finding], _ = json_findings(capsys, "k.py")
    assert finding["location"]["column"] == line.index("num_warps") + 1


# ------------------------------------------------------ unreadable and special files


def test_unreadable_file_inside_a_tree(project, capsys, monkeypatch):
    (project / "pkg").mkdir()
    (project / "pkg" / "k.py").write_text(KERNEL)
    (project / "pkg" / "locked.py").write_text(KERNEL)
    real_open = open

    def deny(path, *args, **kwargs):  # root reads every file: simulate EACCES
        if str(path).endswith("locked.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    code, out, err = run(capsys, "--output-format", "concise", "-q", "pkg")
    assert code == 1
    assert out.splitlines() == [
        f"{Path('pkg/k.py')}:11:23: ASC004 [*] `num_warps` in a launch has no effect on Ascend "
        "and only multiplies compilations; remove it",
        f"{Path('pkg/locked.py')}:1:1: ASC000 cannot read file: Permission denied",
    ]
    assert err == ""


def test_broken_symlink_inside_a_tree_is_a_warning(project, capsys):
    (project / "src").mkdir()
    (project / "src" / "k.py").write_text(KERNEL)
    (project / "src" / "gone.py").symlink_to(project / "src" / "nowhere.py")
    code, out, err = run(capsys, "--output-format", "concise", "-q", "src")
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()] == [str(Path("src/k.py"))]
    assert err.splitlines() == [f"warning: {Path('src/gone.py')}: broken symbolic link, skipped"]
    (project / "src" / "k.py").write_text(CLEAN)
    assert run(capsys, "-q", "src")[0] == 0


def test_symlink_loops_inside_a_tree(project, capsys):
    src = project / "src"
    (src / "sub").mkdir(parents=True)
    (src / "k.py").write_text(KERNEL)
    (src / "sub" / "m.py").write_text(KERNEL)
    (src / "sub" / "up").symlink_to(src, target_is_directory=True)  # src/sub/up -> src
    (src / "self.py").symlink_to(src / "self.py")  # a link to itself
    (src / "a.py").symlink_to(src / "b.py")  # a -> b -> a
    (src / "b.py").symlink_to(src / "a.py")
    code, out, err = cli("--output-format", "concise", "-q", "src", cwd=project, timeout=60)
    assert code == 1, out + err
    assert "Traceback" not in err
    assert sorted(line.split(":")[0] for line in out.splitlines()) == [
        str(Path("src/k.py")),
        str(Path("src/sub/m.py")),
    ]
    assert sorted(err.splitlines()) == [
        f"warning: {Path(f'src/{name}.py')}: symbolic link loop, skipped"
        for name in ("a", "b", "self")
    ]


def test_symlinked_file_and_folder_are_linted_once_per_path(project, capsys):
    (project / "real").mkdir()
    (project / "real" / "m.py").write_text(KERNEL)
    (project / "alias").symlink_to(project / "real", target_is_directory=True)
    code, out, _ = run(capsys, "--output-format", "concise", "-q", ".")
    assert code == 1
    assert len(out.splitlines()) == 1  # the folder is walked once, under one of its names


def test_directory_named_like_a_python_file(project, capsys):
    (project / "x.py").mkdir()
    (project / "x.py" / "inner.py").write_text(KERNEL)
    (project / "y.py").mkdir()  # empty
    code, out, err = run(capsys, "--output-format", "concise", "-q", ".")
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()] == [str(Path("x.py/inner.py"))]
    assert err == ""
    code, out, _ = run(capsys, "--output-format", "concise", "-q", "x.py")
    assert code == 1 and out.startswith(str(Path("x.py/inner.py")))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_inside_a_tree_is_skipped_not_read(project):
    """Regression: a named pipe called `*.py` made the linter block forever in `open`."""
    (project / "k.py").write_text(KERNEL)
    os.mkfifo(project / "pipe.py")
    code, out, err = cli("--output-format", "concise", "-q", ".", cwd=project, timeout=60)
    assert code == 1, out + err
    assert [line.split(":")[0] for line in out.splitlines()] == ["k.py"]
    assert err.splitlines() == [
        "warning: pipe.py: not a regular file (FIFO, socket or device), skipped"
    ]


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this platform")
def test_socket_inside_a_tree_is_skipped(project, capsys):
    (project / "k.py").write_text(CLEAN)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            server.bind("sock.py")  # relative: socket paths are short
        except OSError as exc:
            pytest.skip(f"cannot bind a Unix socket here: {exc}")
        code, out, err = run(capsys, "-q", ".")
    finally:
        server.close()
    assert code == 0, out + err
    assert err == "warning: sock.py: not a regular file (FIFO, socket or device), skipped\n"


def test_missing_and_broken_paths_on_the_command_line_exit_2(project, capsys):
    (project / "k.py").write_text(KERNEL)
    (project / "gone.py").symlink_to(project / "nowhere.py")
    code, out, err = run(
        capsys, "--output-format", "concise", "-q", "missing.py", "gone.py", "k.py"
    )
    assert code == 2
    assert err.splitlines() == [
        "error: missing.py: No such file or directory",
        "error: gone.py: broken symbolic link",
    ]
    assert out.startswith("k.py:11:23: ASC004")


def test_fix_through_a_symlink_leaves_no_stale_finding(project, capsys):
    (project / "k.py").write_text(KERNEL)
    (project / "a_link.py").symlink_to(project / "k.py")
    code, out, _ = run(capsys, "--fix", "--output-format", "concise", ".")
    assert (project / "k.py").read_text() == CLEAN
    assert (project / "a_link.py").is_symlink()
    assert "remaining" not in out or "0 remaining" in out, out
    assert code == 0


# --------------------------------------------------------------- file names


def _non_utf8_name(folder: Path) -> Path:
    name = os.fsencode(folder) + b"/caf\xe9.py"
    try:
        with open(name, "wb") as fh:
            fh.write(KERNEL.encode())
    except (OSError, ValueError) as exc:
        pytest.skip(f"this file system refuses non-UTF-8 file names: {exc}")
    return folder / os.fsdecode(b"caf\xe9.py")


def test_non_utf8_file_name_is_linted(project, capsys):
    _non_utf8_name(project)
    code, out, err = cli(
        "--output-format",
        "concise",
        "-q",
        ".",
        cwd=project,
        env={"PYTHONIOENCODING": "utf-8:surrogateescape"},
    )
    assert code == 1, err
    assert "Traceback" not in err
    assert ":11:23: ASC004" in out


@pytest.mark.parametrize("where", ["output-file", "strict-stdout"])
def test_non_utf8_file_name_in_the_report(project, where):
    _non_utf8_name(project)
    if where == "output-file":
        code, _, err = cli("-o", "report.txt", ".", cwd=project)
    else:
        code, _, err = cli(".", cwd=project, env={"PYTHONIOENCODING": "utf-8:strict"})
    assert "Traceback" not in err, err
    assert code == 1


def test_non_utf8_file_name_in_sarif(project):
    _non_utf8_name(project)
    code, out, err = cli(
        "--output-format",
        "sarif",
        ".",
        cwd=project,
        env={"PYTHONIOENCODING": "utf-8:surrogateescape"},
    )
    assert "Traceback" not in err, err
    assert code == 1
    json.loads(out)


# ------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    "table,fragments",
    [
        pytest.param(
            'per-file-ignores = ["ASC004"]',
            ["`per-file-ignores` must be a dict", "got list"],
            id="per-file-ignores-not-a-table",
        ),
        pytest.param(
            'per-file-ignores = { "legacy/*" = "ASC004" }',
            ["per-file-ignores.legacy/* must be a list of codes"],
            id="per-file-ignores-value-not-a-list",
        ),
        pytest.param(
            'per-file-ignores = { "legacy/*" = ["ASX004"] }',
            [
                "unknown rule selector `ASX004`",
                "per-file-ignores.legacy/*",
                "did you mean `ASC004`?",
            ],
            id="per-file-ignores-unknown-code",
        ),
        pytest.param(
            'ignore = ["ASX004"]',
            ["unknown rule selector `ASX004`", ": ignore", "did you mean `ASC004`?"],
            id="ignore-unknown-code",
        ),
        pytest.param(
            'ignore = ["NOPE"]',
            ["unknown rule selector `NOPE`", ": ignore", "known codes: ASC000, ASC001"],
            id="ignore-unknown-code-no-close-match",
        ),
        pytest.param(
            'extend-select = ["ASC4"]',
            ["unknown rule selector `ASC4`", ": extend-select"],
            id="extend-select-unknown-code",
        ),
        pytest.param(
            'unfixable = ["ASX004"]',
            ["unknown rule selector `ASX004`", ": unfixable", "did you mean `ASC004`?"],
            id="unfixable-unknown-code",
        ),
        pytest.param('fix = "yes"', ["`fix` must be a bool", "got str"], id="fix-not-a-bool"),
        pytest.param(
            'extend-exclude = "vendored"',
            ["`extend-exclude` must be a list", "got str"],
            id="extend-exclude-not-a-list",
        ),
        pytest.param(
            "ignroe = []",
            ["unknown key `ignroe` in [tool.ascend-lint]", "did you mean `ignore`?"],
            id="misspelt-key",
        ),
        pytest.param("select = [", ["invalid TOML"], id="toml-unclosed-array"),
        pytest.param(
            'select = ["ASC001"]\nselect = ["ASC002"]', ["invalid TOML"], id="toml-duplicate-key"
        ),
    ],
)
def test_config_errors_name_the_file_the_key_and_a_remedy(project, capsys, table, fragments):
    (project / "pyproject.toml").write_text(f"[tool.ascend-lint]\n{table}\n")
    (project / "k.py").write_text(KERNEL)
    code, out, err = run(capsys, "k.py")
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and str(project / "pyproject.toml") in err
    for fragment in fragments:
        assert fragment in err, err


def test_config_that_is_not_utf8(project, capsys):
    (project / "pyproject.toml").write_bytes(b"[tool.ascend-lint]\n# caf\xe9\n")
    (project / "k.py").write_text(KERNEL)
    code, _, err = run(capsys, "k.py")
    assert code == 2
    assert "pyproject.toml: cannot read" in err


def test_config_file_that_does_not_exist(project, capsys):
    (project / "k.py").write_text(KERNEL)
    code, _, err = run(capsys, "--config", "nowhere.toml", "k.py")
    assert code == 2
    assert "nowhere.toml: cannot read" in err


@pytest.mark.parametrize("document", ["tool = 5", "tool = []"])
def test_config_tool_that_is_not_a_table(project, capsys, document):
    (project / "pyproject.toml").write_text(document + "\n")
    (project / "k.py").write_text(KERNEL)
    code, _, err = run(capsys, "k.py")
    assert code == 2
    assert "pyproject.toml" in err and "tool" in err


# ---------------------------------------------------------------- racing --fix runs


def _race_tree(root: Path, n: int = 30) -> dict[Path, bytes]:
    originals = {}
    for i in range(n):
        text = KERNEL.replace("def launch(x):", f"def launch_{i}(x):")
        text += "".join(
            f"\n\ndef more_{i}_{j}(x):\n    k[(1,)](x, BT=64, num_warps={j + 1}, num_stages=2)\n"
            for j in range(20)
        )
        data = text.encode()
        if i % 3 == 1:
            data = data.replace(b"\n", b"\r\n")
        elif i % 3 == 2:
            data = b"\xef\xbb\xbf" + data
        path = root / f"k{i:02d}.py"
        path.write_bytes(data)
        originals[path] = data
    return originals


def test_concurrent_fix_runs_never_leave_a_broken_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    command = [sys.executable, "-m", "ascend_lint", "--fix", "--output-format", "concise", "."]
    for round_ in range(3):
        tree = tmp_path / f"round{round_}"
        tree.mkdir()
        originals = _race_tree(tree)
        procs = [
            subprocess.Popen(
                command if i < 2 else command[:3] + command[4:],  # the third only reads
                cwd=tree,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(3)
        ]
        results = [(p, *p.communicate(timeout=180)) for p in procs]
        for i, (proc, out, err) in enumerate(results):
            assert proc.returncode in (0, 1, 2), (proc.returncode, err)
            assert "Traceback" not in err, err
            for line in err.splitlines():
                assert "changed on disk" in line, line  # the only error a race may cause
            if i == 2:  # the reader must never have seen a half-written file
                assert "ASC000" not in out, out
        for path, original in originals.items():
            data = path.read_bytes()
            assert parses(data), path
            assert data == original or b"num_warps" not in data, path
            if data != original:  # encoding, BOM and line endings survive
                assert data.startswith(b"\xef\xbb\xbf") == original.startswith(b"\xef\xbb\xbf")
                assert (b"\r\n" in data) == (b"\r\n" in original)
        leftovers = [p.name for p in tree.iterdir() if p.name.startswith(".ascend-lint-")]
        assert leftovers == []
