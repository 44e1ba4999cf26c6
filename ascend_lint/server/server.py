"""The language server: pygls handles the protocol; linting, fixes and hovers come from
the engine through `buffers`, `protocol` and `hover`.

Work that takes long runs off the event loop that answers requests: lints on one
worker thread, fix-all on another thread or, for a big buffer, in a process of its own
(a thread would hold the interpreter lock through each parse of the whole file,
hundreds of milliseconds that a hover would wait), so a hover or a quick fix is
answered while a big file is fixed. Modules of the engine are imported on the lint worker after
`initialize`, so the answer to `initialize` waits only for the protocol library.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from ascend_lint import __version__
from ascend_lint.server.config import SECTION, SettingsResolver
from ascend_lint.server.positions import UTF16, from_client

if TYPE_CHECKING:
    from ascend_lint.server.buffers import LintedBuffer

log = logging.getLogger("ascend_lint.server")
PYPROJECT_GLOB = "**/pyproject.toml"
SOURCE = "ascend-lint"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.ascend-lint"
CODE_ACTION_KINDS = [types.CodeActionKind.QuickFix, FIX_ALL_KIND]
# How often the configuration files of open buffers are checked, for clients that do
# not report file changes (Neovim on Linux, Helix, Emacs without a file watcher).
WATCH_INTERVAL_S = 1.0
# A big buffer is fixed in a process of its own (parsing it holds the interpreter lock
# for ~50 ms or more at a time) and its lints' freed memory is handed back to the
# system. Smaller ones are fixed on a thread, without the process's start (~0.3 s) and
# the copy of the buffer to it.
BIG_BUFFER_CHARS = 200_000


def _exit_now(message: str | None, code: int) -> None:
    """Leave at once: a lint still running on a worker thread, or pygls' reader thread
    waiting on a stdin the client keeps open, would keep the process alive. One line to
    the log (none after a clean `exit`), no traceback."""
    _end_fix_processes()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed, or gone with the client
            if message is not None and stream is sys.stderr:
                stream.write(f"ascend-lint server: {message}\n")
            stream.flush()
    os._exit(code)


def _end_fix_processes() -> None:
    worker = sys.modules.get("ascend_lint.server.fix_worker")  # imported by a big fix-all
    if worker is not None:
        worker.end_running()


class _ClientWriter:
    """pygls' writer, except that a closed pipe ends the process instead of raising
    (and logging a traceback) in whichever task was answering."""

    def __init__(self, writer) -> None:
        self._writer = writer

    def close(self):
        return self._writer.close()

    def write(self, data: bytes) -> None:
        try:
            self._writer.write(data)
        except (BrokenPipeError, ConnectionResetError, ValueError):  # ValueError: closed file
            _exit_now("the client closed the connection; exiting", 1)


class AscendLintProtocol(LanguageServerProtocol):
    def set_writer(self, writer, include_headers: bool = True):
        super().set_writer(_ClientWriter(writer), include_headers)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        result = yield from super().lsp_initialize(params)
        if not self._server.pulls:
            # A client that could pull but cannot be asked to pull again (Neovim 0.10 and
            # 0.11 announce no `workspace.diagnostics.refreshSupport`) would show stale
            # findings after a configuration change until the next edit: it is pushed to.
            result.capabilities.diagnostic_provider = None
        return result


class AscendLintServer(LanguageServer):
    def __init__(self) -> None:
        # Full sync: the client sends the whole text, so line breaks are split only where
        # the LSP (and Python) split them; the cost is nothing next to a lint.
        super().__init__(
            "ascend-lint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=AscendLintProtocol,
        )
        self.resolver = SettingsResolver()
        self.linted: dict[str, LintedBuffer] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ascend-lint-lint")
        self._fixer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ascend-lint-fix")
        self._in_flight: dict[tuple, asyncio.Future] = {}
        self._fixed: dict[str, tuple[tuple, asyncio.Future]] = {}  # uri -> (key, fix-all)
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._last_change: dict[str, float] = {}
        self._tasks: set[asyncio.Task] = set()
        self._reported: set[str] = set()

    # -- what the client can do ------------------------------------------------------

    def _capability(self, *names: str):
        value = self.client_capabilities
        for name in names:
            value = getattr(value, name, None) if value is not None else None
        return value

    @property
    def pulls(self) -> bool:
        """The client pulls diagnostics and can be asked to pull again (after a
        configuration change); any other client is pushed to."""
        return self._capability("text_document", "diagnostic") is not None and bool(
            self._capability("workspace", "diagnostics", "refresh_support")
        )

    @property
    def pushes(self) -> bool:
        return not self.pulls

    @property
    def watches_files(self) -> bool:
        """The client reports changes of the files the server registers (VS Code)."""
        return bool(
            self._capability("workspace", "did_change_watched_files", "dynamic_registration")
        )

    @property
    def resolves_edits(self) -> bool:
        """The client fills in a code action's edit through `codeAction/resolve`."""
        properties = self._capability(
            "text_document", "code_action", "resolve_support", "properties"
        )
        return "edit" in (properties or ())

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding or UTF16
        return str(getattr(encoding, "value", encoding))  # an enum member or the client's string

    @property
    def versioned_edits(self) -> bool:
        return bool(self._capability("workspace", "workspace_edit", "document_changes"))

    # -- linting ---------------------------------------------------------------------

    def path_of(self, uri: str) -> Path:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path:
            return Path(path)
        # An unsaved buffer: as a file of the workspace, so its project's settings apply.
        root = self.workspace.root_path or str(Path.cwd())
        name = uri.rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "untitled"
        return Path(root) / (name if name.endswith(".py") else f"{name}.py")

    def warm_up(self) -> None:
        """Import the engine on the lint worker while the client opens its first file,
        so neither `initialize` nor the first lint waits for it."""
        self._worker.submit(_import_engine)

    async def buffer(self, uri: str) -> LintedBuffer:
        """The lint of the document as it is now (from the last lint if nothing changed)."""
        from ascend_lint.discovery import PYTHON_SUFFIXES
        from ascend_lint.server.buffers import lint_text, unlinted

        doc = self.workspace.get_text_document(uri)
        text, version = doc.source, doc.version
        path = self.path_of(uri)
        resolved = self.resolver.for_path(path)
        if not (doc.language_id == "python" or path.suffix in PYTHON_SUFFIXES):
            # A client that sends every buffer (pyproject.toml too) gets nothing for the others.
            return unlinted(str(path), text, version, resolved)
        if resolved.error:
            self._report_once(resolved.error, types.MessageType.Error, show=True)
        last = self.linted.get(uri)
        if (
            last is not None
            and last.version == version
            and last.text == text
            and last.resolved.key == resolved.key
        ):
            return last
        key = (uri, version, hash(text), resolved.key)
        future = self._in_flight.get(key)
        if future is None:
            loop = asyncio.get_running_loop()
            # From the last lint of this buffer (an edit re-lints only what it can change).
            previous = last if last is not None and last.path == str(path) else None
            future = loop.run_in_executor(
                self._worker,
                _lint_and_give_back,
                lint_text,
                str(path),
                text,
                version,
                resolved,
                previous,
            )
            self._in_flight[key] = future
            future.add_done_callback(lambda _f: self._in_flight.pop(key, None))
        buffer = await future
        if buffer.error:
            self._report_once(f"{path}: {buffer.error}", types.MessageType.Error)
        if uri in self.workspace.text_documents:
            self.linted[uri] = buffer
        return buffer

    async def fix_all(self, uri: str, buffer: LintedBuffer) -> types.CodeAction | None:
        """Fix-all for this lint of the buffer, worked out once on the fix worker."""
        from ascend_lint.server.buffers import fix_all_text
        from ascend_lint.server.fix_worker import fix_all_in_process
        from ascend_lint.server.protocol import fix_all_action

        unsafe = buffer.resolved.settings.unsafe_fixes
        key = (buffer.version, hash(buffer.text), buffer.resolved.key, unsafe)
        cached = self._fixed.get(uri)
        if cached is None or cached[0] != key:
            loop = asyncio.get_running_loop()
            if len(buffer.text) < BIG_BUFFER_CHARS:
                job = loop.run_in_executor(self._fixer, fix_all_text, buffer, unsafe)
            else:
                job = loop.run_in_executor(self._fixer, fix_all_in_process, buffer, unsafe)
            cached = (key, job)
            self._fixed[uri] = cached
        fixed = await asyncio.shield(cached[1])
        return fix_all_action(uri, buffer, self.encoding, self.versioned_edits, fixed)

    def _report_once(self, message: str, kind: types.MessageType, show: bool = False) -> None:
        if message in self._reported:
            return
        self._reported.add(message)
        log.error("%s", message)
        self.window_log_message(types.LogMessageParams(type=kind, message=message))
        if show:
            self.window_show_message(
                types.ShowMessageParams(type=kind, message=f"ascend-lint: {message}")
            )

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
        self._pending.pop(uri, None)
        self._spawn(self._publish(uri))

    def _spawn(self, coroutine) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish(self, uri: str) -> None:
        from ascend_lint.server.protocol import lsp_diagnostics

        try:
            if uri not in self.workspace.text_documents:
                return
            buffer = await self.buffer(uri)
            doc = self.workspace.text_documents.get(uri)
            if doc is None or doc.version != buffer.version or doc.source != buffer.text:
                return  # changed while being linted: the newer lint publishes
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uri,
                    version=buffer.version,
                    diagnostics=lsp_diagnostics(buffer, self.encoding),
                )
            )
        except Exception:  # a lint that fails must not take the server down
            self._report_once(
                f"internal error while linting {uri}:\n{traceback.format_exc()}",
                types.MessageType.Error,
            )

    def settings_changed(self) -> None:
        """Configuration changed: lint every open buffer again (or ask the client to pull)."""
        self.resolver.forget()
        self._reported.clear()
        self.linted.clear()
        if self.pushes:
            for uri in list(self.workspace.text_documents):
                self.schedule(uri, 0)
        else:
            self.workspace_diagnostic_refresh(None)

    async def watch_configuration(self) -> None:
        """For a client that reports no file changes: check, every `WATCH_INTERVAL_S`,
        whether the configuration file of an open buffer changed (or appeared)."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL_S)
            for uri, last in list(self.linted.items()):
                if uri not in self.workspace.text_documents:
                    continue
                if self.resolver.for_path(self.path_of(uri)).key != last.resolved.key:
                    log.info("configuration of %s changed", uri)
                    self.settings_changed()
                    break

    async def pull_configuration(self) -> None:
        if not self._capability("workspace", "configuration"):
            return
        try:
            items = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
        except Exception as exc:  # a client that fails this request keeps what it had
            log.warning("workspace/configuration failed: %s", exc)
            return
        if not items or items[0] is None:
            return  # no such section there: the initialization options (if any) stand
        if self.resolver.set_editor_settings(items[0]):
            self.settings_changed()

    def shutdown(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
        self._fixer.shutdown(wait=False, cancel_futures=True)
        _end_fix_processes()
        super().shutdown()


def _lint_and_give_back(
    lint_text, path: str, text: str, version, resolved, previous
) -> LintedBuffer:
    """Lint on the worker; after a big buffer, hand the memory its syntax tree and index
    took back to the system (the allocator keeps freed pages otherwise: ~20 MB of an
    818 KB file's lint, for a few milliseconds)."""
    buffer = lint_text(path, text, version, resolved, previous)
    if len(text) >= BIG_BUFFER_CHARS:
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


def build_server() -> AscendLintServer:
    server = AscendLintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: AscendLintServer, params: types.InitializeParams) -> None:
        ls.resolver.set_editor_settings(_settings_of(params.initialization_options))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AscendLintServer, _params: types.InitializedParams) -> None:
        ls.warm_up()  # not at `initialize`: it would hold up the answer (the interpreter lock)
        registrations = []
        if ls.watches_files:
            registrations.append(
                types.Registration(
                    id="ascend-lint-pyproject",
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(
                        watchers=[types.FileSystemWatcher(glob_pattern=PYPROJECT_GLOB)]
                    ),
                )
            )
        else:
            ls._spawn(ls.watch_configuration())
        if ls._capability("workspace", "did_change_configuration", "dynamic_registration"):
            registrations.append(
                types.Registration(
                    id="ascend-lint-configuration",
                    method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                    register_options=types.DidChangeConfigurationRegistrationOptions(
                        section=SECTION
                    ),
                )
            )
        if registrations:
            try:
                await ls.client_register_capability_async(
                    types.RegistrationParams(registrations=registrations)
                )
            except Exception as exc:
                log.warning("client/registerCapability failed: %s", exc)
        await ls.pull_configuration()

    @server.feature(types.EXIT)
    def exit_(ls: AscendLintServer, _params: None) -> None:
        clean = getattr(ls.protocol, "_shutdown", False)
        _exit_now(None if clean else "`exit` without `shutdown`", 0 if clean else 1)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AscendLintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AscendLintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.resolver.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AscendLintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.endswith("/pyproject.toml"):
            ls.settings_changed()
        else:
            ls.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AscendLintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        handle = ls._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        ls.linted.pop(uri, None)
        ls._fixed.pop(uri, None)
        ls._last_change.pop(uri, None)
        if ls.pushes:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(
        ls: AscendLintServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        if any(change.uri.endswith("pyproject.toml") for change in params.changes):
            ls.settings_changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: AscendLintServer, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get(SECTION), dict):
            if ls.resolver.set_editor_settings(settings[SECTION]):
                ls.settings_changed()
        elif ls._capability("workspace", "configuration"):
            await ls.pull_configuration()  # the notification only says "something changed"
        elif ls.resolver.set_editor_settings(settings):
            ls.settings_changed()

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=SOURCE, inter_file_dependencies=False, workspace_diagnostics=False
        ),
    )
    async def diagnostic(ls: AscendLintServer, params: types.DocumentDiagnosticParams):
        from ascend_lint.server.protocol import lsp_diagnostics

        buffer = await ls.buffer(params.text_document.uri)
        if params.previous_result_id == buffer.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=buffer.result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=lsp_diagnostics(buffer, ls.encoding), result_id=buffer.result_id
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=CODE_ACTION_KINDS, resolve_provider=True),
    )
    async def code_action(ls: AscendLintServer, params: types.CodeActionParams):
        from ascend_lint.server.protocol import (
            asked_for,
            findings_for,
            has_fixes,
            lazy_fix_all_action,
            quick_fixes,
            wanted,
        )

        uri = params.text_document.uri
        buffer = await ls.buffer(uri)
        lines = buffer.source.lines
        start = from_client(
            lines, params.range.start.line, params.range.start.character, ls.encoding
        )
        end = from_client(lines, params.range.end.line, params.range.end.character, ls.encoding)
        only = [str(getattr(k, "value", k)) for k in params.context.only or ()] or None
        actions = []
        if wanted(types.CodeActionKind.QuickFix.value, only):
            findings = findings_for(buffer, start, end, params.context.diagnostics, ls.encoding)
            actions += quick_fixes(uri, buffer, findings, ls.encoding, ls.versioned_edits)
        if wanted(FIX_ALL_KIND, only) and has_fixes(buffer):
            # Worked out only when asked for by kind (format or fix on save, a command),
            # or when chosen from the menu (resolved then); never on every cursor move.
            if asked_for(FIX_ALL_KIND, only):
                action = await ls.fix_all(uri, buffer)
                if action is not None:
                    actions.append(action)
            elif ls.resolves_edits:
                actions.append(lazy_fix_all_action(uri, buffer))
        return actions

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve_code_action(ls: AscendLintServer, action: types.CodeAction):
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if action.kind != FIX_ALL_KIND or uri not in ls.workspace.text_documents:
            return action
        buffer = await ls.buffer(uri)
        if buffer.version != data.get("version"):
            return action  # the text changed since the menu was shown: no stale edit
        resolved = await ls.fix_all(uri, buffer)
        if resolved is not None:
            action.edit = resolved.edit
            action.title = resolved.title
        return action

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: AscendLintServer, params: types.HoverParams):
        from ascend_lint.server.hover import hover_markdown, noqa_code_at, rule_markdown
        from ascend_lint.server.protocol import lsp_range

        buffer = await ls.buffer(params.text_document.uri)
        at = from_client(
            buffer.source.lines, params.position.line, params.position.character, ls.encoding
        )
        found = [d for d in buffer.diagnostics if d.start <= at <= d.end]
        parts = [hover_markdown(d) for d in found]
        shown = (found[0].start, found[0].end) if found else None
        code = noqa_code_at(buffer.source, at)
        if code is not None:  # a code of a `# noqa` comment: its rule first
            parts.insert(0, rule_markdown(code[0]))
            shown = code[1:]
        if shown is None:
            return None
        value = "\n\n---\n\n".join(parts)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
            range=lsp_range(buffer, *shown, ls.encoding),
        )

    return server


def serve() -> int:
    """Serve one client over stdin/stdout until it exits; 0 after a clean shutdown."""
    logging.basicConfig(level=logging.WARNING, format="ascend-lint server: %(message)s")
    logging.getLogger("pygls").setLevel(logging.ERROR)  # its notices are not the user's business
    server = build_server()
    server.start_io()
    # Only a client that closed stdin without `exit` gets here (`exit` leaves at once).
    clean = getattr(server.protocol, "_shutdown", False)
    _exit_now(
        None if clean else "the client closed the connection without `shutdown`; exiting",
        0 if clean else 1,
    )
    return 0
