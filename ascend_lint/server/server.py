"""The language server: the protocol is the package's own (`rpc`: JSON-RPC 2.0 and the
LSP's base layer over stdio; `documents`: the open texts); linting, fixes and hovers come
from the engine through `buffers`, `protocol` and `hover`. Messages are the LSP's JSON
as plain dicts, so the server needs nothing beyond the package.

Work that takes long runs off the event loop that answers requests: lints on one
worker thread, fix-all on another thread or, for a big buffer, in a process of its own
(a thread would hold the interpreter lock through each parse of the whole file,
hundreds of milliseconds that a hover would wait), so a hover or a quick fix is
answered while a big file is fixed. Modules of the engine are imported on the lint
worker after `initialize`, whose answer waits for nothing but this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ascend_lint import __version__
from ascend_lint.server.config import SECTION, SettingsResolver
from ascend_lint.server.documents import Documents, TextDocument, unopened
from ascend_lint.server.positions import UTF8, UTF16, UTF32, from_client
from ascend_lint.server.rpc import Connection, ResponseError
from ascend_lint.server.uris import path_of_uri
from ascend_lint.stopping import LintStopped, stop_when

if TYPE_CHECKING:
    from ascend_lint.server.buffers import LintedBuffer

log = logging.getLogger("ascend_lint.server")
PYPROJECT_GLOB = "**/pyproject.toml"
SOURCE = "ascend-lint"
QUICK_FIX = "quickfix"
FIX_ALL_KIND = "source.fixAll.ascend-lint"
CODE_ACTION_KINDS = [QUICK_FIX, FIX_ALL_KIND]
FULL_SYNC = 1  # TextDocumentSyncKind.Full
# MessageType
ERROR_MESSAGE, WARNING_MESSAGE = 1, 2
ENCODINGS = (UTF8, UTF16, UTF32)
# How often the configuration files of open buffers are checked, for clients that do
# not report file changes (Neovim on Linux, Helix, Emacs without a file watcher).
WATCH_INTERVAL_S = 1.0
# A big buffer is fixed in a process of its own (parsing it holds the interpreter lock
# for ~50 ms or more at a time) and its lints' freed memory is handed back to the
# system. Smaller ones are fixed on a thread, without the process's start (~0.3 s) and
# the copy of the buffer to it.
BIG_BUFFER_CHARS = 200_000


def _exit_now(message: str | None, code: int) -> None:
    """Leave at once: a lint still running on a worker thread, or the thread reading a
    stdin the client keeps open, would keep the process alive. One line to the log
    (none after a clean `exit`), no traceback."""
    _end_fix_processes()
    # (The protocol's answers are flushed as they are written; stdout is stderr now.)
    with contextlib.suppress(OSError, ValueError):  # closed, or gone with the client
        if message is not None:
            sys.stderr.write(f"ascend-lint server: {message}\n")
        sys.stderr.flush()
    os._exit(code)


def _end_fix_processes() -> None:
    worker = sys.modules.get("ascend_lint.server.worker_process")  # imported for a big buffer
    if worker is not None:
        worker.end_running()


def choose_encoding(capabilities: dict) -> str:
    """The first position encoding the client offers that the server knows (the
    client's order is its preference), else UTF-16, the LSP's default."""
    offered = _get(capabilities, "general", "positionEncodings")
    for encoding in offered if isinstance(offered, list) else ():
        if encoding in ENCODINGS:
            return encoding
    if offered:
        log.warning("none of the position encodings %s is known; using utf-16", offered)
    return UTF16


def _get(value: Any, *names: str) -> Any:
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _uri_of(params: dict) -> str:
    return params["textDocument"]["uri"]


class AscendLintServer:
    def __init__(self, rpc: Connection) -> None:
        self.rpc = rpc
        self.documents = Documents()
        self.client_capabilities: dict = {}
        self.encoding = UTF16
        self.root_path: str | None = None
        self.resolver = SettingsResolver()
        self.linted: dict[str, LintedBuffer] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ascend-lint-lint")
        self._fixer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ascend-lint-fix")
        self._in_flight: dict[tuple, asyncio.Future] = {}
        # uri -> (version, stop event) of each lint of it that runs or waits to
        self._stops: dict[str, list[tuple[int | None, threading.Event]]] = {}
        self._fixed: dict[str, tuple[tuple, asyncio.Future]] = {}  # uri -> (key, fix-all)
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._last_change: dict[str, float] = {}
        self._publishing: set[str] = set()  # buffers whose lint for publication runs
        self._outdated: set[str] = set()  # ... and that changed since it started
        self._tasks: set[asyncio.Task] = set()
        self._reported: set[str] = set()

    # -- what the client can do ------------------------------------------------------

    def _capability(self, *names: str) -> Any:
        return _get(self.client_capabilities, *names)

    @property
    def pulls(self) -> bool:
        """The client pulls diagnostics and can be asked to pull again (after a
        configuration change); any other client is pushed to."""
        return self._capability("textDocument", "diagnostic") is not None and bool(
            self._capability("workspace", "diagnostics", "refreshSupport")
        )

    @property
    def pushes(self) -> bool:
        return not self.pulls

    @property
    def watches_files(self) -> bool:
        """The client reports changes of the files the server registers (VS Code)."""
        return bool(self._capability("workspace", "didChangeWatchedFiles", "dynamicRegistration"))

    @property
    def resolves_edits(self) -> bool:
        """The client fills in a code action's edit through `codeAction/resolve`."""
        properties = self._capability("textDocument", "codeAction", "resolveSupport", "properties")
        return isinstance(properties, list) and "edit" in properties

    @property
    def versioned_edits(self) -> bool:
        return bool(self._capability("workspace", "workspaceEdit", "documentChanges"))

    def capabilities(self) -> dict:
        """What the server does, for this client."""
        capabilities = {
            "positionEncoding": self.encoding,
            # Full sync: the client sends the whole text, so line breaks are split only
            # where the LSP (and Python) split them; the cost is nothing next to a lint.
            "textDocumentSync": {"openClose": True, "change": FULL_SYNC, "save": True},
            "hoverProvider": True,
            "codeActionProvider": {"codeActionKinds": CODE_ACTION_KINDS, "resolveProvider": True},
            # These two as the server has always announced them: no command, and
            # workspace folders accepted (the root and each file's project decide).
            "executeCommandProvider": {"commands": []},
            "workspace": {
                "workspaceFolders": {"supported": True, "changeNotifications": True},
                "fileOperations": {},
            },
        }
        if self.pulls:
            # A client that could pull but cannot be asked to pull again (Neovim 0.10 and
            # 0.11 announce no `workspace.diagnostics.refreshSupport`) would show stale
            # findings after a configuration change until the next edit: it is pushed to.
            capabilities["diagnosticProvider"] = {
                "identifier": SOURCE,
                "interFileDependencies": False,
                "workspaceDiagnostics": False,
            }
        return capabilities

    # -- to the client -----------------------------------------------------------------

    def log_message(self, kind: int, message: str) -> None:
        self.rpc.notify("window/logMessage", {"type": kind, "message": message})

    def show_message(self, kind: int, message: str) -> None:
        self.rpc.notify("window/showMessage", {"type": kind, "message": message})

    def publish(self, uri: str, diagnostics: list[dict], version: int | None = None) -> None:
        params: dict = {"uri": uri, "diagnostics": diagnostics}
        if version is not None:
            params["version"] = version
        self.rpc.notify("textDocument/publishDiagnostics", params)

    async def ask(self, method: str, params: Any = None) -> Any:
        """A request to the client; None (and a warning in the log) if it fails it."""
        try:
            return await self.rpc.request(method, params)
        except ResponseError as exc:
            log.warning("%s failed: %s", method, exc)
            return None

    # -- linting ---------------------------------------------------------------------

    def path_of(self, uri: str) -> Path:
        path = path_of_uri(uri)
        if path:
            return Path(path)
        # An unsaved buffer: as a file of the workspace, so its project's settings apply.
        root = self.root_path or str(Path.cwd())
        name = uri.rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "untitled"
        return Path(root) / (name if name.endswith(".py") else f"{name}.py")

    def warm_up(self) -> None:
        """Import the engine on the lint worker while the client opens its first file,
        so neither `initialize` nor the first lint waits for it."""
        self._worker.submit(_import_engine)

    async def buffer(self, uri: str, *, retry_stopped: bool = True) -> LintedBuffer:
        """The lint of the document as it is now (from the last lint if nothing changed).
        A lint whose text an edit replaced stops between two rules (`did_change`); the
        lint of the newest text is then returned, or with `retry_stopped` False, the
        caller gets `LintStopped`."""
        from ascend_lint.discovery import PYTHON_SUFFIXES
        from ascend_lint.server.buffers import lint_text, unlinted

        doc: TextDocument = self.documents.get(uri) or unopened(uri)
        text, version = doc.text, doc.version
        path = self.path_of(uri)
        resolved = self.resolver.for_path(path)
        if not (doc.language_id == "python" or path.suffix in PYTHON_SUFFIXES):
            # A client that sends every buffer (pyproject.toml too) gets nothing for the others.
            return unlinted(str(path), text, version, resolved)
        if resolved.error:
            self._report_once(resolved.error, ERROR_MESSAGE, show=True)
        last = self.linted.get(uri)
        if (
            last is not None
            and last.text == text
            and last.resolved.key == resolved.key
            and last.path == str(path)
        ):
            if last.version != version:
                # The same text again (an undo, a character typed and deleted): the
                # same findings, now for this version.
                last = dataclasses.replace(last, version=version)
                self.linted[uri] = last
            return last
        key = (uri, version, hash(text), resolved.key)
        future = self._in_flight.get(key)
        if future is None:
            loop = asyncio.get_running_loop()
            # From the last lint of this buffer (an edit re-lints only what it can change).
            previous = last if last is not None and last.path == str(path) else None
            stop = threading.Event()
            future = loop.run_in_executor(
                self._worker,
                _lint_and_give_back,
                lint_text,
                str(path),
                text,
                version,
                resolved,
                previous,
                stop,
            )
            self._in_flight[key] = future
            running = (version, stop)
            self._stops.setdefault(uri, []).append(running)

            def done(_future: asyncio.Future) -> None:
                self._in_flight.pop(key, None)
                left = self._stops.get(uri, [])
                if running in left:
                    left.remove(running)
                if not left:
                    self._stops.pop(uri, None)

            future.add_done_callback(done)
        # Shielded: a request cancelled while it waits leaves the lint to the others.
        try:
            buffer = await asyncio.shield(future)
        except LintStopped:
            if not retry_stopped:
                raise
            return await self.buffer(uri)  # changed meanwhile: the newest text's lint
        if buffer.error:
            self._report_once(f"{path}: {buffer.error}", ERROR_MESSAGE)
        if uri in self.documents:
            self.linted[uri] = buffer
        return buffer

    async def fix_all(self, uri: str, buffer: LintedBuffer) -> dict | None:
        """Fix-all for this lint of the buffer, worked out once on the fix worker."""
        from ascend_lint.server.buffers import fix_all_apart, fix_all_text
        from ascend_lint.server.protocol import fix_all_action

        unsafe = buffer.resolved.settings.unsafe_fixes
        key = (buffer.version, hash(buffer.text), buffer.resolved.key, unsafe)
        cached = self._fixed.get(uri)
        if cached is None or cached[0] != key:
            loop = asyncio.get_running_loop()
            if len(buffer.text) < BIG_BUFFER_CHARS:
                job = loop.run_in_executor(self._fixer, fix_all_text, buffer, unsafe)
            else:
                job = loop.run_in_executor(self._fixer, fix_all_apart, buffer, unsafe)
            cached = (key, job)
            self._fixed[uri] = cached
        fixed = await asyncio.shield(cached[1])
        return fix_all_action(uri, buffer, self.encoding, self.versioned_edits, fixed)

    def _report_once(self, message: str, kind: int, show: bool = False) -> None:
        if message in self._reported:
            return
        self._reported.add(message)
        log.error("%s", message)
        self.log_message(kind, message)
        if show:
            self.show_message(kind, f"ascend-lint: {message}")

    def schedule(self, uri: str, delay: float) -> None:
        """Lint and publish `uri` after `delay` seconds; a newer call replaces an older.

        The first change after a pause of `delay` is linted at once: only the changes
        that follow it closely (typing) wait until they pause."""
        if not self.pushes:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        last, self._last_change[uri] = self._last_change.get(uri), now
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        elif last is None or now - last >= delay:
            delay = 0
        self._pending[uri] = loop.call_later(delay, self._start_publish, uri)

    def _start_publish(self, uri: str) -> None:
        """Lint `uri` for publication now, or, while a lint of it runs, once that ends:
        changes that arrive during a lint make one more lint of the newest text, never a
        queue of lints of texts already replaced."""
        self._pending.pop(uri, None)
        if uri in self._publishing:
            self._outdated.add(uri)
            return
        self._publishing.add(uri)
        self._spawn(self._publish(uri))

    def _publish_done(self, uri: str) -> None:
        self._publishing.discard(uri)
        if uri in self._outdated:
            self._outdated.discard(uri)
            if uri in self.documents and uri not in self._pending:
                self._start_publish(uri)

    def _spawn(self, coroutine) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish(self, uri: str) -> None:
        from ascend_lint.server.protocol import lsp_diagnostics

        try:
            if uri not in self.documents:
                return
            try:
                buffer = await self.buffer(uri, retry_stopped=False)
            except LintStopped:
                return  # stopped by an edit: the newer lint publishes
            doc = self.documents.get(uri)
            if doc is None or doc.version != buffer.version or doc.text != buffer.text:
                return  # changed while being linted: the newer lint publishes
            self.publish(uri, lsp_diagnostics(buffer, self.encoding), buffer.version)
        except Exception:  # a lint that fails must not take the server down
            self._report_once(
                f"internal error while linting {uri}:\n{traceback.format_exc()}", ERROR_MESSAGE
            )
        finally:
            self._publish_done(uri)

    def settings_changed(self) -> None:
        """Configuration changed: lint every open buffer again (or ask the client to pull)."""
        self.resolver.forget()
        self._reported.clear()
        self.linted.clear()
        if self.pushes:
            for uri in self.documents:
                self.schedule(uri, 0)
        else:
            self._spawn(self.ask("workspace/diagnostic/refresh"))

    async def watch_configuration(self) -> None:
        """For a client that reports no file changes: check, every `WATCH_INTERVAL_S`,
        whether the configuration file of an open buffer changed (or appeared)."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL_S)
            for uri, last in list(self.linted.items()):
                if uri not in self.documents:
                    continue
                if self.resolver.for_path(self.path_of(uri)).key != last.resolved.key:
                    log.info("configuration of %s changed", uri)
                    self.settings_changed()
                    break

    async def pull_configuration(self) -> None:
        if not self._capability("workspace", "configuration"):
            return
        items = await self.ask("workspace/configuration", {"items": [{"section": SECTION}]})
        if not isinstance(items, list) or not items or items[0] is None:
            return  # no such section there: the initialization options (if any) stand
        if self.resolver.set_editor_settings(items[0]):
            self.settings_changed()

    # -- the lifecycle ---------------------------------------------------------------

    def initialize(self, params: dict) -> dict:
        self.client_capabilities = params.get("capabilities") or {}
        self.encoding = choose_encoding(self.client_capabilities)
        self.root_path = _root_path(params)
        self.resolver.set_editor_settings(_settings_of(params.get("initializationOptions")))
        return {
            "capabilities": self.capabilities(),
            "serverInfo": {"name": "ascend-lint", "version": __version__},
        }

    def initialized(self, _params: Any) -> None:
        # Not a coroutine: it runs before the next message is read (`shutdown` may follow).
        self.warm_up()  # not at `initialize`: it would hold up the answer (the interpreter lock)
        registrations = []
        if self.watches_files:
            registrations.append(
                {
                    "id": "ascend-lint-pyproject",
                    "method": "workspace/didChangeWatchedFiles",
                    "registerOptions": {"watchers": [{"globPattern": PYPROJECT_GLOB}]},
                }
            )
        else:
            self._spawn(self.watch_configuration())
        if self._capability("workspace", "didChangeConfiguration", "dynamicRegistration"):
            registrations.append(
                {
                    "id": "ascend-lint-configuration",
                    "method": "workspace/didChangeConfiguration",
                    "registerOptions": {"section": SECTION},
                }
            )
        self._spawn(self._register_and_pull(registrations))

    async def _register_and_pull(self, registrations: list[dict]) -> None:
        if registrations:
            await self.ask("client/registerCapability", {"registrations": registrations})
        await self.pull_configuration()

    def shutdown(self, _params: Any) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
        self._fixer.shutdown(wait=False, cancel_futures=True)
        _end_fix_processes()

    def exit(self, _params: Any) -> None:
        clean = self.rpc.shut_down
        _exit_now(None if clean else "`exit` without `shutdown`", 0 if clean else 1)

    # -- documents and configuration ---------------------------------------------------

    def did_open(self, params: dict) -> None:
        self.documents.open(params["textDocument"])
        self.schedule(_uri_of(params), 0)

    def did_change(self, params: dict) -> None:
        self.documents.change(params, self.encoding)
        uri = _uri_of(params)
        doc = self.documents.get(uri)
        for version, stop in self._stops.get(uri, ()):
            if doc is None or version != doc.version:
                stop.set()  # its text is gone: the next keystroke's lint need not wait
        self.schedule(uri, self.resolver.debounce_seconds)

    def did_save(self, params: dict) -> None:
        uri = _uri_of(params)
        if uri.endswith("/pyproject.toml"):
            self.settings_changed()
        else:
            self.schedule(uri, 0)

    def did_close(self, params: dict) -> None:
        uri = _uri_of(params)
        self.documents.close(uri)
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self.linted.pop(uri, None)
        self._fixed.pop(uri, None)
        self._last_change.pop(uri, None)
        self._outdated.discard(uri)
        if self.pushes:
            self.publish(uri, [])

    def did_change_watched_files(self, params: dict) -> None:
        if any(
            str(change.get("uri", "")).endswith("pyproject.toml") for change in params["changes"]
        ):
            self.settings_changed()

    async def did_change_configuration(self, params: dict) -> None:
        settings = params.get("settings")
        if isinstance(settings, dict) and isinstance(settings.get(SECTION), dict):
            if self.resolver.set_editor_settings(settings[SECTION]):
                self.settings_changed()
        elif self._capability("workspace", "configuration"):
            await self.pull_configuration()  # the notification only says "something changed"
        elif self.resolver.set_editor_settings(settings):
            self.settings_changed()

    # -- requests --------------------------------------------------------------------

    async def diagnostic(self, params: dict) -> dict:
        from ascend_lint.server.protocol import lsp_diagnostics

        buffer = await self.buffer(_uri_of(params))
        if params.get("previousResultId") == buffer.result_id:
            return {"kind": "unchanged", "resultId": buffer.result_id}
        return {
            "kind": "full",
            "resultId": buffer.result_id,
            "items": lsp_diagnostics(buffer, self.encoding),
        }

    async def code_action(self, params: dict) -> list[dict]:
        from ascend_lint.server.protocol import (
            asked_for,
            findings_for,
            has_fixes,
            lazy_fix_all_action,
            quick_fixes,
            wanted,
        )

        uri = _uri_of(params)
        buffer = await self.buffer(uri)
        lines = buffer.source.lines
        where = params["range"]
        start = from_client(
            lines, where["start"]["line"], where["start"]["character"], self.encoding
        )
        end = from_client(lines, where["end"]["line"], where["end"]["character"], self.encoding)
        context = params.get("context") or {}
        only = [str(k) for k in context.get("only") or ()] or None
        actions = []
        if wanted(QUICK_FIX, only):
            listed = context.get("diagnostics") or []
            findings = findings_for(buffer, start, end, listed, self.encoding)
            actions += quick_fixes(uri, buffer, findings, self.encoding, self.versioned_edits)
        if wanted(FIX_ALL_KIND, only) and has_fixes(buffer):
            # Worked out only when asked for by kind (format or fix on save, a command),
            # or when chosen from the menu (resolved then); never on every cursor move.
            if asked_for(FIX_ALL_KIND, only):
                action = await self.fix_all(uri, buffer)
                if action is not None:
                    actions.append(action)
            elif self.resolves_edits:
                actions.append(lazy_fix_all_action(uri, buffer))
        return actions

    async def resolve_code_action(self, action: dict) -> dict:
        data = action.get("data")
        uri = data.get("uri") if isinstance(data, dict) else None
        if action.get("kind") != FIX_ALL_KIND or uri not in self.documents:
            return action
        buffer = await self.buffer(uri)
        if buffer.version != data.get("version"):
            return action  # the text changed since the menu was shown: no stale edit
        resolved = await self.fix_all(uri, buffer)
        if resolved is not None:
            action = {**action, "edit": resolved["edit"], "title": resolved["title"]}
        return action

    async def hover(self, params: dict) -> dict | None:
        from ascend_lint.server.hover import hover_markdown, noqa_code_at, rule_markdown
        from ascend_lint.server.protocol import lsp_range

        buffer = await self.buffer(_uri_of(params))
        position = params["position"]
        at = from_client(
            buffer.source.lines, position["line"], position["character"], self.encoding
        )
        found = [d for d in buffer.diagnostics if d.start <= at <= d.end]
        parts = [hover_markdown(d) for d in found]
        shown = (found[0].start, found[0].end) if found else None
        code = noqa_code_at(buffer.source, at)
        if code is not None:  # a code of a noqa comment: its rule first
            parts.insert(0, rule_markdown(code[0]))
            shown = code[1:]
        if shown is None:
            return None
        return {
            "contents": {"kind": "markdown", "value": "\n\n---\n\n".join(parts)},
            "range": lsp_range(buffer, *shown, self.encoding),
        }


def _lint_and_give_back(
    lint_text, path: str, text: str, version, resolved, previous, stop: threading.Event
) -> LintedBuffer:
    """Lint on the worker, stopping before the next rule once `stop` is set; a whole
    lint of a big buffer runs in a process of its own (`worker_process`), so its syntax
    tree and index never fragment the server's memory. Should that process fail, the
    lint runs here, and the heap is trimmed after."""
    big = len(text) >= BIG_BUFFER_CHARS
    with stop_when(stop):
        buffer = lint_text(path, text, version, resolved, previous, big)
    if big and not (buffer.memo is not None and buffer.memo.from_previous):
        _trim_heap()
    return buffer


def _trim_heap() -> None:
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes

            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):  # not glibc: nothing to do
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim = None


def _import_engine() -> None:
    import ascend_lint.server.hover
    import ascend_lint.server.protocol  # noqa: F401  (the engine, the rules, the index)


def _settings_of(value: object) -> object:
    """`{"ascend-lint": {...}}` or the section itself."""
    if isinstance(value, dict) and isinstance(value.get(SECTION), dict):
        return value[SECTION]
    return value


def _root_path(params: dict) -> str | None:
    """The workspace's root: `rootUri`, else the older `rootPath`, else the first folder."""
    root_uri = params.get("rootUri")
    path = path_of_uri(root_uri) if isinstance(root_uri, str) else None
    if path:
        return path
    if isinstance(params.get("rootPath"), str) and params["rootPath"]:
        return params["rootPath"]
    for folder in params.get("workspaceFolders") or []:
        uri = folder.get("uri") if isinstance(folder, dict) else None
        path = path_of_uri(uri) if isinstance(uri, str) else None
        if path:
            return path
    return None


def build_server(rpc: Connection) -> AscendLintServer:
    server = AscendLintServer(rpc)
    requests = {
        "initialize": server.initialize,
        "shutdown": server.shutdown,
        "textDocument/diagnostic": server.diagnostic,
        "textDocument/codeAction": server.code_action,
        "codeAction/resolve": server.resolve_code_action,
        "textDocument/hover": server.hover,
    }
    notifications = {
        "initialized": server.initialized,
        "exit": server.exit,
        "textDocument/didOpen": server.did_open,
        "textDocument/didChange": server.did_change,
        "textDocument/didSave": server.did_save,
        "textDocument/didClose": server.did_close,
        "workspace/didChangeWatchedFiles": server.did_change_watched_files,
        "workspace/didChangeConfiguration": server.did_change_configuration,
    }
    for method, handler in requests.items():
        rpc.on_request(method, handler)
    for method, handler in notifications.items():
        rpc.on_notification(method, handler)
    return server


def serve() -> int:
    """Serve one client over stdin/stdout until it exits: the process ends in `exit`
    (0 after `shutdown`, 1 without), or when the client closes either pipe."""
    logging.basicConfig(level=logging.WARNING, format="ascend-lint server: %(message)s")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # The protocol owns stdout: a stray print() would corrupt its stream.
    sys.stdout = sys.stderr
    rpc = Connection(stdin, stdout, on_closed=lambda message: _closed(rpc, message))
    build_server(rpc)
    rpc.serve_forever()
    return 0


def _closed(rpc: Connection, message: str) -> None:
    clean = rpc.shut_down
    _exit_now(None if clean else message, 0 if clean else 1)
