"""The triton-ascend release setting (`ascend_lint/toolchain.py`): parsed, carried with the
target to the rules, cached apart, and read by the rule that keys on it (ASC025)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from ascend_lint.cache import content_key
from ascend_lint.engine import lint_source
from ascend_lint.settings import ConfigError, Settings, apply_table
from ascend_lint.toolchain import lint_target, parse_version, split_lint_target

EMPTY_GRID = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x, n, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x + o, 0.0, mask=o < n)

    def launch(x):
        n = x.numel()
        k[(triton.cdiv(n, 64),)](x, n, BLOCK=64)
        k[(4,)](x, n, BLOCK=triton.next_power_of_2(n))
    """
).encode()


@pytest.mark.parametrize(
    "text, version",
    [("3.2.0", (3, 2, 0)), ("3.2", (3, 2, 0)), ("3.2.0rc4", (3, 2, 0)), ("3.6.0", (3, 6, 0))],
)
def test_versions_parse(text, version):
    assert parse_version(text) == version


@pytest.mark.parametrize("text", ["latest", "3.x", "", "v3.2"])
def test_other_text_is_no_version(text):
    with pytest.raises(ValueError, match="not a release version"):
        parse_version(text)


def test_the_release_travels_with_the_target_and_the_default_adds_nothing():
    assert lint_target("ascend910b", "3.2.0") == "ascend910b"
    carried = lint_target("ascend910_93", "3.2.2")
    assert split_lint_target(carried) == ("ascend910_93", (3, 2, 2))
    assert split_lint_target("ascend910b") == ("ascend910b", (3, 2, 0))


def test_the_options_of_a_file_carry_the_release_and_key_the_cache_apart():
    default, later = Settings(), Settings(triton_ascend="3.2.2")
    assert default.options_for("k.py").target == "ascend910b"
    assert later.options_for("k.py").target == lint_target("ascend910b", "3.2.2")
    # another release lints to other findings: it must not share their cache entry
    assert content_key(b"x", default.options_for("k.py")) != content_key(
        b"x", later.options_for("k.py")
    )


def test_the_setting_is_checked_where_it_is_read():
    settings = Settings()
    apply_table(settings, {"triton-ascend": "3.2.2"}, "pyproject.toml", settings.root)
    assert settings.lint_target == "ascend910b;triton-ascend=3.2.2"
    with pytest.raises(ConfigError, match="triton-ascend: not a release version"):
        apply_table(settings, {"triton-ascend": "newest"}, "pyproject.toml", settings.root)


def rows(target: str) -> list[tuple[int, str]]:
    result = lint_source("k.py", EMPTY_GRID, frozenset({"ASC025"}), target=target)
    assert result.error is None
    return [(d.start.row, d.message.split(" is 0 ")[0]) for d in result.diagnostics]


def test_the_empty_grid_is_reported_before_3_2_2_and_the_empty_arange_always():
    grid = (12, "grid axis `triton.cdiv(n, 64)`")
    block = (13, "`BLOCK=triton.next_power_of_2(n)`")
    assert rows("ascend910b") == [grid, block]
    assert rows(lint_target("ascend910b", "3.2.1")) == [grid, block]
    assert rows(lint_target("ascend910b", "3.2.2")) == [block]


def test_the_command_line_option(tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(EMPTY_GRID)

    def run(*options):
        command = [sys.executable, "-m", "ascend_lint", "check", "--isolated", "--no-cache"]
        out = subprocess.run(
            [*command, "--select", "ASC025", "--output-format", "json", *options, str(path)],
            capture_output=True,
            text=True,
        )
        return out.returncode, out.stdout, out.stderr

    code, out, _ = run()
    assert code == 1 and len(json.loads(out)) == 2
    code, out, _ = run("--triton-ascend", "3.2.2")
    assert code == 1 and len(json.loads(out)) == 1
    code, _out, err = run("--triton-ascend", "soon")
    assert code == 2 and "--triton-ascend: not a release version" in err
