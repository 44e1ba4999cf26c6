"""Content-hash cache: a file whose bytes, tool version and enabled codes are unchanged
is not parsed again. mtimes are not trusted (checkouts and formatters touch them)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ascend_lint import __version__
from ascend_lint.diagnostics import Diagnostic
from ascend_lint.options import LintOptions

CACHE_DIR_NAME = ".ascend_lint_cache"
_FILE = "lint-cache.json"


def _tool_fingerprint() -> str:
    """The version plus the size and mtime of the linter's own modules, so an edited
    checkout or editable install never answers from results of older rule code. The
    rule folders are read where the rules package is: inside the package once
    installed, beside it (`rules/`) in an editable install of a checkout."""
    from ascend_lint import rules  # the registry alone: no rule is imported

    parts = [__version__]
    seen: set[Path] = set()
    for folder in [Path(__file__).resolve().parent, *(Path(p).resolve() for p in rules.__path__)]:
        for module in sorted(folder.rglob("*.py")):
            if module in seen:
                continue
            seen.add(module)
            st = module.stat()
            parts.append(f"{module}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


_FINGERPRINT: str | None = None


def content_key(raw: bytes, options: LintOptions) -> str:
    """The cache key of linting `raw` with `options` (the findings depend on the bytes,
    the codes, which of them offer fixes, and the target)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        _FINGERPRINT = _tool_fingerprint()
    digest = hashlib.blake2b(raw, digest_size=16)
    parts = (
        _FINGERPRINT,
        ",".join(sorted(options.codes)),
        ",".join(sorted(options.fixable)),
        options.target,
    )
    digest.update(("\0" + "\0".join(parts)).encode())
    return digest.hexdigest()


CACHE_TAG = "CACHEDIR.TAG"
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"  # bford.info/cachedir
_TAG_TEXT = (
    f"{_SIGNATURE}\n# This folder is a cache created by ascend-lint; `ascend-lint clean`"
    " removes it.\n"
)


def is_cache_folder(folder: Path) -> bool:
    """Does `folder` hold the cache marker this tool writes? Only such a folder may be
    written into when it already exists, or removed by `clean`."""
    try:
        tag = (folder / CACHE_TAG).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if not tag.startswith(_SIGNATURE):
        return False
    if "ascend-lint" in tag:
        return True
    try:  # caches written before the tag named its tool
        return "ascend-lint" in (folder / ".gitignore").read_text(errors="replace")
    except OSError:
        return False


class Cache:
    def __init__(self, folder: Path):
        self.folder = folder
        self.path = folder / f"v{__version__}" / _FILE
        self.entries: dict[str, list] = {}
        self.dirty = False
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
            if not isinstance(data, dict) or not all(
                isinstance(v, list) and len(v) == 2 for v in data.values()
            ):
                raise ValueError("unexpected layout")
            self.entries = data
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            sys.stderr.write(f"warning: ignoring unreadable cache {self.path}: {exc}\n")

    def get(self, path: str, key: str) -> list[Diagnostic] | None:
        entry = self.entries.get(os.path.abspath(path))
        if entry is None or entry[0] != key:
            return None
        try:
            return [Diagnostic.from_dict(d, path) for d in entry[1]]
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, path: str, key: str, diagnostics: list[Diagnostic]) -> None:
        self.entries[os.path.abspath(path)] = [key, [d.to_dict() for d in diagnostics]]
        self.dirty = True

    def _create_folder(self) -> None:
        """Create the cache folder with its tag in place: it is filled under a temporary
        name and renamed, so a concurrent run never sees it without CACHEDIR.TAG (and
        mistakes it for a folder that is not a cache). A run that loses the race to
        create it drops its own copy."""
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=self.folder.parent, prefix=".ascend-lint-"))
        (staging / ".gitignore").write_text("# Automatically created by ascend-lint.\n*\n")
        (staging / CACHE_TAG).write_text(_TAG_TEXT)
        try:
            os.rename(staging, self.folder)
        except OSError:  # it exists now: another run created it first
            shutil.rmtree(staging, ignore_errors=True)

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            if not self.folder.exists():
                self._create_folder()
            if self.folder.exists() and not is_cache_folder(self.folder):
                if not self.folder.is_dir() or any(self.folder.iterdir()):
                    sys.stderr.write(
                        f"warning: not caching in {self.folder}: it exists and is not an "
                        "ascend-lint cache (no CACHEDIR.TAG); choose another `cache-dir`\n"
                    )
                    return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            marker = self.folder / ".gitignore"
            if not marker.exists():
                marker.write_text("# Automatically created by ascend-lint.\n*\n")
            tag = self.folder / CACHE_TAG
            if not tag.exists():
                tag.write_text(_TAG_TEXT)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.entries, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError as exc:
            sys.stderr.write(f"warning: cannot write cache {self.path}: {exc}\n")
