"""Settings: `[tool.ascend-lint]` in the nearest pyproject.toml, then the command line."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

from ascend_lint.options import LintOptions
from ascend_lint.reporters import OUTPUT_FORMATS
from ascend_lint.rules import RULE_CODES, SYNTAX_ERROR_CODE
from ascend_lint.toolchain import (
    DEFAULT_TARGET,
    DEFAULT_TRITON_ASCEND,
    lint_target,
    parse_version,
)

ALL_CODES = frozenset(RULE_CODES)
DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "__pycache__",
    "__pypackages__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    ".eggs",
    "*.egg-info",
)

# key -> expected type, as users write it in pyproject.toml
_KEYS: dict[str, type | tuple[type, ...]] = {
    "select": list,
    "ignore": list,
    "extend-select": list,
    "per-file-ignores": dict,
    "exclude": list,
    "extend-exclude": list,
    "output-format": str,
    "fix": bool,
    "cache-dir": str,
    "unsafe-fixes": bool,
    "fixable": list,
    "unfixable": list,
    "respect-gitignore": bool,
    "target": str,
    "triton-ascend": str,
}


class ConfigError(Exception):
    """A settings problem the user must fix: exit 2 with this message."""


@dataclass
class Settings:
    select: list[str] = field(default_factory=lambda: ["ALL"])
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    output_format: str = "full"
    fix: bool = False
    cache_dir: str | None = None
    unsafe_fixes: bool = False
    fixable: list[str] = field(default_factory=lambda: ["ALL"])
    unfixable: list[str] = field(default_factory=list)
    respect_gitignore: bool = True  # skip what the work tree's .gitignore files ignore
    target: str = DEFAULT_TARGET  # the SoC whose Unified Buffer budget ASC022 checks
    # the triton-ascend release the project compiles with (rules a later release fixed)
    triton_ascend: str = DEFAULT_TRITON_ASCEND
    root: Path = field(default_factory=Path.cwd)  # folder of the pyproject.toml in use
    _exclude_cache: tuple | None = field(default=None, repr=False, compare=False)
    _options_cache: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def lint_target(self) -> str:
        """The target and the triton-ascend release, as the lint pipeline carries them."""
        return lint_target(self.target, self.triton_ascend)

    def enabled_codes(self) -> frozenset[str]:
        chosen = set(expand_codes(self.select, "select")) | set(
            expand_codes(self.extend_select, "extend-select")
        )
        ignored = set(expand_codes(self.ignore, "ignore"))
        # A file no rule could check is reported whatever the selection, unless ignored
        # by name: `--select ASC004` must not hide that a file was never checked.
        chosen.add(SYNTAX_ERROR_CODE)
        return frozenset(chosen - ignored)

    def codes_for(self, path: str, enabled: frozenset[str]) -> frozenset[str]:
        if not self.per_file_ignores:
            return enabled
        rel = _relative(path, self.root)
        ignored: set[str] = set()
        for pattern, codes in self.per_file_ignores.items():
            if _matches(rel, pattern):
                ignored |= set(expand_codes(codes, f"per-file-ignores.{pattern}"))
        return enabled - ignored

    def options_for(
        self,
        path: str,
        *,
        fix: bool = False,
        unsafe_fixes: bool | None = None,
        ignore_noqa: bool = False,
    ) -> LintOptions:
        """What the file `path` is linted with under these settings: its codes (less its
        per-file ignores), the fixable codes, the target, and whether to fix (with unsafe
        fixes when `unsafe_fixes`, default: the setting)."""
        unsafe = self.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
        key = (
            tuple(self.select),
            tuple(self.extend_select),
            tuple(self.ignore),
            tuple(self.fixable),
            tuple(self.unfixable),
            self.lint_target,
            fix,
            unsafe,
            ignore_noqa,
        )
        if self._options_cache is None or self._options_cache[0] != key:
            base = LintOptions(
                self.enabled_codes(),
                self.fixable_codes(),
                self.lint_target,
                ignore_noqa=ignore_noqa,
                fix=fix,
                unsafe_fixes=unsafe,
            )
            self._options_cache = (key, base)
        base = self._options_cache[1]
        codes = self.codes_for(path, base.codes)
        return base if codes == base.codes else base.with_codes(codes)

    def fixable_codes(self) -> frozenset[str]:
        """Codes whose fixes may be offered and applied (`fixable` less `unfixable`)."""
        return frozenset(expand_codes(self.fixable, "fixable")) - frozenset(
            expand_codes(self.unfixable, "unfixable")
        )

    def excludes(self, path: Path) -> bool:
        """Whether a file named directly (on the command line, from standard input or an
        editor) is excluded when excludes apply to it: the file or a folder above it."""
        return any(self.is_excluded(p) for p in (path, *path.parents) if p.name)

    def is_excluded(self, path: Path | str) -> bool:
        """Checked for each file and folder met while walking (never for a path the user
        named): a pattern matches the basename (`build`) or, when it has a `/`, the path
        from the project root (`tests/fixtures`)."""
        names, paths = self._exclude_matchers()
        if names is not None and names.match(os.path.basename(path)):
            return True
        return paths is not None and paths.match(_relative(str(path), self.root)) is not None

    def _exclude_matchers(self) -> tuple[re.Pattern | None, re.Pattern | None]:
        # One compiled regex per kind instead of an fnmatch per pattern per file: the
        # walk asks this for every file and folder of the tree.
        key = (tuple(self.exclude), tuple(self.extend_exclude))
        if self._exclude_cache is None or self._exclude_cache[0] != key:
            patterns = [
                p.rstrip("/") for p in (*self.exclude, *self.extend_exclude) if p.strip("/")
            ]
            on_paths = [p for p in patterns if "/" in p]
            names = (
                re.compile("|".join(fnmatch.translate(p) for p in patterns)) if patterns else None
            )
            paths = (
                re.compile("|".join(fnmatch.translate(p) for p in on_paths)) if on_paths else None
            )
            self._exclude_cache = (key, names, paths)
        return self._exclude_cache[1], self._exclude_cache[2]


_ROOTS: dict[Path, str] = {}


def _relative(path: str, root: Path) -> str:
    """`path` relative to `root`, with `/` separators (`path` itself when outside)."""
    base = _ROOTS.get(root)
    if base is None:
        base = _ROOTS[root] = str(root.resolve())
    absolute = os.path.abspath(path)
    if absolute.startswith(base + os.sep):
        return absolute[len(base) + 1 :].replace(os.sep, "/")
    return "." if absolute == base else path.replace(os.sep, "/")


def _matches(rel: str, pattern: str) -> bool:
    return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*")


def expand_codes(items: list[str] | str, where: str) -> list[str]:
    """`ALL`, full codes and prefixes (`ASC00`) -> the codes they stand for."""
    if isinstance(items, str):
        items = [items]
    out: list[str] = []
    for raw in items:
        for item in (s.strip().upper() for s in str(raw).split(",")):
            if not item:
                continue
            if item == "ALL":
                out += sorted(ALL_CODES)
                continue
            matched = sorted(c for c in ALL_CODES if c.startswith(item))
            if not matched:
                hint = _close_matches(item, sorted(ALL_CODES))
                suggestion = (
                    f"; did you mean `{hint[0]}`?"
                    if hint
                    else f"; known codes: {', '.join(sorted(ALL_CODES))}"
                )
                raise ConfigError(f"unknown rule selector `{item}` in {where}{suggestion}")
            out += matched
    return out


def _close_matches(word: str, choices) -> list[str]:
    """The nearest spelling for a "did you mean" hint (difflib is imported only when a
    setting is wrong: every run reads settings, few get one wrong)."""
    import difflib

    return difflib.get_close_matches(word, choices, n=1)


def check_target(value: str, where: str) -> str:
    """The canonical name of the target `value` spells (`A2` -> `ascend910b`)."""
    # the UB model only where a project names a target
    from ascend_lint.ub_model import get_target, target_names

    try:
        return get_target(value).name
    except ValueError:
        hint = _close_matches(value.lower(), target_names())
        suggestion = (
            f"; did you mean `{hint[0]}`?"
            if hint
            else f"; known targets: {', '.join(target_names())}"
        )
        raise ConfigError(f"{where}: unknown target `{value}`{suggestion}") from None


def check_triton_ascend(value: str, where: str) -> str:
    """`value` if it spells a release version (`3.2.0`), else a ConfigError."""
    try:
        parse_version(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return value.strip()


def find_pyproject(start: Path) -> Path | None:
    """The configuration of files under `start`: the nearest `pyproject.toml` above it
    that has a `[tool.ascend-lint]` table, as Ruff looks for `[tool.ruff]` (a
    sub-package's own `pyproject.toml` does not hide the project's settings). Where
    none has the table, the nearest `pyproject.toml`, whose folder is then the root
    (the cache and per-file-ignores start there); None where there is none."""
    start = start if start.is_dir() else start.parent
    nearest = None
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if not candidate.is_file():
            continue
        nearest = nearest or candidate
        if _configures(candidate):
            return candidate
    return nearest


def _configures(pyproject: Path) -> bool:
    """Does it hold a `[tool.ascend-lint]` table? A file that cannot be read or parsed
    counts as one, so that the lint reports it rather than looking past it. Asked on
    every lint the editor runs: the answer is kept while the file's size and mtime stay."""
    try:
        st = pyproject.stat()
    except OSError:
        return True
    return _holds_table(str(pyproject), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=64)
def _holds_table(pyproject: str, mtime_ns: int, size: int) -> bool:
    try:
        text = Path(pyproject).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True
    if "ascend-lint" not in text:  # most files: no parse
        return False
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return True
    return isinstance(tool, dict) and "ascend-lint" in tool


def load_settings(config: Path | None, start: Path, *, isolated: bool = False) -> Settings:
    """The settings of the nearest `pyproject.toml` above `start` (or of `config`);
    with `isolated`, the defaults, whatever configuration files exist."""
    if isolated:
        return Settings()
    path = config or find_pyproject(start.resolve())
    settings = Settings()
    if path is None:
        return settings
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table, got {type(tool).__name__}")
    table = tool.get("ascend-lint")
    if config is not None and table is None and path.name != "pyproject.toml":
        table = data  # a dedicated config file holds the keys at its top level
    settings.root = path.parent
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.ascend-lint] must be a table, got {type(table).__name__}")
    if not table:
        return settings
    apply_table(settings, table, str(path), path.parent)
    return settings


def apply_overrides(settings: Settings, overrides: list[str]) -> None:
    """`--config 'select = ["ASC001"]'`: TOML `KEY = VALUE` lines over the loaded settings."""
    for override in overrides:
        try:
            table = tomllib.loads(override)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(
                f"--config `{override}`: not a file and not a TOML `KEY = VALUE` pair ({exc})"
            ) from None
        apply_table(settings, table, f"--config `{override}`", Path.cwd())


def apply_table(settings: Settings, table: dict, source: str, base: Path) -> None:
    """Set the keys of one `[tool.ascend-lint]` table (or `--config KEY=VALUE` overrides)
    on `settings`; `base` is where relative paths (`cache-dir`) start from."""
    path = source
    for key, value in table.items():
        if key not in _KEYS:
            hint = _close_matches(key, list(_KEYS))
            suggestion = (
                f"; did you mean `{hint[0]}`?" if hint else f"; known keys: {', '.join(_KEYS)}"
            )
            raise ConfigError(f"{path}: unknown key `{key}` in [tool.ascend-lint]{suggestion}")
        expected = _KEYS[key]
        if not isinstance(value, expected):
            raise ConfigError(
                f"{path}: `{key}` must be a {expected.__name__}, got {type(value).__name__} `{value!r}`"
            )
        where = f"{path}: {key}"
        if key in ("select", "ignore", "extend-select", "fixable", "unfixable"):
            expand_codes(value, where)
            setattr(settings, key.replace("-", "_"), [str(v) for v in value])
        elif key == "per-file-ignores":
            for pattern, codes in value.items():
                if not isinstance(codes, list):
                    raise ConfigError(f"{where}.{pattern} must be a list of codes")
                expand_codes(codes, f"{where}.{pattern}")
            settings.per_file_ignores = {k: [str(c) for c in v] for k, v in value.items()}
        elif key == "cache-dir":
            settings.cache_dir = str(base / value)
        elif key in ("fix", "unsafe-fixes", "respect-gitignore"):
            setattr(settings, key.replace("-", "_"), value)
        elif key == "exclude":
            settings.exclude = [str(v) for v in value]
        elif key == "extend-exclude":
            settings.extend_exclude = [str(v) for v in value]
        elif key == "target":
            settings.target = check_target(value, where)
        elif key == "triton-ascend":
            settings.triton_ascend = check_triton_ascend(value, where)
        elif key == "output-format":
            if value not in OUTPUT_FORMATS:
                hint = _close_matches(value, OUTPUT_FORMATS)
                raise ConfigError(
                    f"{where}: unknown format `{value}`"
                    + (f"; did you mean `{hint[0]}`?" if hint else "")
                )
            settings.output_format = value


def split_globs(values: list[str]) -> list[str]:
    """`--exclude a,b --exclude c` -> ['a', 'b', 'c']."""
    return [g.strip() for v in values for g in v.split(",") if g.strip()]


def apply_command_line(settings: Settings, args) -> None:
    """The options of `ascend-lint check` (an argparse namespace) on top of the settings
    read from the configuration, as Ruff merges them: `--select` replaces, `--ignore`,
    `--extend-select`, `--unfixable`, `--extend-exclude` and `--per-file-ignores` add.
    Every code is validated (ConfigError with a suggestion)."""
    if args.select is not None:
        expand_codes(args.select, "--select")
        settings.select = list(args.select)
    if args.extend_select is not None:
        expand_codes(args.extend_select, "--extend-select")
        settings.extend_select = [*settings.extend_select, *args.extend_select]
    if args.ignore is not None:
        expand_codes(args.ignore, "--ignore")
        settings.ignore = [*settings.ignore, *args.ignore]
    if args.respect_gitignore is not None:
        settings.respect_gitignore = args.respect_gitignore
    if args.fixable is not None:
        expand_codes(args.fixable, "--fixable")
        settings.fixable = list(args.fixable)
    if args.unfixable is not None:
        expand_codes(args.unfixable, "--unfixable")
        settings.unfixable = [*settings.unfixable, *args.unfixable]
    if args.exclude is not None:
        settings.exclude = split_globs(args.exclude)
    if args.extend_exclude is not None:
        settings.extend_exclude = [*settings.extend_exclude, *split_globs(args.extend_exclude)]
    for item in args.per_file_ignores or ():
        glob, sep, codes = item.rpartition(":")
        if not sep or not glob or not codes:
            raise ConfigError(f"--per-file-ignores takes GLOB:CODES, got `{item}`")
        expand_codes(codes, "--per-file-ignores")
        settings.per_file_ignores.setdefault(glob, []).extend(codes.split(","))
    if args.output_format:
        settings.output_format = args.output_format
    if args.target is not None:
        settings.target = check_target(args.target, "--target")
    if args.triton_ascend is not None:
        settings.triton_ascend = check_triton_ascend(args.triton_ascend, "--triton-ascend")
    if args.unsafe_fixes is not None:
        settings.unsafe_fixes = args.unsafe_fixes
    settings.enabled_codes()  # validates every selector once
