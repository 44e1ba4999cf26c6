"""The command line: exit codes, output formats, configuration and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from lint_helpers import CLEAN_KERNEL, KERNEL_WITH_NUM_WARPS

from ascend_lint.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_file_exits_0(project, capsys):
    (project / "k.py").write_text(CLEAN_KERNEL)
    code, out, _ = run(capsys, "k.py")
    assert code == 0
    assert "All checks passed!" in out


def test_findings_exit_1_with_frame_and_help(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, out, _ = run(capsys, "check", "k.py")
    assert code == 1
    assert "k.py:11:23: ASC004 [*] `num_warps`" in out
    assert "11 |     k[(1,)](x, BT=64, num_warps=4)" in out
    assert (
        "help: corrected pattern: chunk_fwd_o in ascend_lint/reference_kernels/chunk_o.py, "
        "shown by `ascend-lint rule ASC004`"
    ) in out
    assert "Found 1 error in 1 file." in out


def test_exit_zero(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    assert run(capsys, "--exit-zero", "k.py")[0] == 0


def test_select_and_ignore(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    assert run(capsys, "--select", "ASC001,ASC003", "k.py")[0] == 0
    assert run(capsys, "--ignore", "ASC00", "k.py")[0] == 0
    assert run(capsys, "--select", "ASC001", "--extend-select", "ASC004", "k.py")[0] == 1
    assert run(capsys, "--select", "ALL", "k.py")[0] == 1


def test_unknown_code_exits_2_with_suggestion(project, capsys):
    (project / "k.py").write_text(CLEAN_KERNEL)
    code, _, err = run(capsys, "--select", "ASX004", "k.py")
    assert code == 2
    assert "unknown rule selector `ASX004`" in err
    assert "did you mean `ASC004`?" in err


def test_json_layout(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, out, _ = run(capsys, "--output-format", "json", "k.py")
    assert code == 1
    [item] = json.loads(out)
    assert item["code"] == "ASC004"
    assert item["name"] == "launch-num-warps-stages"
    assert item["filename"] == "k.py"
    assert item["location"] == {"row": 11, "column": 23}
    assert item["end_location"] == {"row": 11, "column": 34}
    assert item["noqa_row"] == 11
    assert item["url"].endswith("rules/asc004/ASC004.md")
    assert item["reference_kernels"] == [
        {"path": "ascend_lint/reference_kernels/chunk_o.py", "function": "chunk_fwd_o"}
    ]
    assert item["fix"]["applicability"] == "safe"
    [edit] = item["fix"]["edits"]
    assert edit == {
        "content": "",
        "location": {"row": 11, "column": 21},
        "end_location": {"row": 11, "column": 34},
    }


def test_concise_and_statistics(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, out, _ = run(capsys, "--output-format", "concise", "-q", "k.py")
    assert (
        out.strip()
        == "k.py:11:23: ASC004 [*] `num_warps` in a launch has no effect on Ascend and only multiplies compilations; remove it"
    )
    code, out, _ = run(capsys, "--statistics", "k.py")
    assert code == 1
    assert out.split() == ["1", "ASC004", "[*]", "launch-num-warps-stages"]


def test_output_file(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, out, _ = run(capsys, "--output-format", "json", "-o", "report.json", "k.py")
    assert code == 1 and out == ""
    assert json.loads((project / "report.json").read_text())[0]["code"] == "ASC004"


def test_noqa(project, capsys):
    (project / "a.py").write_text(
        KERNEL_WITH_NUM_WARPS.replace("num_warps=4)", "num_warps=4)  # noqa: ASC004")
    )
    (project / "b.py").write_text(
        KERNEL_WITH_NUM_WARPS.replace("num_warps=4)", "num_warps=4)  # noqa: ASC001")
    )
    (project / "c.py").write_text("# ascend-lint: noqa\n" + KERNEL_WITH_NUM_WARPS)
    code, out, _ = run(capsys, "--output-format", "concise", "-q", ".")
    assert code == 1
    # b.py: the ASC004 its comment does not silence, and the comment's unused ASC001
    assert [line.split(" ")[1] for line in out.splitlines()] == ["ASC004", "ASC100"]
    assert {line.split(":")[0] for line in out.splitlines()} == {"b.py"}


def test_unused_noqa_is_reported_in_files_without_kernels(project, capsys):
    # As Ruff's RUF100: every file's comments are read, not only those of kernel files.
    (project / "plain.py").write_text("x = 1  # noqa: ASC004\ny = 2  # noqa: E501\n")
    (project / "host.py").write_text("import torch\n\nz = torch.ones(1)  # noqa: asc001, F401\n")
    # A comment inside a string is text, not a comment: a docstring's example is left alone.
    (project / "doc.py").write_text('"""Example:\n\n    x = 1  # noqa: ASC004\n"""\n')
    code, out, _ = run(capsys, "--output-format", "concise", "-q", ".")
    assert code == 1
    assert sorted(out.splitlines()) == [
        "host.py:3:20: ASC100 [*] unused `noqa` code `asc001`: nothing on this line is reported "
        "for it",
        "plain.py:1:8: ASC100 [*] unused `noqa` code `ASC004`: nothing on this line is reported "
        "for it",
    ]
    code, out, _ = run(capsys, "--fix", "-q", ".")
    assert (project / "plain.py").read_text() == "x = 1\ny = 2  # noqa: E501\n"
    assert (project / "host.py").read_text().endswith("z = torch.ones(1)  # noqa: F401\n")


def test_file_level_noqa_with_codes_silences_only_those_codes(project, capsys):
    # As Ruff's file-level noqa with codes: the listed codes, everywhere in the file, no other.
    two = KERNEL_WITH_NUM_WARPS.replace("    pass\n", "    y = (BT * 4).to(tl.int64)\n")
    (project / "listed.py").write_text("# ascend-lint: noqa: ASC004\n" + two)
    (project / "other.py").write_text("# ascend-lint: noqa: ASC007, ASC001\n" + two)
    (project / "both.py").write_text("# ascend-lint: noqa: ASC004,ASC007\n" + two)
    (project / "bare.py").write_text("# ascend-lint: noqa\n" + two)
    (project / "malformed.py").write_text("# ascend-lint: noqa" + ":\n" + two)
    code, out, _ = run(capsys, "--output-format", "concise", "-q", ".")
    assert code == 1
    found = sorted(
        (line.split(":")[0], line.split(" ")[1]) for line in out.splitlines() if line.strip()
    )
    assert found == [
        ("listed.py", "ASC007"),
        ("malformed.py", "ASC004"),  # an empty list silences nothing, not everything
        ("malformed.py", "ASC007"),
        ("other.py", "ASC004"),
    ]


def test_file_level_noqa_covers_unused_noqa_only_when_listed(project, capsys):
    text = KERNEL_WITH_NUM_WARPS.replace("num_warps=4)", "num_warps=4)  # noqa: ASC001")
    (project / "a.py").write_text("# ascend-lint: noqa: ASC004\n" + text)
    (project / "b.py").write_text("# ascend-lint: noqa: ASC004, ASC100\n" + text)
    code, out, _ = run(capsys, "--output-format", "concise", "-q", ".")
    assert code == 1
    assert [(line.split(":")[0], line.split(" ")[1]) for line in out.splitlines()] == [
        ("a.py", "ASC100")
    ]


def test_config_select_per_file_ignores_and_exclude(project, capsys):
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [tool.ascend-lint]
            select = ["ASC004"]
            per-file-ignores = { "legacy/*" = ["ASC004"] }
            extend-exclude = ["vendored"]
            """
        )
    )
    for folder in ("src", "legacy", "vendored"):
        (project / folder).mkdir()
        (project / folder / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, out, _ = run(capsys, "--output-format", "concise", "-q", ".")
    assert code == 1
    assert [line.split(":")[0] for line in out.splitlines()] == ["src/k.py"]
    # A path named explicitly is linted even when excluded, unless --force-exclude.
    assert run(capsys, "-q", "vendored/k.py")[0] == 1
    assert run(capsys, "-q", "--force-exclude", "vendored/k.py")[0] == 0
    # An excluded folder, named with --force-exclude: nothing is linted, and it says so.
    code, _, err = run(capsys, "--force-exclude", "vendored")
    assert code == 0
    assert "warning: No Python files found under the given paths" in err


@pytest.mark.parametrize(
    "table,message",
    [
        ('selct = ["ASC001"]', "unknown key `selct` in [tool.ascend-lint]; did you mean `select`?"),
        ('select = "ASC001"', "`select` must be a list"),
        ('select = ["ASC999"]', "unknown rule selector `ASC999`"),
        ('output-format = "jsn"', "did you mean `json`?"),
        ('select = ["ASC001"', "invalid TOML"),
    ],
)
def test_config_errors_exit_2(project, capsys, table, message):
    (project / "pyproject.toml").write_text(f"[tool.ascend-lint]\n{table}\n")
    (project / "k.py").write_text(CLEAN_KERNEL)
    code, _, err = run(capsys, "k.py")
    assert code == 2
    assert message in err
    assert "pyproject.toml" in err
    assert "Traceback" not in err


def test_syntax_error_is_a_finding_and_others_still_linted(project, capsys):
    (project / "bad.py").write_text("import triton\n\n@triton.jit\ndef k(x:\n")
    (project / "good.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, out, err = run(capsys, "--output-format", "concise", "-q", ".")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("bad.py:4:6: ASC000 SyntaxError: '(' was never closed")
    assert lines[1].startswith("good.py:11:23: ASC004")
    assert "Traceback" not in err


def test_non_utf8_file(project, capsys):
    (project / "latin.py").write_bytes(b"import triton\nname = '\xe9\xe8'\n")
    code, out, _ = run(capsys, "--output-format", "concise", "-q", "latin.py")
    assert code == 1
    assert "ASC000 file is not valid source text" in out


def test_declared_latin1_file_is_linted(project, capsys):
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + KERNEL_WITH_NUM_WARPS
    (project / "latin.py").write_bytes(source.encode("latin-1"))
    code, out, _ = run(capsys, "--output-format", "json", "latin.py")
    assert code == 1
    assert json.loads(out)[0]["location"]["row"] == 13


def test_non_ascii_columns_are_code_points(project, capsys):
    (project / "k.py").write_text(
        KERNEL_WITH_NUM_WARPS.replace("k[(1,)](x,", "k[(1,)](x, ñame='é',")
    )
    _, out, _ = run(capsys, "--output-format", "json", "k.py")
    assert json.loads(out)[0]["location"]["column"] == 23 + len(" ñame='é',")


def test_empty_file_and_empty_folder(project, capsys):
    (project / "empty.py").write_text("")
    assert run(capsys, "empty.py")[0] == 0
    (project / "nothing").mkdir()
    code, _, err = run(capsys, "nothing")
    assert code == 0
    assert "No Python files found under nothing" in err


def test_missing_path_exits_2_and_lints_the_rest(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, out, err = run(capsys, "--output-format", "concise", "-q", "missing.py", "k.py")
    assert code == 2
    assert "error: missing.py: No such file or directory" in err
    assert "k.py:11:23: ASC004" in out


def test_unreadable_file(project, capsys, monkeypatch):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    (project / "locked.py").write_text(KERNEL_WITH_NUM_WARPS)
    real_open = open

    def deny(path, *args, **kwargs):  # root reads any file: simulate the permission error
        if str(path).endswith("locked.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    code, out, _ = run(capsys, "--output-format", "concise", "-q", "k.py", "locked.py")
    assert code == 1
    assert "locked.py:1:1: ASC000 cannot read file: Permission denied" in out
    assert "k.py:11:23: ASC004" in out


def test_linted_code_is_never_imported(project, capsys):
    marker = project / "imported.marker"
    (project / "evil.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nimport triton\n"
        + KERNEL_WITH_NUM_WARPS
    )
    assert run(capsys, "evil.py")[0] == 1
    assert not marker.exists()


def test_rule_command_shows_doc_and_reference(capsys):
    code, out, _ = run(capsys, "rule", "ASC004")
    assert code == 0
    assert (
        "## Reference kernel: chunk_fwd_o\n\n```python\n# ascend_lint/reference_kernels/chunk_o.py:"
        in out
    )
    assert "def chunk_fwd_o(" in out
    code, out, _ = run(capsys, "rule", "ASC002")
    assert "## Reference kernels: gate_base, gate_block_ptr\n" in out
    assert "def gate_base(" in out and "def gate_block_ptr(" in out
    assert "def chunk_fwd_kernel_o(" not in out
    code, out, _ = run(capsys, "rule", "--all")
    assert code == 0
    for c in ("ASC001", "ASC002", "ASC003", "ASC004"):
        assert f"({c})" in out
    code, _, err = run(capsys, "rule", "ASC01")
    assert code == 2 and "unknown rule `ASC01`" in err


def test_version_and_module_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "ascend_lint", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.startswith("ascend-lint ")


def test_no_cache_is_accepted(project, capsys):
    (project / "k.py").write_text(CLEAN_KERNEL)
    assert run(capsys, "--no-cache", "k.py")[0] == 0


def test_unknown_option_exits_2(capsys):
    assert run(capsys, "--no-such-option")[0] == 2


def test_parallel_run_matches_serial(project, capsys):
    for i in range(30):
        (project / f"k{i:02d}.py").write_text(KERNEL_WITH_NUM_WARPS if i % 2 else CLEAN_KERNEL)
    serial = run(capsys, "--output-format", "json", "-j", "1", ".")[1]
    parallel = run(capsys, "--output-format", "json", "-j", "2", ".")[1]
    assert serial == parallel
    assert len(json.loads(serial)) == 15


def test_reference_kernels_lint_clean_and_examples_are_flagged(capsys):
    root = Path(__file__).resolve().parents[1]
    code, out, err = run(capsys, "--no-cache", str(root / "reference_kernels"))
    assert code == 0, out + err
    # every rule, and no noqa comment doing the work
    code, out, err = run(
        capsys, "--no-cache", "--select", "ALL", "--ignore-noqa", str(root / "reference_kernels")
    )
    assert code == 0, out + err
    code, out, _ = run(capsys, "--output-format", "json", str(root / "examples" / "gpu_habits"))
    assert code == 1
    assert {d["code"] for d in json.loads(out)} >= {
        "ASC001",
        "ASC002",
        "ASC003",
        "ASC004",
        "ASC022",
        "ASC023",
    }


# -- commands and habits, as Ruff has them ----------------------------------------------


def test_help_lists_every_command(capsys):
    from ascend_lint.cli import _commands

    code, out, _ = run(capsys, "--help")
    assert code == 0
    listed = out.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    assert [line.split()[0] for line in listed.splitlines()] == list(_commands())
    assert {"check", "rule", "server", "clean", "help", "version"} <= set(_commands())
    assert run(capsys, "help")[1] == out


def test_help_for_an_unknown_command_is_an_error(capsys):
    code, out, err = run(capsys, "help", "bogus")
    assert code == 2 and out == ""
    assert "error: unknown command `bogus`" in err
    code, _, err = run(capsys, "help", "rulle")
    assert code == 2 and "did you mean `rule`?" in err
    code, out, _ = run(capsys, "help", "rule")
    assert code == 0 and "usage: ascend-lint rule" in out


def test_a_mistyped_command_gets_a_suggestion_and_a_folder_of_that_name_is_linted(project, capsys):
    code, out, err = run(capsys, "chek", ".")
    assert code == 2 and out == ""
    assert "unknown command `chek`" in err and "did you mean `check`?" in err
    (project / "chek").mkdir()
    (project / "chek" / "k.py").write_text(CLEAN_KERNEL)
    assert run(capsys, "chek")[0] == 0


@pytest.mark.parametrize("jobs", ["-3", "0", "two"])
def test_jobs_must_be_a_positive_number(project, capsys, jobs):
    (project / "k.py").write_text(CLEAN_KERNEL)
    code, _, err = run(capsys, "-j", jobs, "k.py")
    assert code == 2 and "argument -j/--jobs" in err
    assert run(capsys, "-j", "1", "k.py")[0] == 0


def test_statistics_as_json_and_only_where_it_can_be_printed(project, capsys):
    (project / "k.py").write_text(KERNEL_WITH_NUM_WARPS)
    code, out, _ = run(capsys, "--statistics", "--output-format", "json", "k.py")
    assert code == 1
    assert json.loads(out) == [
        {
            "code": "ASC004",
            "name": "launch-num-warps-stages",
            "count": 1,
            "fixable": True,
            "fixable_count": 1,
        }
    ]
    code, out, err = run(capsys, "--statistics", "--output-format", "sarif", "k.py")
    assert code == 2 and out == ""
    assert "--statistics prints text or JSON, not `sarif`" in err


def test_unused_noqa_says_which_codes_are_unknown_and_which_are_off(project, capsys):
    (project / "k.py").write_text(
        CLEAN_KERNEL.replace(
            "k[(1,)](x, BT=64)", "k[(1,)](x, BT=64)  # noqa: ASC999, ASC001, ASC004"
        )
    )
    code, out, _ = run(capsys, "--output-format", "concise", "-q", "--ignore", "ASC001", "k.py")
    assert code == 1
    assert "unused `noqa` codes `ASC999` (unknown), `ASC001` (not enabled), `ASC004`: " in out


def test_the_repository_passes_its_own_linter(capsys, monkeypatch):
    """What `.ci/run` holds the project to: `ascend-lint .` at the root, with the
    repository's own configuration, finds nothing."""
    root = Path(__file__).resolve().parents[1]
    assert "ascend-lint check --no-cache .\n" in (root / ".ci" / "run").read_text()
    monkeypatch.chdir(root)
    code, out, _ = run(capsys, "--no-cache", "--output-format", "concise", ".")
    assert (code, out) == (0, "All checks passed!\n")
