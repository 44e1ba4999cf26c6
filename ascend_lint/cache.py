"""Content-hash cache: a file whose bytes, tool version and enabled codes are unchanged
is not parsed again. mtimes are not trusted (checkouts and formatters touch them)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from ascend_lint import __version__
from ascend_lint.diagnostics import Diagnostic

CACHE_DIR_NAME = ".ascend_lint_cache"
_FILE = "lint-cache.json"


def _tool_fingerprint() -> str:
    """The version plus the size and mtime of the linter's own modules, so an edited
    checkout or editable install never answers from results of older rule code."""
    package = Path(__file__).resolve().parent
    parts = [__version__]
    for module in sorted(package.rglob("*.py")):
        st = module.stat()
        parts.append(f"{module.relative_to(package)}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


_FINGERPRINT: str | None = None


def content_key(raw: bytes, codes: frozenset[str]) -> str:
    global _FINGERPRINT
    if _FINGERPRINT is None:
        _FINGERPRINT = _tool_fingerprint()
    digest = hashlib.blake2b(raw, digest_size=16)
    digest.update(("\0" + _FINGERPRINT + "\0" + ",".join(sorted(codes))).encode())
    return digest.hexdigest()


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

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            marker = self.folder / ".gitignore"
            if not marker.exists():
                marker.write_text("# Automatically created by ascend-lint.\n*\n")
                (self.folder / "CACHEDIR.TAG").write_text(
                    "Signature: 8a477f597d28d172789f06886806bc55\n"
                )
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.entries, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError as exc:
            sys.stderr.write(f"warning: cannot write cache {self.path}: {exc}\n")
