"""`--fix`, `--diff` and standard input through the command line, in the style of
libcst.codemod's `assertCodemod`: whole files before and after, fixing again changes
nothing, and what is written parses."""

from __future__ import annotations

import ast
import io
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst
import pytest

import ascend_lint.fix_command
import ascend_lint.session
from ascend_lint.cli import main

HEADER = """\
import triton
import triton.language as tl


@triton.jit
def k(x, T, BT: tl.constexpr):
    pass
"""

BEFORE = (
    HEADER
    + """

@triton.autotune(
    configs=[
        triton.Config({"BT": bt}, num_warps=w)
        for bt in (32, 64)
        for w in (2, 4)
    ],
    key=["T"],
)
@triton.jit
def tuned(x, T, BT: tl.constexpr):
    pass


def launch_kwargs(x):
    k[(1,)](x, T=8, BT=64, num_warps=4)


def two_knobs_in_one_call(x):
    k[(1,)](x, T=8, BT=64, num_warps=4, num_stages=2)


def inline_trailing_comma(x):
    k[(1,)](x, T=8, BT=64, num_stages=2,)


def last_with_trailing_comma(x):
    k[(1,)](
        x,
        T=8,
        BT=64,
        num_warps=4,
    )


def last_without_trailing_comma(x):
    k[(1,)](
        x,
        T=8,
        BT=64,
        num_stages=3
    )


def alone_on_its_line(x):
    k[(1,)](
        x,
        num_warps=8,  # tuned on A100
        T=8,
        BT=64,
    )


def splatted_dict(x):
    opts = dict(T=8, BT=64, num_warps=4)
    k[(1,)](x, **opts)


def key_statement(x):
    kw = {"T": 8, "BT": 64}
    kw["num_warps"] = 4
    k[(1,)](x, **kw)
"""
)

AFTER = (
    HEADER
    + """

@triton.autotune(
    configs=[
        triton.Config({"BT": bt})
        for bt in (32, 64)
    ],
    key=["T"],
)
@triton.jit
def tuned(x, T, BT: tl.constexpr):
    pass


def launch_kwargs(x):
    k[(1,)](x, T=8, BT=64)


def two_knobs_in_one_call(x):
    k[(1,)](x, T=8, BT=64)


def inline_trailing_comma(x):
    k[(1,)](x, T=8, BT=64,)


def last_with_trailing_comma(x):
    k[(1,)](
        x,
        T=8,
        BT=64,
    )


def last_without_trailing_comma(x):
    k[(1,)](
        x,
        T=8,
        BT=64
    )


def alone_on_its_line(x):
    k[(1,)](
        x,
        T=8,
        BT=64,
    )


def splatted_dict(x):
    opts = dict(T=8, BT=64)
    k[(1,)](x, **opts)


def key_statement(x):
    kw = {"T": 8, "BT": 64}
    k[(1,)](x, **kw)
"""
)

# Shapes whose naive edit breaks the code or changes what it does (each was a bug):
# (id, body of `launch(x, base, gpu)` before, after).
EDGE_CASES = [
    (
        "parenthesized-keyword-value",
        "k[(1,)](x, T=8, num_warps=(4))\nk[(1,)](x, num_warps=(4), T=8)",
        "k[(1,)](x, T=8)\nk[(1,)](x, T=8)",
    ),
    ("parenthesized-argument-before", "k[(1,)]((x), num_warps=4)", "k[(1,)]((x))"),
    (
        "parenthesized-dict-value",
        'opts = {"T": 8, "num_warps": (4)}\nk[(1,)](x, **opts)',
        'opts = {"T": 8}\nk[(1,)](x, **opts)',
    ),
    (
        "dict-entry-before-double-star",  # must not become the set `{base}`
        'opts = {"num_warps": 4, **base}\nk[(1,)](x, **opts)',
        "opts = {**base}\nk[(1,)](x, **opts)",
    ),
    (
        "only-statement-of-a-block",
        'kw = {"T": 8}\nif gpu:\n    kw["num_warps"] = 4\nk[(1,)](x, **kw)',
        'kw = {"T": 8}\nif gpu:\n    pass\nk[(1,)](x, **kw)',
    ),
    (
        "two-statements-emptying-a-block",
        'kw = {"T": 8}\nif gpu:\n    kw["num_warps"] = 4\n    kw["num_stages"] = 2\n'
        'else:\n    kw["num_warps"] = 8  # GPU\nk[(1,)](x, **kw)',
        'kw = {"T": 8}\nif gpu:\n    pass\nelse:\n    pass  # GPU\nk[(1,)](x, **kw)',
    ),
    (
        "statement-followed-by-another-on-its-line",
        'kw = {"T": 8}\nkw["num_warps"] = 4; print(x)\nk[(1,)](x, **kw)',
        'kw = {"T": 8}\nprint(x)\nk[(1,)](x, **kw)',
    ),
    (
        "only-keyword-alone-on-its-line",
        "cfg = triton.Config(\n    num_warps=4\n)",
        "cfg = triton.Config(\n)",
    ),
]


def _edge_source(body: str) -> str:
    return HEADER + "\n\ndef launch(x, base, gpu):\n" + textwrap.indent(body, "    ") + "\n"


CASES = [("whole-file", BEFORE, AFTER)] + [
    (name, _edge_source(before), _edge_source(after)) for name, before, after in EDGE_CASES
]
CASE_IDS = [name for name, _, _ in CASES]

# `select` pins the expectations to ASC004 while other rules are added.
PYPROJECT = '[tool.ascend-lint]\nselect = ["ASC004"]\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", "--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


def write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def assert_parses(data: bytes) -> None:
    ast.parse(data)
    libcst.parse_module(data)


def assert_codemod(folder: Path, capsys, before: str, after: str) -> None:
    """Fix `before` through the CLI: the file is `after`, it parses, and fixing it again
    finds nothing and changes nothing."""
    path = write(folder, "k.py", before)
    code, out, err = run(capsys, "--fix", "k.py")
    assert (code, err) == (0, ""), out
    assert path.read_text(encoding="utf-8") == after
    assert_parses(path.read_bytes())
    code, out, _ = run(capsys, "--fix", "k.py")
    assert code == 0
    assert out == "All checks passed!\n"
    assert path.read_text(encoding="utf-8") == after


# (a), (b), (c)
@pytest.mark.parametrize(("before", "after"), [c[1:] for c in CASES], ids=CASE_IDS)
def test_fix(project, capsys, before, after):
    assert_codemod(project, capsys, before, after)


def test_whole_file_summary(project, capsys):
    write(project, "k.py", BEFORE)
    code, out, _ = run(capsys, "k.py")
    assert code == 1
    assert out.endswith("Found 10 errors in 1 file.\n[*] 10 fixable with the `--fix` option.\n")
    code, out, _ = run(capsys, "--fix", "k.py")
    assert code == 0
    assert out == "Found 10 errors (10 fixed, 0 remaining).\n"


def _git(repo: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env=env,
        input=data,
        capture_output=True,
    )


def _non_ascii(text: str, wide: bool = True) -> str:
    """Non-ASCII text before the edits on a line and on an edited line."""
    if wide:
        text = text.replace("import triton\n", "import triton  # café, 東京\n", 1)
    return text.replace(")\n\n\ndef two_knobs", ")  # été\n\n\ndef two_knobs", 1)


# id -> how a source text is stored; each applies to BEFORE and AFTER alike, so the fixed
# file must be exactly ENCODINGS[id](AFTER).
ENCODINGS = {
    "utf-8": lambda t: _non_ascii(t).encode("utf-8"),
    "utf-8-bom": lambda t: b"\xef\xbb\xbf" + _non_ascii(t).encode("utf-8"),
    "crlf": lambda t: _non_ascii(t).replace("\n", "\r\n").encode("utf-8"),
    "latin-1": lambda t: (
        "# -*- coding: latin-1 -*-\n# réglage GPU: à retirer\n" + _non_ascii(t, wide=False)
    ).encode("latin-1"),
}


DIFF_INPUTS = {
    **{f"whole-file-{name}": encode(BEFORE) for name, encode in ENCODINGS.items()},
    **{name: before.encode() for name, before, _ in CASES[1:]},
    # the hunk holds line 1, BOM included
    "bom-first-line": b"\xef\xbb\xbfimport triton\ncfg = triton.Config({}, num_warps=4)\n",
}


# (d)
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("name", DIFF_INPUTS)
def test_diff_applies_with_git_and_equals_fix(tmp_path, monkeypatch, capsysbinary, name):
    data = DIFF_INPUTS[name]
    repo, fixed = tmp_path / "repo", tmp_path / "fixed"
    for folder in (repo, fixed):
        write(folder, "pyproject.toml", PYPROJECT)
        write(folder, "sub/k.py", data)
    assert _git(repo, "init", "-q").returncode == 0
    monkeypatch.chdir(fixed)
    assert main(["check", "--fix", "sub/k.py"]) == 0
    capsysbinary.readouterr()

    monkeypatch.chdir(repo)
    code = main(["check", "--diff", "sub/k.py"])
    diff, err = capsysbinary.readouterr()
    assert code == 1
    assert err.startswith(b"Would fix ")
    assert diff.startswith(b"--- a/sub/k.py\n+++ b/sub/k.py\n@@ ")
    assert (repo / "sub/k.py").read_bytes() == data  # --diff writes nothing
    applied = _git(repo, "apply", "-", data=diff)
    assert applied.returncode == 0, applied.stderr.decode()
    assert (repo / "sub/k.py").read_bytes() == (fixed / "sub/k.py").read_bytes()

    # Nothing left to fix: no diff, exit 0.
    assert main(["check", "--diff", "sub/k.py"]) == 0
    assert capsysbinary.readouterr() == (b"", b"")


def test_diff_of_a_file_without_final_newline(project, capsysbinary):
    write(project, "k.py", CASES[0][1].rstrip("\n"))
    assert main(["check", "--diff", "k.py"]) == 1
    diff = capsysbinary.readouterr().out
    assert diff.endswith(b"     k[(1,)](x, **kw)\n\\ No newline at end of file\n")


# (e)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_fix_keeps_encoding_bom_line_endings_and_mode(project, capsys, encoding):
    path = write(project, "k.py", ENCODINGS[encoding](BEFORE))
    path.chmod(0o755)
    code, out, _ = run(capsys, "--fix", "k.py")
    assert code == 0, out
    assert path.read_bytes() == ENCODINGS[encoding](AFTER)
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert not list(project.glob(".ascend-lint-*"))  # no temporary file left behind


KERNEL = _edge_source("k[(1,)](x, T=8, num_warps=4)")
CLEAN = _edge_source("k[(1,)](x, T=8)")


# (f)
def test_failed_write_leaves_the_file_intact_and_exits_2(project, capsys, monkeypatch):
    path = write(project, "k.py", KERNEL)

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    code, out, err = run(capsys, "--fix", "k.py")
    assert code == 2
    assert err == "error: k.py: cannot write fixes: Permission denied; file left unchanged\n"
    assert "k.py:11:21: ASC004" in out  # the finding is still reported
    assert path.read_text() == KERNEL
    assert sorted(p.name for p in project.iterdir()) == ["k.py", "pyproject.toml"]


# (g)
def test_file_changed_between_lint_and_fix_is_not_overwritten(project, capsys, monkeypatch):
    path = write(project, "k.py", KERNEL)
    edited = "# edited in the editor meanwhile\n" + KERNEL
    real_fix_file = ascend_lint.session.fix_file

    def fix_file_then_edit(*args, **kwargs):
        outcome = real_fix_file(*args, **kwargs)
        path.write_text(edited)
        return outcome

    monkeypatch.setattr(ascend_lint.session, "fix_file", fix_file_then_edit)
    code, _, err = run(capsys, "--fix", "k.py")
    assert code == 2
    assert err == "error: k.py: changed on disk while being fixed; not overwritten\n"
    assert path.read_text() == edited


def test_fix_through_a_symlink_keeps_the_link(project, capsys):
    target = write(project, "real.py", KERNEL)
    link = project / "link.py"
    link.symlink_to("real.py")
    code, _, _ = run(capsys, "--fix", "link.py")
    assert code == 0
    assert link.is_symlink()
    assert target.read_text() == CLEAN


# (h)
def test_exit_non_zero_on_fix(project, capsys):
    path = write(project, "k.py", KERNEL)
    assert run(capsys, "--fix", "--exit-non-zero-on-fix", "k.py")[0] == 1
    assert path.read_text() == CLEAN
    assert run(capsys, "--fix", "--exit-non-zero-on-fix", "k.py")[0] == 0  # nothing to fix
    write(project, "k.py", KERNEL)
    assert run(capsys, "--fix", "k.py")[0] == 0  # all fixed, nothing remains
    write(project, "k.py", KERNEL)
    # Findings that remain (here: not fixable by config) still exit 1 without fixes.
    (project / "pyproject.toml").write_text(PYPROJECT + 'unfixable = ["ASC004"]\n')
    assert run(capsys, "--fix", "--exit-non-zero-on-fix", "k.py")[0] == 1
    assert path.read_text() == KERNEL


# (i)
@pytest.mark.parametrize(
    ("table", "fixed"),
    [
        ("", True),
        ('fixable = ["ASC004"]\n', True),
        ('fixable = ["ASC00"]\n', True),
        ('fixable = ["ASC001"]\n', False),
        ('unfixable = ["ASC004"]\n', False),
        ('fixable = ["ALL"]\nunfixable = ["ASC0"]\n', False),
        ("fix = true\n", True),  # --fix from the config
    ],
)
def test_fixable_and_unfixable_config(project, capsys, table, fixed):
    (project / "pyproject.toml").write_text(PYPROJECT + table)
    path = write(project, "k.py", KERNEL)
    args = ("k.py",) if "fix = true" in table else ("--fix", "k.py")
    code, _, _ = run(capsys, *args)
    assert path.read_text() == (CLEAN if fixed else KERNEL)
    assert code == (0 if fixed else 1)
    # --diff follows the same settings.
    write(project, "k.py", KERNEL)
    code, out, _ = run(capsys, "--diff", "k.py")
    assert (code, bool(out)) == ((1, True) if fixed else (0, False))


def test_unknown_code_in_fixable_is_a_config_error(project, capsys):
    (project / "pyproject.toml").write_text(PYPROJECT + 'unfixable = ["ASX004"]\n')
    write(project, "k.py", KERNEL)
    code, _, err = run(capsys, "--fix", "k.py")
    assert code == 2
    assert "did you mean `ASC004`?" in err


# (j)
def test_show_fixes(project, capsys):
    write(project, "k.py", KERNEL)
    write(project, "sub/two.py", _edge_source("k[(1,)](x, T=8, num_warps=4, num_stages=2)"))
    code, out, _ = run(capsys, "--fix", "--show-fixes", ".")
    assert code == 0
    assert out == (
        "Fixed 3 errors:\n"
        "- k.py:\n"
        "    1 x ASC004 (launch-num-warps-stages)\n"
        "- sub/two.py:\n"
        "    2 x ASC004 (launch-num-warps-stages)\n"
        "Found 3 errors (3 fixed, 0 remaining).\n"
    )
    code, out, _ = run(capsys, "--fix", "--show-fixes", ".")
    assert code == 0
    assert out == "No errors fixed.\nAll checks passed!\n"


# Standard input (editors): `--stdin-filename NAME -`, or `-` alone.
def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_stdin_fix_writes_only_the_fixed_source_to_stdout(
    project, capsysbinary, monkeypatch, encoding
):
    _stdin(monkeypatch, ENCODINGS[encoding](BEFORE))
    code = main(["check", "--fix", "--stdin-filename", "pkg/k.py", "-"])
    out, err = capsysbinary.readouterr()
    assert code == 0
    assert out == ENCODINGS[encoding](AFTER)
    assert err == b"Found 10 errors (10 fixed, 0 remaining).\n"
    assert not (project / "pkg").exists()  # nothing written


def test_stdin_lint_diff_and_names(project, capsys, monkeypatch):
    _stdin(monkeypatch, KERNEL.encode())
    code, out, _ = run(capsys, "--output-format", "concise", "--stdin-filename", "pkg/k.py", "-")
    assert code == 1
    assert out.startswith("pkg/k.py:11:21: ASC004 [*] `num_warps`")
    assert out.endswith("Found 1 error in 1 file.\n[*] 1 fixable with the `--fix` option.\n")

    _stdin(monkeypatch, KERNEL.encode())
    code, out, err = run(capsys, "--diff", "--stdin-filename", "pkg/k.py", "-")
    assert code == 1
    assert out.startswith("--- a/pkg/k.py\n+++ b/pkg/k.py\n@@ ")
    assert "-    k[(1,)](x, T=8, num_warps=4)\n+    k[(1,)](x, T=8)\n" in out
    assert err == "Would fix 1 error.\n"

    _stdin(monkeypatch, KERNEL.encode())  # `-` alone: the name is `-`
    code, out, _ = run(capsys, "--output-format", "concise", "-q", "-")
    assert code == 1
    assert out.startswith("-:11:21: ASC004")

    _stdin(monkeypatch, KERNEL.encode())  # --stdin-filename alone reads stdin too (Ruff)
    code, out, _ = run(capsys, "--output-format", "concise", "-q", "--stdin-filename", "x.py")
    assert (code, out[:12]) == (1, "x.py:11:21: ")


def test_stdin_fix_with_findings_left_reports_on_stderr(project, capsys, monkeypatch):
    source = KERNEL.replace("k[(1,)](x, T=8, num_warps=4)", "k[(1,)](x, T=8, num_warps=4)\n    x +")
    _stdin(monkeypatch, source.encode())  # does not parse: ASC000, nothing to fix
    code, out, err = run(capsys, "--fix", "--output-format", "concise", "--stdin-filename", "k.py")
    assert code == 1
    assert out == source  # the editor's buffer comes back untouched
    assert err.startswith("k.py:12:8: ASC000")


def test_stdin_uses_config_of_the_named_file(project, capsys, monkeypatch):
    write(
        project,
        "pkg/pyproject.toml",
        "[tool.ascend-lint]\n"
        'per-file-ignores = {"ignored/*" = ["ASC004"]}\n'
        'extend-exclude = ["generated"]\n',
    )

    def lint(*args: str) -> tuple[int, str, str]:
        _stdin(monkeypatch, KERNEL.encode())
        return run(capsys, "-q", "--output-format", "concise", *args)

    assert lint("--stdin-filename", "pkg/ignored/k.py", "-")[:2] == (0, "")
    assert lint("--stdin-filename", "pkg/k.py", "-")[0] == 1
    # Excludes apply to the name only with --force-exclude, as for a named file.
    assert lint("--stdin-filename", "pkg/generated/k.py", "-")[0] == 1
    assert lint("--force-exclude", "--stdin-filename", "pkg/generated/k.py", "-")[:2] == (0, "")
    # Excluded and --fix: the source goes back unchanged (an editor replaces its buffer).
    code, out, _ = lint("--fix", "--force-exclude", "--stdin-filename", "pkg/generated/k.py")
    assert (code, out) == (0, KERNEL)


def test_stdin_dash_with_other_paths_is_a_usage_error(project, capsys, monkeypatch):
    write(project, "k.py", CLEAN)
    _stdin(monkeypatch, KERNEL.encode())
    code, _, err = run(capsys, "-", "k.py")
    assert code == 2
    assert "`-` (standard input) cannot be combined with other paths" in err
    _stdin(monkeypatch, KERNEL.encode())
    code, _, err = run(capsys, "--stdin-filename", "s.py", "k.py")
    assert code == 1  # stdin wins, with a warning
    assert "warning: ignoring `k.py` in favour of standard input" in err


def test_stdin_end_to_end_in_a_subprocess(project):
    proc = subprocess.run(
        [sys.executable, "-m", "ascend_lint", "check", "--fix", "--stdin-filename", "k.py", "-"],
        input=ENCODINGS["crlf"](BEFORE),
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ENCODINGS["crlf"](AFTER)


# Catalogue II fixes, each with the one rule selected: (id, rule, unsafe, before, after).
# Fixing converges (a second run changes nothing) and leaves no finding of the rule.
CATALOGUE_II_CASES = [
    (
        "ASC015-hints-and-orderings",
        "ASC015",
        False,
        """\
import triton
import triton.language as tl


@triton.jit
def k(x, o, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, eviction_policy="evict_last", cache_modifier=".cg")
    tl.store(
        o + offs,
        v,
        volatile=True,  # PTX volatile
        mask=offs < n,
    )
    tl.atomic_add(o, 1.0, sem="relaxed", scope="cta")
""",
        """\
import triton
import triton.language as tl


@triton.jit
def k(x, o, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n)
    tl.store(
        o + offs,
        v,
        mask=offs < n,
    )
    tl.atomic_add(o, 1.0)
""",
    ),
    (
        "ASC020-nested-chains",
        "ASC020",
        False,
        """\
import triton
import triton.language as tl


@triton.jit
def k(x, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    if A and (B or C or D) and not D:
        pass
    ok = (A or
          B or  # keep
          C)
    while A and B and C and D:
        pass
""",
        """\
import triton
import triton.language as tl


@triton.jit
def k(x, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    if (A and ((B or C) or D)) and not D:
        pass
    ok = ((A or
          B) or  # keep
          C)
    while ((A and B) and C) and D:
        pass
""",
    ),
    (
        "ASC016-precision-and-out-dtype",
        "ASC016",
        True,
        """\
import triton
import triton.language as tl

PREC = "tf32"


@triton.jit
def k(a, b, o):
    x = tl.load(a)
    y = tl.load(b)
    xf = x.to(tl.float32)
    yf = y.to(tl.float32)
    acc = tl.dot(x, y, allow_tf32=True)
    acc += tl.dot(xf, yf, allow_tf32=True)
    acc += tl.dot(x, y, allow_tf32=True, input_precision="tf32")
    acc += tl.dot(x, y, input_precision=PREC)
    h = tl.dot(x, y, out_dtype=tl.float16)
    tl.store(o, acc + h)
""",
        """\
import triton
import triton.language as tl

PREC = "tf32"


@triton.jit
def k(a, b, o):
    x = tl.load(a)
    y = tl.load(b)
    xf = x.to(tl.float32)
    yf = y.to(tl.float32)
    acc = tl.dot(x, y, input_precision="ieee")
    acc += tl.dot(xf, yf, input_precision="hf32")
    acc += tl.dot(x, y, input_precision="ieee")
    acc += tl.dot(x, y, input_precision="ieee")
    h = tl.dot(x, y).to(tl.float16)
    tl.store(o, acc + h)
""",
    ),
]


@pytest.mark.parametrize(
    ("rule", "unsafe", "before", "after"),
    [c[1:] for c in CATALOGUE_II_CASES],
    ids=[c[0] for c in CATALOGUE_II_CASES],
)
def test_catalogue_ii_fix_converges(tmp_path, monkeypatch, capsys, rule, unsafe, before, after):
    (tmp_path / "pyproject.toml").write_text(f'[tool.ascend-lint]\nselect = ["{rule}"]\n')
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "k.py", before)
    flags = ["--fix", *(["--unsafe-fixes"] if unsafe else [])]
    code, out, err = run(capsys, *flags, "k.py")
    assert (code, err) == (0, ""), out
    assert path.read_text(encoding="utf-8") == after
    assert_parses(path.read_bytes())
    code, out, _ = run(capsys, *flags, "k.py")
    assert (code, out) == (0, "All checks passed!\n")
    assert path.read_text(encoding="utf-8") == after


def test_cuda_only_api_suggestions_are_never_applied(tmp_path, monkeypatch, capsys):
    """ASC014's suggestions need a human (torch_npu, the right core count): `--fix
    --unsafe-fixes` leaves the file as it was and still reports every finding."""
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-lint]\nselect = ["ASC014"]\n')
    monkeypatch.chdir(tmp_path)
    source = (
        HEADER + '\n\ndef launch(x):\n    k[(1,)](x.cuda(), T=8, BT=64)\n    y = x.to("cuda")\n'
    )
    path = write(tmp_path, "k.py", source)
    code, out, _ = run(capsys, "--fix", "--unsafe-fixes", "k.py")
    assert code == 1
    assert "Found 2 errors (0 fixed, 2 remaining)" in out
    assert path.read_text(encoding="utf-8") == source


STDIN_CONFIGS = """\
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({}, num_warps=1),
        triton.Config({}, num_warps=2),
    ],
    key=['T'],
)
@triton.jit
def k(x, T, BT: tl.constexpr):
    for j in range(4):
        if tl.load(x + j) > 0:
            pass
"""


def test_stdin_frames_show_the_buffer_and_after_fix_the_fixed_buffer(project, capsys, monkeypatch):
    # The file of that name on disk says something else: frames must not read it.
    (project / "k.py").write_text("x = 1\n" * 20)
    _stdin(monkeypatch, STDIN_CONFIGS.encode())
    code, out, err = run(capsys, "--select", "ALL", "--fix", "--stdin-filename", "k.py", "-")
    assert code == 1
    assert "        triton.Config({}),\n    ],\n" in out  # the fixed source, merged
    assert err.startswith(
        "k.py:14:9: ASC003 runtime branch on `j`, `x` inside a loop; make it a constexpr "
        "split or a `tl.where` mask\n"
        " 13 |     for j in range(4):\n"
        " 14 |         if tl.load(x + j) > 0:\n"
        "    |         ^^^^^^^^^^^^^^^^^^^^^ ASC003\n"
    )
    _stdin(monkeypatch, STDIN_CONFIGS.encode())
    code, out, _ = run(capsys, "--stdin-filename", "k.py", "-")
    assert code == 1
    assert " 7 |         triton.Config({}, num_warps=1),\n" in out


# Fixes of several rules on one kernel: what one writes, another must not report, and
# a fix must not leave part of its own finding (ASC007 on a nested product, ASC002 on
# `all = tl.cast(B, tl.int64) * T`).
COMBINED_BEFORE = """\
import triton
import triton.language as tl


@triton.jit
def k(dg, h, cu_seqlens, B, T, HV: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_k, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // HV, i_nh % HV
    all = (B * T).to(tl.int64)
    T_seq = T
    if IS_VARLEN:
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int64), tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        T = eos - bos
        dg += i_k * all * HV + bos + i_h * T_seq
    else:
        dg += i_k * all * HV + i_n * HV * T_seq + i_h * T_seq
    h += ((i_k * HV + i_h) * K * K).to(tl.int64)
    o_t = tl.arange(0, BT)
    tl.store(dg + o_t, tl.load(h + o_t), mask=o_t < T)


def launch(x, h, cu_seqlens):
    B, T, HV = x.shape
    if B == 0:
        return
    dg = x.new_empty(2, B, T, HV).transpose(-1, -2).contiguous()
    k[(2, B * HV)](dg, h, cu_seqlens, B, T, HV=HV, K=64, BT=64, IS_VARLEN=cu_seqlens is not None, num_warps=4)
"""
COMBINED_AFTER = (
    COMBINED_BEFORE.replace("all = (B * T).to(tl.int64)", "all = tl.cast(B, tl.int64) * T")
    .replace(
        "h += ((i_k * HV + i_h) * K * K).to(tl.int64)",
        "h += (tl.cast(i_k, tl.int64) * HV + i_h) * K * K",
    )
    .replace(", num_warps=4)", ")")
)


def test_fixes_of_several_rules_converge(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "k.py", COMBINED_BEFORE)
    code, out, err = run(capsys, "--fix", "--unsafe-fixes", "k.py")
    assert (code, err) == (0, ""), out
    assert path.read_text(encoding="utf-8") == COMBINED_AFTER
    assert_parses(path.read_bytes())
    # Re-linting finds nothing the run left or created, and a second run changes nothing.
    code, out, _ = run(capsys, "--fix", "--unsafe-fixes", "k.py")
    assert (code, out) == (0, "All checks passed!\n")
    assert path.read_text(encoding="utf-8") == COMBINED_AFTER
