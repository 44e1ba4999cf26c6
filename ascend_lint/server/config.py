"""The settings a buffer is linted with: its project's `[tool.ascend-lint]`, found and
read by `ascend_lint.settings` exactly as the command line does, and over it the
editor's `ascend-lint` settings section.

The editor section takes the keys of `[tool.ascend-lint]` (`select`, `ignore`,
`per-file-ignores`, `unfixable`, `unsafe-fixes`, ...) plus three of the server's own:
`configFile` (a configuration file to use instead of the nearest `pyproject.toml`, as
`--config PATH`), `isolated` (no configuration file at all) and `debounceMs` (how long
typing must pause before a changed buffer is linted and pushed; a pulling client
chooses itself when it asks).

Resolved settings are cached per configuration file and keyed by its modification time
and size, so an edit to `pyproject.toml` is seen on the next lint even when the client
does not report watched-file changes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the settings module imports every rule: loaded on the first lint
    from ascend_lint.settings import Settings

SECTION = "ascend-lint"
# Lints keep up with typing (an edit re-lints only what it can change, and the changes
# that arrive during a lint make one more lint): no wait unless the user asks for one.
DEFAULT_DEBOUNCE_MS = 0
_SERVER_KEYS = ("configFile", "isolated", "debounceMs")
_CACHE_SIZE = 64


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    key: tuple  # changes whenever anything that decided `settings` changed
    error: str | None = None  # the configuration problem; `settings` are then the defaults


class SettingsResolver:
    def __init__(self) -> None:
        self._editor: dict = {}
        self._editor_json = "{}"
        self._cache: dict[tuple, Resolved] = {}

    @property
    def debounce_seconds(self) -> float:
        value = self._editor.get("debounceMs", DEFAULT_DEBOUNCE_MS)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            value = DEFAULT_DEBOUNCE_MS
        return value / 1000

    def set_editor_settings(self, section: object) -> bool:
        """The client's `ascend-lint` section (anything not a table counts as empty);
        whether it differs from the one in use."""
        editor = dict(section) if isinstance(section, dict) else {}
        as_json = json.dumps(editor, sort_keys=True, default=str)
        if as_json == self._editor_json:
            return False
        self._editor, self._editor_json = editor, as_json
        self._cache.clear()
        return True

    def forget(self) -> None:
        """Drop every cached result (a configuration file was reported changed)."""
        self._cache.clear()

    def for_path(self, path: Path) -> Resolved:
        from ascend_lint.settings import (
            ConfigError,
            Settings,
            apply_table,
            find_pyproject,
            load_settings,
        )

        config_file = self._editor.get("configFile")
        isolated = self._editor.get("isolated") is True
        if isinstance(config_file, str) and config_file:
            config = Path(os.path.expanduser(config_file))
        else:
            config = None
        found = None if isolated else (config or find_pyproject(path.parent.resolve()))
        key = (str(found), _stamp(found), isolated, self._editor_json)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        try:
            settings = load_settings(found, path.parent, isolated=isolated)
            overrides = {k: v for k, v in self._editor.items() if k not in _SERVER_KEYS}
            if overrides:
                apply_table(settings, overrides, f"editor settings `{SECTION}`", settings.root)
            settings.enabled_codes()  # validates every selector once, here
            resolved = Resolved(settings, key)
        except ConfigError as exc:
            fallback = Settings(root=found.parent if found is not None else path.parent)
            resolved = Resolved(fallback, key, f"{exc}; linting with the default settings")
        self._cache[key] = resolved
        return resolved


def _stamp(path: Path | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
