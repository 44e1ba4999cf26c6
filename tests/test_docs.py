"""Every rule is documented, and every reference kernel a doc or rule names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ascend_lint.docs import docs_dir, reference_source, rule_doc
from ascend_lint.rules import ALL_RULES

SECTIONS = [
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
    "## Fix safety",
    "## Options",
    "## References",
]
RULE_IDS = [rule.code for rule in ALL_RULES]


@pytest.mark.parametrize("rule", ALL_RULES, ids=RULE_IDS)
def test_doc_has_ruff_sections_in_order(rule):
    doc = rule_doc(rule.code)
    assert doc is not None, f"rules/{rule.code}.md is missing"
    assert doc.startswith(f"# {rule.name} ({rule.code})")
    positions = [doc.find(section) for section in SECTIONS]
    assert -1 not in positions, (
        f"missing sections: {[s for s, p in zip(SECTIONS, positions) if p < 0]}"
    )
    assert positions == sorted(positions)


@pytest.mark.parametrize("rule", ALL_RULES, ids=RULE_IDS)
def test_doc_code_blocks_parse(rule):
    for block in re.findall(r"```python\n(.*?)```", rule_doc(rule.code) or "", flags=re.S):
        ast.parse(block)


@pytest.mark.parametrize(
    "rule", [r for r in ALL_RULES if r.reference], ids=[r.code for r in ALL_RULES if r.reference]
)
def test_reference_kernel_exists(rule):
    found = reference_source(rule.reference)
    assert found is not None, f"{rule.reference} not found"
    _path, _line, source = found
    assert source.lstrip().startswith(("@", "def "))


# Rules whose `reference` (what `ascend-lint rule` and each finding's help name) must be the
# kernel their doc's "Use instead" section shows.
_USE_INSTEAD_IS_THE_REFERENCE = ("ASC025", "ASC026", "ASC030", "ASC031")


@pytest.mark.parametrize("code", _USE_INSTEAD_IS_THE_REFERENCE)
def test_the_reference_is_the_use_instead_kernel(code):
    rule = next(r for r in ALL_RULES if r.code == code)
    doc = rule_doc(code) or ""
    use_instead = doc.split("## Use instead", 1)[1].split("\n## ", 1)[0]
    assert f"`{rule.reference}`" in use_instead


def test_every_kernel_named_in_docs_exists():
    """`reference_kernels/<file>.py::<function>` and `` `function` `` mentions in the Use
    instead sections must name real functions."""
    for rule in ALL_RULES:
        doc = rule_doc(rule.code) or ""
        for file, func in re.findall(r"(reference_kernels/\w+\.py)::(\w+)", doc):
            assert reference_source(f"{file}::{func}") is not None, (
                f"{rule.code}.md names missing {file}::{func}"
            )


def test_no_doc_without_a_rule():
    codes = {p.stem for p in docs_dir().glob("ASC*.md")}
    assert codes == set(RULE_IDS)


def test_wheel_ships_docs_and_reference_kernels(tmp_path):
    """A user who pip-installs the package gets `ascend-lint rule ASC001` with the kernel."""
    import shutil
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    # Build from a copy: setuptools leaves a build/ folder next to the sources.
    source = tmp_path / "src"
    shutil.copytree(
        Path(__file__).resolve().parents[1],
        source,
        ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".*_cache"),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 and any(
        w in proc.stderr for w in ("Could not find", "connection", "Network")
    ):
        pytest.skip(f"cannot fetch the build backend: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr
    [wheel] = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for rule in ALL_RULES:
        assert f"ascend_lint/docs/{rule.code}.md" in names
    # The kernels ship inside the package namespace, every module of the folder.
    for module in sorted((source / "reference_kernels").glob("*.py")):
        assert f"ascend_lint/reference_kernels/{module.name}" in names
    assert not [n for n in names if n.startswith("reference_kernels/")]

    # Installed without torch and triton: the rule shows its kernel, and importing a
    # kernel module says which extra to install.
    target = tmp_path / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (target / "reference_kernels").exists()
    blocked = (
        "import sys\n"
        "for name in ('torch', 'triton'): sys.modules[name] = None\n"
        "from ascend_lint.cli import main\n"
        "assert main(['rule', '--all']) == 0\n"
        "assert main(['check', '--isolated', '--no-cache', 'k.py']) == 1\n"
        "try:\n"
        "    import ascend_lint.reference_kernels.chunk_o\n"
        "except ImportError as exc:\n"
        "    print('IMPORT:', exc)\n"
    )
    (tmp_path / "k.py").write_text(
        "import triton\n\n@triton.jit\ndef k(x):\n    pass\n\n"
        "def launch(x):\n    k[(1,)](x, num_warps=4)\n"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(target)!r})\n" + blocked,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert f"# {target / 'ascend_lint' / 'reference_kernels'}" in run.stdout  # the kernel's path
    assert "```python" in run.stdout
    assert 'pip install "ascend-lint[kernels]"' in run.stdout.split("IMPORT:")[1]
    # Every path it showed exists there, or is a URL: no path of the repository, which
    # the installed copy does not have, outside a URL or the installed kernel's own path.
    shown = re.sub(r"\[[^\]]*\]\(https?://[^)]*\)", "", run.stdout.split("IMPORT:")[0])
    shown = re.sub(r"https?://\S+", "", shown)
    assert "help: corrected pattern: chunk_fwd_o, shown by `ascend-lint rule ASC004`" in shown
    stray = re.findall(r"(?<![\w/.-])(?:reference_kernels|examples|benchmarks|tests)/\S*", shown)
    stray += re.findall(r"(?<![\w/.-])docs/(?!zh/|en/|sources/)\S*", shown)
    assert [path for path in stray if "*" not in path] == []  # globs in config examples aside


# -- every path a reader is shown exists where they are, or is a URL --------------------

HOME = "https://github.com/ascend-lint/ascend-lint/"
# This repository's folders; the wheel ships only `rules/` (as ascend_lint/docs) and the
# reference kernels (as ascend_lint.reference_kernels), so a reader of the PyPI page or
# of `ascend-lint rule` has none of them at these paths. (`docs/en|zh|sources/...` are
# cited files of Triton-Ascend, named with its URL and commit.)
_OWN_PATH = re.compile(
    r"(?<!\[)`((?:docs(?!/zh/|/en/|/sources/)|examples|benchmarks|tests|reference_kernels|rules)"
    r"/[^`\s*]*)`(?!\]\()"
)
_OWN_LINK = re.compile(re.escape(HOME) + r"(?:blob|tree)/main/([^)#\s]+)")


def _outside_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _shown_documents():
    root = Path(__file__).resolve().parents[1]
    yield root / "README.md"  # also the package's long description on PyPI
    yield from sorted((root / "rules").glob("*.md"))


@pytest.mark.parametrize("document", list(_shown_documents()), ids=lambda p: p.name)
def test_repository_paths_in_shipped_text_are_links_to_files_that_exist(document):
    root = Path(__file__).resolve().parents[1]
    text = _outside_fences(document.read_text(encoding="utf-8"))
    assert _OWN_PATH.findall(text) == []
    for target in _OWN_LINK.findall(text):
        path = target.split("::")[0]
        assert (root / path).exists(), f"{document.name} links to {path}, which does not exist"
