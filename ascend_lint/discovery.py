"""Which files to lint: walk the given paths, honour excludes, report what is missing."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from ascend_lint.settings import Settings

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # missing paths, unreadable folders
    warnings: list[str] = field(default_factory=list)


def dangling_link(path: Path) -> str:
    """Why a symbolic link leads nowhere: a loop, or a missing target."""
    try:
        path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports loops this way
        return "symbolic link loop"
    except OSError as exc:
        return "symbolic link loop" if exc.errno == errno.ELOOP else "broken symbolic link"
    return "broken symbolic link"


def discover(paths: list[str], settings: Settings, force_exclude: bool = False) -> Discovery:
    """Files to lint. A path named on the command line is linted even if excluded,
    unless `force_exclude` (what pre-commit needs: it passes every staged file)."""
    found = Discovery()
    seen: set[str] = set()

    def add(p: Path) -> None:
        key = os.path.normcase(os.path.abspath(p))
        if key not in seen:
            seen.add(key)
            found.files.append(p)

    for raw in paths:
        path = Path(raw)
        if path.is_symlink() and not path.exists():
            found.errors.append(f"{raw}: {dangling_link(path)}")
            continue
        if not path.exists():
            found.errors.append(f"{raw}: No such file or directory")
            continue
        if force_exclude and any(settings.is_excluded(p) for p in (path, *path.parents) if p.name):
            continue
        if path.is_file():
            add(path)  # a file named explicitly is linted whatever its name or excludes
            continue
        before = len(found.files)
        visited: set[tuple[int, int]] = set()
        for folder, dirs, files in os.walk(
            path,
            followlinks=True,
            onerror=lambda e: found.errors.append(f"{e.filename}: {e.strerror}"),
        ):
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in visited:  # a symlink loop
                dirs[:] = []
                continue
            visited.add((st.st_dev, st.st_ino))
            dirs[:] = sorted(d for d in dirs if not settings.is_excluded(Path(folder, d)))
            for name in sorted(files):
                if not name.endswith(PYTHON_SUFFIXES):
                    continue
                candidate = Path(folder, name)
                if settings.is_excluded(candidate):
                    continue
                if candidate.is_symlink() and not candidate.exists():
                    found.warnings.append(f"{candidate}: {dangling_link(candidate)}, skipped")
                    continue
                if candidate.is_dir():
                    continue  # a directory named `x.py`
                if not candidate.is_file():  # reading a FIFO would block forever
                    found.warnings.append(
                        f"{candidate}: not a regular file (FIFO, socket or device), skipped"
                    )
                    continue
                add(candidate)
        if len(found.files) == before:
            found.warnings.append(f"No Python files found under {raw}")
    return found
