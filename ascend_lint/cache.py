"""Content-hash cache: a file whose bytes, tool version and enabled codes are unchanged
is not parsed again.

A file is identified by a hash of its bytes; its stat (size, mtime, ctime, inode) is
kept beside it as a shortcut that spares reading the file at all on the next run when
none of them changed (ctime cannot be set back by a tool that restores mtimes). A
stat is kept only for a file last changed more than `_SETTLED_NS` before it was read,
so a write in the same clock tick as the read is never mistaken for no change; a file
whose stat changed (a checkout, a formatter that rewrote the same bytes) is read and
hashed again, and answers from the cache when its bytes did not change."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from ascend_lint import __version__
from ascend_lint.diagnostics import Diagnostic
from ascend_lint.options import LintOptions

try:
    # hashlib loads OpenSSL on import (2 ms, on every start); the built-in BLAKE2 module
    # is what hashlib.blake2b returns anyway
    from _blake2 import blake2b
except ImportError:  # an interpreter without it
    from hashlib import blake2b

CACHE_DIR_NAME = ".ascend_lint_cache"
_FILE = "lint-cache.json"


def _tool_fingerprint() -> str:
    """The version plus the size and mtime of the linter's own modules, so an edited
    checkout or editable install never answers from results of older rule code. The
    rule folders are read where the rules package is: inside the package once
    installed, beside it (`rules/`) in an editable install of a checkout."""
    from ascend_lint import rules  # the registry alone: no rule is imported

    parts = [__version__]
    seen: set[str] = set()
    folders = [os.path.dirname(os.path.realpath(__file__))]
    folders += [os.path.realpath(p) for p in rules.__path__]
    for folder in folders:
        for module in sorted(_modules_under(folder)):
            if module in seen:
                continue
            seen.add(module)
            st = os.stat(module)
            parts.append(f"{module}:{st.st_size}:{st.st_mtime_ns}")
    return blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


def _modules_under(folder: str) -> list[str]:
    """Every `.py` file below `folder` (os.scandir: this runs on every start, and
    pathlib's rglob costs several times more for the package's two hundred files)."""
    found: list[str] = []
    stack = [folder]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith(".py"):
                    found.append(entry.path)
    return found


_FINGERPRINT: str | None = None


_OPTIONS_PARTS: dict[LintOptions, bytes] = {}  # a run has one or a few options


def _options_part(options: LintOptions) -> bytes:
    """What besides the bytes the findings depend on: the linter's own code (its
    fingerprint), the codes, which of them offer fixes, and the target."""
    global _FINGERPRINT
    found = _OPTIONS_PARTS.get(options)
    if found is None:
        if _FINGERPRINT is None:
            _FINGERPRINT = _tool_fingerprint()
        parts = (
            _FINGERPRINT,
            ",".join(sorted(options.codes)),
            ",".join(sorted(options.fixable)),
            options.target,
        )
        found = _OPTIONS_PARTS[options] = ("\0" + "\0".join(parts)).encode()
    return found


def content_key(raw: bytes, options: LintOptions) -> str:
    """The cache key of linting `raw` with `options`."""
    digest = blake2b(raw, digest_size=16)
    digest.update(_options_part(options))
    return digest.hexdigest()


# A file changed less than this long before it was read may change again within the
# same timestamp tick unseen by its stat: its stat is not kept (it is hashed next time).
_SETTLED_NS = 2_000_000_000
# Windows reports a file's creation time as st_ctime: a rewrite with its mtime set back
# would keep the whole stat, so there the bytes are always hashed.
_CTIME_IS_CREATION = sys.platform == "win32"


def stat_key(path: str, options: LintOptions) -> str | None:
    """The shortcut key of `path` as it is on disk now, linted with `options`, or None
    (it cannot be stat-ed, or it changed too recently to be told apart by its stat;
    on Windows, whose ctime is the creation time, every file is hashed)."""
    if _CTIME_IS_CREATION:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _SETTLED_NS:
        return None
    digest = blake2b(
        f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}".encode(), digest_size=16
    )
    digest.update(_options_part(options))
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
        # entries are kept by absolute path; os.path.abspath asks the OS for the working
        # folder on each call (a run looks up every file it finds, twice)
        self._cwd = os.getcwd()
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
            if not isinstance(data, dict) or not all(
                isinstance(v, list) and len(v) in (2, 3) for v in data.values()
            ):
                raise ValueError("unexpected layout")
            self.entries = data
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            sys.stderr.write(f"warning: ignoring unreadable cache {self.path}: {exc}\n")

    def _absolute(self, path: str) -> str:
        return os.path.normpath(os.path.join(self._cwd, path))  # an absolute path stays

    def get(self, path: str, key: str, stat: str | None = None) -> list[Diagnostic] | None:
        """The findings kept for `path` with content key `key`; a hit keeps `stat`
        (`stat_key`) beside them for the next run."""
        entry = self.entries.get(self._absolute(path))
        if entry is None or entry[0] != key or entry[1] is None:
            return None
        found = self._diagnostics(path, entry[1])
        if found is not None and stat is not None and entry[2:] != [stat]:
            entry[2:] = [stat]
            self.dirty = True
        return found

    def by_stat(self, path: str, stat: str) -> list[Diagnostic] | bool | None:
        """What is kept for `path` when its stat key is still `stat`: its findings,
        False for a file the prefilter skipped, None when unknown or changed."""
        entry = self.entries.get(self._absolute(path))
        if entry is None or entry[2:] != [stat]:
            return None
        return False if entry[1] is None else self._diagnostics(path, entry[1])

    @staticmethod
    def _diagnostics(path: str, kept: list) -> list[Diagnostic] | None:
        try:
            return [Diagnostic.from_dict(d, path) for d in kept]
        except (KeyError, TypeError, ValueError):
            return None

    def put(
        self, path: str, key: str, diagnostics: list[Diagnostic], stat: str | None = None
    ) -> None:
        entry: list = [key, [d.to_dict() for d in diagnostics]]
        self.entries[self._absolute(path)] = [*entry, stat] if stat else entry
        self.dirty = True

    def put_skipped(self, path: str, stat: str | None) -> None:
        """Remember that the prefilter skipped `path` (only by its stat: no bytes kept)."""
        absolute = self._absolute(path)
        if stat is None:
            if absolute in self.entries:
                del self.entries[absolute]
                self.dirty = True
            return
        if self.entries.get(absolute) != ["", None, stat]:
            self.entries[absolute] = ["", None, stat]
            self.dirty = True

    def _create_folder(self) -> None:
        """Create the cache folder with its tag in place: it is filled under a temporary
        name and renamed, so a concurrent run never sees it without CACHEDIR.TAG (and
        mistakes it for a folder that is not a cache). A run that loses the race to
        create it drops its own copy."""
        import shutil
        import tempfile

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
            import tempfile  # only when there is something to write

            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.entries, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError as exc:
            sys.stderr.write(f"warning: cannot write cache {self.path}: {exc}\n")
