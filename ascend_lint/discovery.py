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
    # as they are shown: a named file as `str(Path(name))`, a found one joined to its
    # folder's (strings: a Path per file costs more than the rest of a cached run's walk)
    files: list[str] = field(default_factory=list)
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
    force_excluded = 0
    cwd = os.getcwd()  # once: os.path.abspath asks the OS for it on every call

    def add(p: str) -> None:
        # the same file named twice is linted once
        key = os.path.normcase(os.path.normpath(os.path.join(cwd, p)))
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
        if force_exclude and settings.excludes(path):
            force_excluded += 1
            continue
        if path.is_file():
            add(str(path))  # a file named explicitly is linted whatever its name or excludes
            continue
        if not path.is_dir():
            # A FIFO, socket or device: reading it could block or never end.
            found.errors.append(
                f"{raw}: not a regular file or folder ({_kind(path)}); name a file or a folder"
            )
            continue
        before = len(found.files)
        _walk(path, settings, found, add)
        if len(found.files) == before:
            found.warnings.append(f"No Python files found under {raw}")
    if force_excluded and not found.files and not found.errors and not found.warnings:
        # Every path named was excluded: say so rather than report a clean run.
        found.warnings.append(
            "No Python files found under the given paths (the settings exclude them, "
            "and --force-exclude is set)"
        )
    return found


def _kind(path: Path) -> str:
    if path.is_fifo():
        return "a named pipe"
    if path.is_socket():
        return "a socket"
    if path.is_block_device() or path.is_char_device():
        return "a device"
    return "not a file"


class GitIgnore:
    """The `.gitignore` rules that apply inside one git work tree, as git reads them:
    every `.gitignore` from the top of the work tree down, plus `.git/info/exclude`, a
    deeper file overriding a shallower one and `!pattern` re-including. Outside a git
    work tree nothing is ignored.

    `start` is the folder named on the command line: it is walked even where a
    `.gitignore` above it ignores it (a scratch folder, a vendored tree), as Ruff walks
    it, since that is what the user asked for. The patterns that ignore `start` or a
    folder above it do not apply beneath it; the others (`*.gen.py`) still do."""

    def __init__(self, start: Path):
        self.start = str(start.resolve())
        self.top = _work_tree_top(Path(self.start))
        self._specs: dict[str, object | None] = {}  # folder -> its spec (None: no file)

    def _spec(self, folder: str):
        if folder not in self._specs:
            lines: list[str] = []
            names = [".gitignore"]
            if self.top is not None and folder == str(self.top):
                # Lowest precedence first (a later pattern wins), as git ranks them: the
                # user's global excludes, then the repository's, then its .gitignore.
                exclude = os.path.join(".git", "info", "exclude")
                names = [*_global_excludes(), exclude, ".gitignore"]
            for name in names:
                try:
                    with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                        lines += fh.read().splitlines()
                except OSError:
                    continue
            spec = _compile(lines) if lines else None
            if spec is not None and self.start.startswith(folder + os.sep):
                spec = self._beneath_start(folder, spec)
            self._specs[folder] = spec
        return self._specs[folder]

    def _beneath_start(self, folder: str, spec):
        """`spec` of a folder above `start`, less the patterns that ignore `start` or a
        folder between the two (they would ignore everything the walk finds)."""
        parts = os.path.relpath(self.start, folder).split(os.sep)
        between = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]
        kept = [
            pattern
            for pattern in spec.patterns
            if not (pattern.include and any(pattern.match_file(d) for d in between))
        ]
        if len(kept) == len(spec.patterns):
            return spec
        return type(spec)(kept) if kept else None

    def ignored(self, path: str, is_dir: bool) -> bool:
        if self.top is None:
            return False
        real = os.path.abspath(path)
        top = str(self.top)
        if not real.startswith(top + os.sep):
            return False
        verdict = False
        folder = top
        for part in os.path.relpath(os.path.dirname(real), top).split(os.sep):
            verdict = self._check(folder, real, is_dir, verdict)
            if part in ("", "."):
                break
            folder = os.path.join(folder, part)
        else:
            verdict = self._check(folder, real, is_dir, verdict)
        return verdict

    def _check(self, folder: str, real: str, is_dir: bool, verdict: bool) -> bool:
        spec = self._spec(folder)
        if spec is None:
            return verdict
        rel = os.path.relpath(real, folder).replace(os.sep, "/") + ("/" if is_dir else "")
        result = spec.check_file(rel)
        return verdict if result.include is None else bool(result.include)


def _compile(lines: list[str]):
    import pathspec  # only where a .gitignore exists

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _global_excludes() -> list[str]:
    """The user's global excludes file, as git finds it: `core.excludesFile` of the
    global git configuration, else `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`)."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    chosen = os.path.join(config_home, "git", "ignore")
    # Read in git's order, the later file winning: the XDG one, then ~/.gitconfig.
    for config in (os.path.join(config_home, "git", "config"), os.path.expanduser("~/.gitconfig")):
        value = _core_excludes_file(config)
        if value is not None:
            chosen = os.path.expanduser(value)
    return [chosen]


def _core_excludes_file(config: str) -> str | None:
    """`core.excludesFile` as one git configuration file sets it (the last setting wins);
    None where it sets none or cannot be read."""
    try:
        with open(config, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    found, section = None, ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line[1:].split("]", 1)[0].split(None, 1)[0].strip().lower()
            continue
        key, sep, value = line.partition("=")
        if sep and section == "core" and key.strip().lower() == "excludesfile":
            value = value.split(" #", 1)[0].split(" ;", 1)[0].strip()
            found = value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value
    return found


def _work_tree_top(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _walk(root: Path, settings: Settings, found: Discovery, add) -> None:
    """Depth-first, sorted, following directory links once (a link loop ends there).
    os.scandir's entries carry their file type, so a regular file costs no extra stat."""
    visited: set[tuple[int, int]] = set()
    gitignore = GitIgnore(root) if settings.respect_gitignore else None
    stack = [str(root)]
    # a found file is shown as Path would show it: the walk of `.` yields `./x.py`
    strip = len(os.curdir + os.sep) if stack[0] == os.curdir else 0
    while stack:
        folder = stack.pop()
        try:
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in visited:  # a symlink loop
                continue
            visited.add((st.st_dev, st.st_ino))
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            found.errors.append(f"{exc.filename or folder}: {exc.strerror}")
            continue
        subfolders = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # follows links
            except OSError:
                is_dir = False
            if is_dir:
                if not settings.is_excluded(entry.path) and not (
                    gitignore and gitignore.ignored(entry.path, True)
                ):
                    subfolders.append(entry.path)
                continue  # a directory named `x.py` is a directory
            if not entry.name.endswith(PYTHON_SUFFIXES) or settings.is_excluded(entry.path):
                continue
            if gitignore and gitignore.ignored(entry.path, False):
                continue
            try:
                regular = entry.is_file()
            except OSError:
                regular = False
            if not regular:
                candidate = Path(entry.path)
                if entry.is_symlink() and not os.path.exists(entry.path):
                    found.warnings.append(f"{candidate}: {dangling_link(candidate)}, skipped")
                else:  # reading a FIFO would block forever
                    found.warnings.append(
                        f"{candidate}: not a regular file (FIFO, socket or device), skipped"
                    )
                continue
            add(entry.path[strip:])
        stack.extend(reversed(subfolders))
