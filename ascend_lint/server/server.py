"""The language server: buffers in, the engine's findings out, over stdio.

Push and pull: a client that can pull diagnostics (`textDocument/diagnostic`) gets
them when it asks; any other gets `publishDiagnostics` after open and save at once,
after a change at once too, unless it follows another within `debounceMs` (typing):
then once the changes pause. Each lint runs on one worker
thread, so the connection keeps reading while a large file is checked, and a result
for a text that has changed meanwhile is dropped rather than shown on the wrong lines.

An exception in a handler is answered as an error for that request (or logged, for
a notification); the server itself keeps running.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from ascend_lint import __version__
from ascend_lint.discovery import PYTHON_SUFFIXES
from ascend_lint.server.buffers import LintedBuffer, lint_text, unlinted
from ascend_lint.server.config import SECTION, SettingsResolver
from ascend_lint.server.hover import hover_markdown
from ascend_lint.server.positions import UTF16, from_client
from ascend_lint.server.protocol import (
    CODE_ACTION_KINDS,
    SOURCE,
    code_actions,
    lsp_diagnostics,
    lsp_range,
)

log = logging.getLogger("ascend_lint.server")
PYPROJECT_GLOB = "**/pyproject.toml"


class AscendLintServer(LanguageServer):
    def __init__(self) -> None:
        # Full sync: the client sends the whole text, so line breaks are split only where
        # the LSP (and Python) split them; the cost is nothing next to a lint.
        super().__init__(
            "ascend-lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.resolver = SettingsResolver()
        self.linted: dict[str, LintedBuffer] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ascend-lint-lint")
        self._in_flight: dict[tuple, asyncio.Future] = {}
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
    def pushes(self) -> bool:
        """Push diagnostics unless the client pulls them itself."""
        return self._capability("text_document", "diagnostic") is None

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

    async def buffer(self, uri: str) -> LintedBuffer:
        """The lint of the document as it is now (from the last lint if nothing changed)."""
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
            future = loop.run_in_executor(
                self._worker, lint_text, str(path), text, version, resolved
            )
            self._in_flight[key] = future
            future.add_done_callback(lambda _f: self._in_flight.pop(key, None))
        buffer = await future
        if buffer.error:
            self._report_once(f"{path}: {buffer.error}", types.MessageType.Error)
        if uri in self.workspace.text_documents:
            self.linted[uri] = buffer
        return buffer

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
        task = asyncio.ensure_future(self._publish(uri))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish(self, uri: str) -> None:
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
        elif self._capability("workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)

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
        super().shutdown()


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
        registrations = []
        if ls._capability("workspace", "did_change_watched_files", "dynamic_registration"):
            registrations.append(
                types.Registration(
                    id="ascend-lint-pyproject",
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(
                        watchers=[types.FileSystemWatcher(glob_pattern=PYPROJECT_GLOB)]
                    ),
                )
            )
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
        buffer = await ls.buffer(params.text_document.uri)
        if params.previous_result_id == buffer.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=buffer.result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=lsp_diagnostics(buffer, ls.encoding), result_id=buffer.result_id
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=CODE_ACTION_KINDS),
    )
    async def code_action(ls: AscendLintServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        buffer = await ls.buffer(uri)
        lines = buffer.source.lines
        start = from_client(
            lines, params.range.start.line, params.range.start.character, ls.encoding
        )
        end = from_client(lines, params.range.end.line, params.range.end.character, ls.encoding)
        only = [str(getattr(k, "value", k)) for k in params.context.only or ()] or None
        return code_actions(uri, buffer, start, end, ls.encoding, only, ls.versioned_edits)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: AscendLintServer, params: types.HoverParams):
        buffer = await ls.buffer(params.text_document.uri)
        at = from_client(
            buffer.source.lines, params.position.line, params.position.character, ls.encoding
        )
        found = [d for d in buffer.diagnostics if d.start <= at <= d.end]
        if not found:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown,
                value="\n\n---\n\n".join(hover_markdown(d) for d in found),
            ),
            range=lsp_range(buffer, found[0].start, found[0].end, ls.encoding),
        )

    return server


def serve() -> int:
    """Serve one client over stdin/stdout until it exits; 0 after a clean shutdown."""
    logging.basicConfig(level=logging.WARNING, format="ascend-lint server: %(message)s")
    logging.getLogger("pygls").setLevel(logging.ERROR)  # its notices are not the user's business
    server = build_server()
    server.start_io()
    return 0 if getattr(server.protocol, "_shutdown", False) else 1
