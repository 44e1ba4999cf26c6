"""Every rule is documented, and every reference kernel a doc or rule names exists."""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest
from lint_helpers import lint_code
from rule_snapshots import fix_example, offers_fix

from ascend_lint.cli import main
from ascend_lint.diagnostics import Applicability
from ascend_lint.docs import SOURCE_URL, Reference, rule_doc, rule_doc_section, rules_dir
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
    blocks = _python_blocks(rule_doc(rule.code))
    if rule.code == "ASC000":
        blocks = blocks[1:]  # its Example is a file that does not parse, on purpose
    for block in blocks:
        ast.parse(block)


# -- the corrected code `ascend-lint rule CODE` shows -----------------------------------


def _python_blocks(text: str | None) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text or "", flags=re.S)


def _shows(rule) -> tuple[str, ...]:
    return (rule.shows,) if isinstance(rule.shows, str) else tuple(rule.shows)


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _code_only(source: str) -> str:
    """`source` without its comments, docstrings and whitespace: where a construct is
    looked for, so that a mention in a comment does not count as code."""
    tree = ast.parse(source)
    docstrings = {
        (node.body[0].lineno, node.body[0].col_offset)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and isinstance(node.body[0].value.value, str)
    }
    kept = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type != tokenize.COMMENT and token.start not in docstrings
    ]
    return _squeezed("".join(kept))


def _declaration_help(rule) -> str:
    return (
        f"{rule.__name__} ({rule.code}) must name the corrected code that "
        f"`ascend-lint rule {rule.code}` shows. Add to the class, next to `summary`:\n"
        '    references = ("<file>.py::<function>", ...)  # functions of reference_kernels/ '
        "that show the fix\n"
        '    shows = "<code>"  # a piece of code each of them contains, as named in the '
        f'"## Use instead" section of rules/{rule.code}.md (a tuple for a few)\n'
        "or `references = ()` and `shows = ()` for a rule whose fix no kernel code can show. "
        "Where no reference function shows the fix, add a small corrected one to "
        "reference_kernels/ with a numerics test in tests/kernels/."
    )


@pytest.mark.parametrize("rule", ALL_RULES, ids=RULE_IDS)
def test_rule_names_the_code_that_shows_its_fix(rule):
    assert "references" in vars(rule) and "shows" in vars(rule), _declaration_help(rule)
    assert isinstance(rule.references, tuple), _declaration_help(rule)
    assert bool(rule.references) == bool(_shows(rule)), _declaration_help(rule)


WITH_REFERENCES = [r for r in ALL_RULES if r.references]


@pytest.mark.parametrize("rule", WITH_REFERENCES, ids=[r.code for r in WITH_REFERENCES])
def test_rule_command_shows_code_that_contains_the_fix(rule, capsys):
    """Every function `ascend-lint rule CODE` prints contains the fix that the doc's "Use
    instead" names: each piece of `shows` is in that section and in some printed
    function, and each printed function holds one of them."""
    assert main(["rule", rule.code]) == 0
    out = capsys.readouterr().out
    heading = f"## Reference kernel{'s' if len(rule.references) > 1 else ''}: "
    assert heading + ", ".join(r.partition("::")[2] for r in rule.references) in out
    printed = _python_blocks(out.split(heading, 1)[1])
    assert len(printed) == len(rule.references), (
        f"{rule.code}: `ascend-lint rule` printed {len(printed)} functions for "
        f"{rule.references}; each must be a top-level function of reference_kernels/<file>.py"
    )
    shows = [_squeezed(piece) for piece in _shows(rule)]
    use_instead = _squeezed(rule_doc_section(rule.code, "Use instead") or "")
    for piece, named in zip(shows, _shows(rule)):
        assert piece in use_instead, (
            f"{rule.code}.shows names {named!r}, which the Use instead section of "
            f"rules/{rule.code}.md does not"
        )
    codes = []
    for reference, block in zip(rule.references, printed):
        where, _, source = block.partition("\n")
        assert where.startswith(f"# ascend_lint/reference_kernels/{reference.split('::')[0]}:")
        code = _code_only(source)
        assert any(piece in code for piece in shows), (
            f"{rule.code}: {reference} holds none of {_shows(rule)}: name a function that "
            "holds the fix, or write one"
        )
        codes.append(code)
    for piece, named in zip(shows, _shows(rule)):
        assert any(piece in code for code in codes), (
            f"{rule.code}: no function of {rule.references} holds {named!r}"
        )


def test_rule_json_gives_the_functions_with_their_package_paths(capsys):
    assert main(["rule", "--all", "--output-format", "json"]) == 0
    by_code = {item["code"]: item for item in json.loads(capsys.readouterr().out)}
    for rule in ALL_RULES:
        shown = by_code[rule.code]["reference_kernels"]
        assert [(s["path"], s["function"]) for s in shown] == [
            (f"ascend_lint/reference_kernels/{file}", function)
            for file, _, function in (r.partition("::") for r in rule.references)
        ]
        for item in shown:
            _path, line, source = Reference.parse(
                item["path"].rsplit("/", 1)[1] + "::" + item["function"]
            ).source()
            assert (item["line"], item["source"]) == (line, source)


@pytest.mark.parametrize("rule", WITH_REFERENCES, ids=[r.code for r in WITH_REFERENCES])
def test_doc_references_name_the_functions_the_rule_shows(rule):
    """The doc's `ascend-lint rule CODE` bullet links the functions that command prints."""
    references = rule_doc_section(rule.code, "References") or ""
    bullet = re.search(
        rf"^\* `ascend-lint rule {rule.code}`:(.*?)(?=^\* |\Z)", references, flags=re.M | re.S
    )
    assert bullet, f"rules/{rule.code}.md: no `* `ascend-lint rule {rule.code}`: ...` reference"
    named = re.findall(r"\[`reference_kernels/(\w+\.py::\w+)`\]", bullet.group(1))
    assert tuple(named) == rule.references, (
        f"rules/{rule.code}.md names {named}; the rule shows {list(rule.references)}: link "
        + ", ".join(
            f"[`reference_kernels/{r}`]({SOURCE_URL.format(file=r.partition('::')[0])})"
            for r in rule.references
        )
    )


# Rules whose `references` (what `ascend-lint rule` and each finding's help name) must be
# the kernels their doc's "Use instead" section names.
_USE_INSTEAD_IS_THE_REFERENCE = ("ASC025", "ASC026", "ASC030", "ASC031")


@pytest.mark.parametrize("code", _USE_INSTEAD_IS_THE_REFERENCE)
def test_the_reference_is_the_use_instead_kernel(code):
    rule = next(r for r in ALL_RULES if r.code == code)
    doc = rule_doc(code) or ""
    use_instead = doc.split("## Use instead", 1)[1].split("\n## ", 1)[0]
    for reference in rule.references:
        assert f"`reference_kernels/{reference}`" in use_instead, reference


def test_every_kernel_named_in_docs_exists():
    """`reference_kernels/<file>.py::<function>` mentions in the docs name real functions."""
    for rule in ALL_RULES:
        doc = rule_doc(rule.code) or ""
        for named in re.findall(r"reference_kernels/(\w+\.py::\w+)", doc):
            assert Reference.parse(named).source() is not None, (
                f"{rule.code}.md names missing reference_kernels/{named}"
            )


# -- a doc's Example and Use instead are what the rule does --------------------------------


def _marked_rows(code: str, block: str) -> list[int]:
    """Rows whose comment names `code` (`# ASC002`, `# ASC004 (twice)`)."""
    return [
        row for row, line in enumerate(block.splitlines(), 1) if re.search(rf"#.*\b{code}\b", line)
    ]


def _example_and_use_instead(rule) -> tuple[str, list[str]]:
    """The first ```python block of the Example and the Use instead blocks, each a whole
    module: a Use instead block that imports nothing continues the Example's module, so
    the Example's imports are put before it."""
    example = _python_blocks(rule_doc_section(rule.code, "Example"))
    use_instead = _python_blocks(rule_doc_section(rule.code, "Use instead"))
    assert example and use_instead, (
        f"rules/{rule.code}.md needs a ```python block under ## Example and under ## Use instead"
    )
    imports = re.match(r"(?:(?:import|from) [^\n]*\n)*\n*", example[0]).group()
    return example[0], [
        block if re.search(r"^(import|from) ", block, flags=re.M) else imports + block
        for block in use_instead
    ]


@pytest.mark.parametrize("rule", ALL_RULES, ids=RULE_IDS)
def test_doc_example_is_reported_where_marked_and_use_instead_is_clean(rule):
    """The Example block, linted alone with the rule, is reported on exactly the rows
    whose comment names the code, and the rule reports nothing in the Use instead blocks."""
    example, use_instead = _example_and_use_instead(rule)
    found = lint_code(example, select=rule.code)
    assert found.error is None
    rows = sorted({d.start.row for d in found.diagnostics})
    assert rows and rows == _marked_rows(rule.code, example), (
        f"rules/{rule.code}.md: the Example is reported on rows {rows}; mark exactly those "
        f"with `# {rule.code}` comments: "
        + "; ".join(f"{d.start.row}: {d.message}" for d in found.diagnostics)
    )
    for block in use_instead:
        clean = lint_code(block, select=rule.code)
        assert clean.error is None
        assert [(d.start.row, d.message) for d in clean.diagnostics] == []


def _syntax(code: str) -> str:
    return ast.dump(ast.parse(code))


WITH_FIX = [r for r in ALL_RULES if offers_fix(r)]


@pytest.mark.parametrize("rule", WITH_FIX, ids=[r.code for r in WITH_FIX])
def test_doc_example_is_the_first_invalid_case(rule):
    """The Example of a rule that offers a fix is its first INVALID case, whose fixed
    output `snapshots/invalid-0.diff` pins. Compared as syntax trees: the doc may
    comment and format the code its own way."""
    example, _ = _example_and_use_instead(rule)
    assert _syntax(example) == _syntax(rule.INVALID[0].code), (
        f"rules/{rule.code.lower()}/{rule.code}.md: the Example is not {rule.code}'s first INVALID case (in "
        f"rules/{rule.code.lower()}/rule.py); make the two the same code"
    )


FIXABLE = [
    r for r in ALL_RULES if r.fix_applicability in (Applicability.SAFE, Applicability.UNSAFE)
]


@pytest.mark.parametrize("rule", FIXABLE, ids=[r.code for r in FIXABLE])
def test_doc_use_instead_is_the_fixed_output_of_the_first_invalid_case(rule):
    """The first Use instead block is what the fix makes of the first INVALID case (the
    Example), as its snapshot pins it; compared as syntax trees. A display-only
    suggestion is not a whole correction: those rules' Use instead is written by hand."""
    _, use_instead = _example_and_use_instead(rule)
    outcome = fix_example(rule, rule.INVALID[0].code)
    assert outcome.error is None
    fixed = outcome.fixed.decode()
    assert _syntax(fixed) == _syntax(use_instead[0]), (
        f"rules/{rule.code.lower()}/{rule.code}.md: the first Use instead block is not what "
        f"the fix makes of the Example ({rule.code}'s first INVALID case, pinned in "
        f"rules/{rule.code.lower()}/snapshots/invalid-0.diff); the fix writes:\n{fixed}"
    )


def test_no_doc_without_a_rule():
    codes = {p.stem for p in rules_dir().glob("asc*/ASC*.md")}
    assert codes == set(RULE_IDS)
    # each doc sits in its rule's folder, beside the rule
    for path in rules_dir().glob("asc*/ASC*.md"):
        assert path.parent.name == path.stem.lower() and (path.parent / "rule.py").is_file()


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
        folder = f"ascend_lint/rules/{rule.code.lower()}"
        assert f"{folder}/{rule.code}.md" in names and f"{folder}/rule.py" in names
    # The snapshots of the fixed examples ship beside the examples they pin.
    snapshots = sorted((source / "rules").glob("asc*/snapshots/*.diff"))
    assert snapshots
    for path in snapshots:
        assert f"ascend_lint/rules/{path.parent.parent.name}/snapshots/{path.name}" in names
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
    # Every reference function, with its path inside the package, read where it is installed.
    installed = target / "ascend_lint" / "reference_kernels"
    shown_functions = re.findall(
        r"```python\n# ascend_lint/reference_kernels/(\w+\.py):(\d+)\n(.*?)\n```",
        run.stdout,
        flags=re.S,
    )
    assert len(shown_functions) == sum(len(rule.references) for rule in ALL_RULES)
    for file, line, source in shown_functions:
        lines = (installed / file).read_text(encoding="utf-8").splitlines()
        start = int(line) - 1
        assert source.splitlines() == lines[start : start + len(source.splitlines())]
    assert 'pip install "ascend-lint[kernels]"' in run.stdout.split("IMPORT:")[1]
    # Every path it showed exists there, or is a URL: no path of the repository, which
    # the installed copy does not have, outside a URL or the installed kernel's own path.
    shown = re.sub(r"\[[^\]]*\]\(https?://[^)]*\)", "", run.stdout.split("IMPORT:")[0])
    shown = re.sub(r"https?://\S+", "", shown)
    assert (
        "help: corrected pattern: chunk_fwd_o in ascend_lint/reference_kernels/chunk_o.py, "
        "shown by `ascend-lint rule ASC004`"
    ) in shown
    stray = re.findall(r"(?<![\w/.-])(?:reference_kernels|examples|benchmarks|tests)/\S*", shown)
    stray += re.findall(r"(?<![\w/.-])docs/(?!zh/|en/|sources/)\S*", shown)
    assert [path for path in stray if "*" not in path] == []  # globs in config examples aside


# -- every path a reader is shown exists where they are, or is a URL --------------------

HOME = "https://github.com/ascend-lint/ascend-lint/"
# This repository's folders; the wheel ships only `rules/` (as ascend_lint.rules) and the
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
    yield from sorted((root / "rules").glob("asc*/ASC*.md"))


@pytest.mark.parametrize("document", list(_shown_documents()), ids=lambda p: p.name)
def test_repository_paths_in_shipped_text_are_links_to_files_that_exist(document):
    root = Path(__file__).resolve().parents[1]
    text = _outside_fences(document.read_text(encoding="utf-8"))
    assert _OWN_PATH.findall(text) == []
    for target in _OWN_LINK.findall(text):
        path = target.split("::")[0]
        assert (root / path).exists(), f"{document.name} links to {path}, which does not exist"
