"""Speed must not change the findings: cache on/off and 1 or 2 processes give the same
JSON, a changed file is re-linted, a corrupt cache is ignored with a warning."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ascend_lint.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    """A small tree of kernels with findings of many rules (examples, fixtures, reference)."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "examples", tree / "examples")
    shutil.copytree(ROOT / "tests" / "fixtures", tree / "fixtures")
    shutil.copytree(ROOT / "reference_kernels", tree / "reference_kernels")
    for i in range(20):  # enough files for the process pool to start
        shutil.copy(ROOT / "examples" / "gpu_habits" / "chunk_o.py", tree / f"copy_{i}.py")
    monkeypatch.chdir(tmp_path)
    return tree


def run_json(capsys, *args) -> list:
    code = main(["--output-format", "json", *args])
    out, err = capsys.readouterr()
    assert code == 1, err
    return json.loads(out)


def test_cache_and_processes_do_not_change_findings(corpus, tmp_path, capsys):
    cache = str(tmp_path / "cache")
    baseline = run_json(capsys, "--no-cache", "-j", "1", "tree")
    assert len(baseline) > 50
    assert run_json(capsys, "--no-cache", "-j", "2", "tree") == baseline
    assert run_json(capsys, "--cache-dir", cache, "-j", "2", "tree") == baseline  # fills the cache
    assert (tmp_path / "cache").is_dir()
    assert run_json(capsys, "--cache-dir", cache, "-j", "1", "tree") == baseline  # served from it


def test_changed_file_is_linted_again(corpus, tmp_path, capsys):
    cache = str(tmp_path / "cache")
    first = run_json(capsys, "--cache-dir", cache, "tree/copy_0.py")
    path = corpus / "copy_0.py"
    path.write_text(path.read_text().replace("num_warps=4, ", ""))
    second = run_json(capsys, "--cache-dir", cache, "tree/copy_0.py")
    assert len(second) < len(first)


def test_corrupt_cache_is_ignored_with_a_warning(corpus, tmp_path, capsys):
    cache = tmp_path / "cache"
    baseline = run_json(capsys, "--cache-dir", str(cache), "tree/copy_0.py")
    for f in cache.rglob("*.json"):
        f.write_text("{not json")
    code = main(["--output-format", "json", "--cache-dir", str(cache), "tree/copy_0.py"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "warning: ignoring unreadable cache" in err
    assert json.loads(out) == baseline


def test_a_damaged_cached_fix_is_linted_again(corpus, tmp_path, capsys):
    """Cached fixes are decoded when first read (a warm run reads none): a damaged one
    must still send its file back to the linter, not fail later in the output."""
    cache = tmp_path / "cache"
    baseline = run_json(capsys, "--cache-dir", str(cache), "tree/copy_0.py")
    assert any(d["fix"] for d in baseline)
    (kept,) = cache.rglob("*.json")
    entries = json.loads(kept.read_text())
    damaged = 0
    for entry in entries.values():
        for diagnostic in entry[1] or ():
            if diagnostic["f"]:
                diagnostic["f"][2] = [edit[:3] for edit in diagnostic["f"][2]]
                damaged += 1
    assert damaged
    kept.write_text(json.dumps(entries))
    assert run_json(capsys, "--cache-dir", str(cache), "tree/copy_0.py") == baseline


def test_clean_removes_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    (tmp_path / "k.py").write_text("import triton\n")
    assert main(["k.py"]) == 0
    assert (tmp_path / ".ascend_lint_cache").is_dir()
    assert main(["clean"]) == 0
    assert not (tmp_path / ".ascend_lint_cache").exists()


def test_the_cache_key_changes_when_a_rule_module_changes(tmp_path, monkeypatch):
    """In an editable install the rule folders sit beside the package (`rules/`), not in
    it: an edited rule must still invalidate what the cache holds."""
    import os

    from ascend_lint import cache, rules

    folder = tmp_path / "rules"
    (folder / "asc999").mkdir(parents=True)
    module = folder / "asc999" / "rule.py"
    module.write_text("X = 1\n")
    monkeypatch.setattr(rules, "__path__", [*rules.__path__, str(folder)])
    before = cache._tool_fingerprint()
    module.write_text("X = 22\n")
    os.utime(module, ns=(1, 1))
    assert cache._tool_fingerprint() != before


@pytest.fixture
def settled(monkeypatch):
    """Files count as settled at once (the run trusts a stat kept from any earlier run),
    and every read of a file's bytes is recorded."""
    import ascend_lint.cache as cache_module
    import ascend_lint.runner as runner

    monkeypatch.setattr(cache_module, "_SETTLED_NS", -(10**12))
    reads: list[str] = []
    real = runner.read_source

    def recording(path, codes):
        reads.append(Path(path).name)
        return real(path, codes)

    monkeypatch.setattr(runner, "read_source", recording)
    return reads


def test_an_unchanged_tree_is_answered_from_the_cache_without_reading_a_file(
    corpus, tmp_path, capsys, settled
):
    cache = str(tmp_path / "cache")
    (corpus / "notes.py").write_text("print('no kernel here')\n")  # skipped by the prefilter
    first = run_json(capsys, "--cache-dir", cache, "tree")
    assert "notes.py" in settled and "copy_0.py" in settled
    settled.clear()
    assert run_json(capsys, "--cache-dir", cache, "tree") == first
    assert settled == []  # the kept stats answered for every file, skipped ones too


def test_a_file_rewritten_with_its_old_size_and_mtime_is_read_again(
    corpus, tmp_path, capsys, settled
):
    import os

    cache = str(tmp_path / "cache")
    path = corpus / "copy_0.py"
    first = run_json(capsys, "--cache-dir", cache, "tree/copy_0.py")
    before = path.stat()
    text = path.read_text()
    # the same length (a launch option blanked out), and the mtime set back as some tools do
    launch = "        num_warps=4, num_stages=2,"
    path.write_text(text.replace(launch, " " * len(launch), 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    settled.clear()
    second = run_json(capsys, "--cache-dir", cache, "tree/copy_0.py")
    assert settled == ["copy_0.py"]  # ctime moved: the stat no longer answers
    assert second != first


def test_a_file_changed_just_before_the_run_keeps_no_stat(corpus, tmp_path, capsys, monkeypatch):
    import ascend_lint.cache as cache_module

    monkeypatch.setattr(cache_module, "_SETTLED_NS", 10**15)  # every file is "just changed"
    cache = tmp_path / "cache"
    run_json(capsys, "--cache-dir", str(cache), "tree/copy_0.py")
    (entry,) = json.loads(next(cache.rglob("lint-cache.json")).read_text()).values()
    assert len(entry) == 2  # content key and findings: the next run hashes the bytes
