"""`ascend-lint server` end to end: a real LSP client (pytest-lsp) drives the real
server in a subprocess over stdio, with the capabilities real editors announce."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="pytest-lsp's client needs pygls: pip install -e '.[dev]'")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed")

from lint_helpers import server_command  # noqa: E402
from lsprotocol import types  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pytest_lsp import (  # noqa: E402
    ClientServerConfig,
    LanguageClient,
    client_capabilities,
)

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 20  # seconds; a loaded CI machine starts Python slowly

# A launch with `num_warps` (ASC004, safe fix), a gate read along time through a block
# pointer with stride `HV` (ASC001, display-only fix) and a late int64 cast (ASC007,
# unsafe fix). `g\U0001d465` (an astral-plane letter; Python reads it as `gx`) puts a character
# of two UTF-16 units and four UTF-8 bytes in front of the ASC004 finding. The grid's cap
# of 24 programs misses tiles past T = 1536 (ASC023), and an empty input makes a grid of
# 0 programs (ASC025): both suppressed, the sample is about the other three.
KERNEL = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def gate_kernel(g, o, T, HV: tl.constexpr, BT: tl.constexpr):
        i_t, i_h = tl.program_id(0), tl.program_id(1)
        p_g = tl.make_block_ptr(g + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
        b_g = tl.load(p_g, boundary_check=(0,))
        o += (i_h * T).to(tl.int64)
        tl.store(o + i_t * BT + tl.arange(0, BT), tl.exp2(b_g))


    def gate(gx, o):
        T, HV = gx.shape[1], gx.shape[2]
        gate_kernel[(min(triton.cdiv(T, 64), 24), HV)](g\U0001d465, o, T, HV=HV, BT=64, num_warps=4)  # noqa: ASC023, ASC025
    """
)
ROW_ASC001, ROW_ASC007, ROW_ASC004 = 7, 9, 15  # 0-based, as the LSP counts


def units(text: str, encoding: str) -> int:
    """Length of `text` in the client's position units, computed independently of the server."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def span(source: str, row: int, snippet: str, encoding: str) -> tuple[int, int, int, int]:
    line = source.splitlines()[row]
    start = line.index(snippet)
    return (
        row,
        units(line[:start], encoding),
        row,
        units(line[: start + len(snippet)], encoding),
    )


def as_tuple(r: types.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def offset(text: str, position: types.Position, encoding: str) -> int:
    lines = text.split("\n")
    base = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    col = count = 0
    while col < len(line) and count < position.character:
        count += units(line[col], encoding)
        col += 1
    return base + col


def apply(text: str, edit: types.WorkspaceEdit, uri: str, encoding: str) -> str:
    """Apply a workspace edit to one document's text, the way an editor does."""
    if edit.document_changes:
        edits = [e for change in edit.document_changes for e in change.edits]
        assert all(c.text_document.uri == uri for c in edit.document_changes)
    else:
        edits = edit.changes[uri]
    spans = sorted(
        ((offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text))
        for e in edits
    )
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


class Editor:
    """The client side of one session: what was published, registered and logged."""

    def __init__(self, client: LanguageClient):
        self.client = client
        self.workspace = Path.cwd()
        self.published: list[types.PublishDiagnosticsParams] = []
        self.registrations: list[types.Registration] = []
        self.versions: dict[str, int] = {}
        self._arrived = asyncio.Event()

    @property
    def encoding(self) -> str:
        return str(self.result.capabilities.position_encoding or "utf-16")

    def record(self, params: types.PublishDiagnosticsParams) -> None:
        self.published.append(params)
        self._arrived.set()

    async def initialize(
        self, capabilities: str | types.ClientCapabilities, options: dict | None = None
    ) -> None:
        if isinstance(capabilities, str):
            capabilities = client_capabilities(capabilities)
        self.result = await self.client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                initialization_options=options,
                root_uri=self.workspace.as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=self.workspace.as_uri(), name="project")
                ],
            )
        )

    def open(self, path: Path, text: str, language: str = "python") -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, text: str) -> int:
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return self.versions[uri]

    async def diagnostics(
        self, uri: str, version: int | None = None, after: int = 0
    ) -> list[types.Diagnostic]:
        """The first diagnostics published for `uri` (at `version`) after the first
        `after` publications."""

        async def wait() -> list[types.Diagnostic]:
            while True:
                for p in self.published[after:]:
                    if p.uri == uri and (version is None or p.version == version):
                        return list(p.diagnostics)
                self._arrived.clear()
                await self._arrived.wait()

        return await asyncio.wait_for(wait(), TIMEOUT)

    @property
    def pulls(self) -> bool:
        """The server asked this client to pull (it is pushed to otherwise)."""
        return self.result.capabilities.diagnostic_provider is not None

    async def pull(self, uri: str, previous: str | None = None):
        return await asyncio.wait_for(
            self.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    previous_result_id=previous,
                )
            ),
            TIMEOUT,
        )

    async def findings(self, uri: str, version: int, after: int = 0) -> list[types.Diagnostic]:
        """The diagnostics of `uri` at `version`, as this editor gets them: pushed or pulled."""
        if self.pulls:
            return list((await self.pull(uri)).items)
        return await self.diagnostics(uri, version, after)

    async def actions(
        self,
        uri: str,
        r: types.Range,
        only: list[str] | None = None,
        context: list[types.Diagnostic] | None = None,
    ) -> list[types.CodeAction]:
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=r,
                context=types.CodeActionContext(diagnostics=context or [], only=only),
            )
        )
        return list(result or [])


def client_factory() -> LanguageClient:
    """pytest-lsp's client, recording every publication (with its version) and every
    capability the server registers."""
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

    client = LanguageClient(converter_factory=default_converter)
    # One handler per method: the recorder below replaces the default publish handler.
    register_lsp_features(
        client,
        {
            method: handler
            for method, handler in DEFAULT_CLIENT_FEATURES.items()
            if method != types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
        },
    )
    editor = Editor(client)
    client.editor = editor

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        editor.record(params)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: types.RegistrationParams) -> None:
        editor.registrations.extend(params.registrations)

    return client


def project(tmp_path: Path, table: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'demo'\n{table}", "utf-8")
    return tmp_path


def refreshable(name: str) -> types.ClientCapabilities:
    """`name`'s capabilities plus `workspace.diagnostics.refreshSupport`: a client that
    pulls diagnostics and can be asked to pull again (VS Code since 1.67, Neovim 0.12)."""
    capabilities = client_capabilities(name)
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(
        refresh_support=True
    )
    return capabilities


async def start(
    client: LanguageClient, tmp_path: Path, capabilities: str | types.ClientCapabilities
) -> Editor:
    editor: Editor = client.editor
    editor.workspace = project(tmp_path)
    await editor.initialize(capabilities)
    return editor


async def stop(client: LanguageClient) -> None:
    await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    assert client._server.returncode == 0  # `shutdown` then `exit`: a clean exit


USERS = ClientServerConfig(server_command=server_command(), client_factory=client_factory)
# UTF-16 push, UTF-32 push, UTF-8 push (Neovim 0.11 pulls but cannot be refreshed),
# UTF-8 pull
EDITORS = ["visual-studio-code", "emacs", "neovim", "neovim+refresh"]


@pytest_lsp.fixture(config=USERS, params=EDITORS)
async def editor(lsp_client: LanguageClient, request, tmp_path):
    name, _, refresh = request.param.partition("+")
    await start(lsp_client, tmp_path, refreshable(name) if refresh else name)
    yield
    await stop(lsp_client)


def vscode_session(config: ClientServerConfig, name: str):
    """The fixture `name`: VS Code's client of the server `config` starts, in a project
    of its own, shut down cleanly after the test."""

    @pytest_lsp.fixture(config=config, name=name)
    async def session(lsp_client: LanguageClient, tmp_path):
        await start(lsp_client, tmp_path, "visual-studio-code")
        yield
        await stop(lsp_client)

    return session


vscode = vscode_session(USERS, "vscode")


async def until(condition, what: str) -> None:
    """Wait for something the server does on its own time (after `initialized`)."""
    for _ in range(TIMEOUT * 20):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def by_code(diagnostics: list[types.Diagnostic]) -> dict[str, list[types.Diagnostic]]:
    found: dict[str, list[types.Diagnostic]] = {}
    for d in diagnostics:
        found.setdefault(str(d.code), []).append(d)
    return found


# -- initialize ------------------------------------------------------------------------


async def test_initialize_announces_what_the_server_does(vscode: LanguageClient):
    caps = vscode.editor.result.capabilities
    assert vscode.editor.result.server_info.name == "ascend-lint"
    assert caps.text_document_sync.change == types.TextDocumentSyncKind.Full
    assert caps.text_document_sync.save is not None  # lint on save
    assert caps.hover_provider
    assert set(caps.code_action_provider.code_action_kinds) == {
        types.CodeActionKind.QuickFix,
        "source.fixAll.ascend-lint",
    }
    assert caps.diagnostic_provider is None  # this client does not pull: it is pushed to
    # pyproject.toml is watched and the settings section registered, for this client
    await until(lambda: len(vscode.editor.registrations) == 2, "client/registerCapability")
    methods = {r.method for r in vscode.editor.registrations}
    assert methods == {
        types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        types.WORKSPACE_DID_CHANGE_CONFIGURATION,
    }


# -- diagnostics on open, with their ranges ---------------------------------------------


async def test_open_reports_findings_with_their_ranges(editor: LanguageClient):
    e: Editor = editor.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    found = by_code(await e.findings(uri, 1))
    assert sorted(found) == ["ASC001", "ASC004", "ASC007"]
    assert all(len(v) == 1 for v in found.values())
    enc = e.encoding
    expected = {
        "ASC001": span(
            KERNEL,
            ROW_ASC001,
            "tl.make_block_ptr(g + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))",
            enc,
        ),
        "ASC007": span(KERNEL, ROW_ASC007, "(i_h * T).to(tl.int64)", enc),
        "ASC004": span(KERNEL, ROW_ASC004, "num_warps=4", enc),
    }
    for code, (d,) in found.items():
        assert as_tuple(d.range) == expected[code], code
        assert d.source == "ascend-lint"
        assert d.severity == types.DiagnosticSeverity.Warning
        assert d.code_description.href.endswith(f"/rules/{code.lower()}/{code}.md")
    # the astral-plane letter before `num_warps` is counted in the client's units
    launch = KERNEL.splitlines()[ROW_ASC004]
    assert (
        found["ASC004"][0].range.start.character - launch.index("num_warps")
        == {
            "utf-8": 3,
            "utf-16": 1,
            "utf-32": 0,
        }[enc]
    )


# -- code actions: the safe fix, unsafe ones labelled, noqa, fix all --------------------


async def test_safe_quick_fix_applies_and_the_diagnostics_update(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    (asc004,) = by_code(await e.diagnostics(uri, 1))["ASC004"]
    actions = await e.actions(uri, asc004.range)
    fixes = [a for a in actions if a.is_preferred]
    assert [a.title for a in fixes] == ["ASC004: Remove `num_warps`"]
    (fix,) = fixes
    assert fix.kind == types.CodeActionKind.QuickFix
    assert [d.code for d in fix.diagnostics] == ["ASC004"]
    assert fix.edit.document_changes[0].text_document.version == 1  # tied to this text
    fixed = apply(KERNEL, fix.edit, uri, e.encoding)
    assert "num_warps" not in fixed
    assert "BT=64)" in fixed.splitlines()[ROW_ASC004]

    version = e.change(uri, fixed)
    assert sorted(by_code(await e.diagnostics(uri, version))) == ["ASC001", "ASC007"]


async def test_unsafe_fix_is_labelled_and_not_preferred(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    (asc007,) = by_code(await e.diagnostics(uri, 1))["ASC007"]
    titles = {a.title: a for a in await e.actions(uri, asc007.range)}
    unsafe = titles["ASC007: Cast an operand to int64 before multiplying (unsafe fix)"]
    assert not unsafe.is_preferred
    fixed = apply(KERNEL, unsafe.edit, uri, e.encoding)
    assert fixed.splitlines()[ROW_ASC007].strip() == "o += tl.cast(i_h, tl.int64) * T"


async def test_display_only_fix_is_not_offered_but_noqa_is(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    (asc001,) = by_code(await e.diagnostics(uri, 1))["ASC001"]
    actions = await e.actions(uri, asc001.range)
    assert [a.title for a in actions if "ASC001" in a.title] == [
        "ASC001: Suppress with `# noqa: ASC001`"
    ]
    (noqa,) = [a for a in actions if "ASC001" in a.title]
    suppressed = apply(KERNEL, noqa.edit, uri, e.encoding)
    assert suppressed.splitlines()[ROW_ASC001].endswith("(0,))  # noqa: ASC001")

    version = e.change(uri, suppressed)
    assert sorted(by_code(await e.diagnostics(uri, version))) == ["ASC004", "ASC007"]


async def test_fix_all_applies_what_the_command_line_fix_writes(vscode: LanguageClient):
    e: Editor = vscode.editor
    path = e.workspace / "kern.py"
    uri = e.open(path, KERNEL)
    await e.diagnostics(uri, 1)
    whole = types.Range(types.Position(0, 0), types.Position(0, 0))
    (fix_all,) = await e.actions(uri, whole, only=[types.CodeActionKind.SourceFixAll])
    assert fix_all.kind == "source.fixAll.ascend-lint"
    assert fix_all.title == "ascend-lint: Fix all safe (1 fix)"
    fixed = apply(KERNEL, fix_all.edit, uri, e.encoding)
    cli = subprocess.run(
        [sys.executable, "-m", "ascend_lint", "check", "--fix", "--stdin-filename", str(path), "-"],
        input=KERNEL.encode(),
        capture_output=True,
        cwd=e.workspace,
        check=False,
    )
    assert fixed == cli.stdout.decode()
    assert "num_warps" not in fixed and "(i_h * T).to(tl.int64)" in fixed  # unsafe stays
    # quick fixes only, when only quick fixes are asked for
    kinds = {a.kind for a in await e.actions(uri, whole, only=[types.CodeActionKind.QuickFix])}
    assert kinds <= {types.CodeActionKind.QuickFix}


# -- edits: coalesced, the newest text wins ---------------------------------------------


async def test_changes_during_a_lint_make_one_lint_of_the_newest_text(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    await e.diagnostics(uri, 1)
    before = len(e.published)
    text = KERNEL
    for _ in range(5):  # a burst of keystrokes, faster than a lint
        text = (
            text.replace("num_warps=4", "num_warps=4, num_stages=2", 1)
            if "num_stages" not in text
            else text + "#"
        )
        last = e.change(uri, text)
    found = by_code(await e.diagnostics(uri, last, after=before))
    assert sorted(found) == ["ASC001", "ASC004", "ASC007"]
    assert len(found["ASC004"]) == 2  # num_warps and num_stages
    await asyncio.sleep(0.3)
    published = [p.version for p in e.published[before:] if p.uri == uri]
    assert published[-1] == last
    assert len(published) < 5  # the burst was coalesced


def server_log(client: LanguageClient, name: str) -> list[str]:
    """The lines a patched server wrote to `ascend-lint-<name>-<its pid>` in the temporary
    folder (the file is removed)."""
    log = Path(tempfile.gettempdir()) / f"ascend-lint-{name}-{client._server.pid}"
    lines = log.read_text().splitlines()
    log.unlink()
    return lines


LINTED_VERSIONS = ClientServerConfig(
    server_command=server_command(
        # Lints of 0.3 s that say which version they linted, a line each in a file
        # named after the server's process id.
        "import os, tempfile, time",
        "import ascend_lint.server.buffers as b",
        "real = b.lint_text",
        "log = os.path.join(tempfile.gettempdir(), f'ascend-lint-linted-{os.getpid()}')",
        "def slow(path, text, version, *args):",
        "    time.sleep(0.3)",
        "    with open(log, 'a') as f: f.write(f'{version}\\n')",
        "    return real(path, text, version, *args)",
        "b.lint_text = slow",
    ),
    client_factory=client_factory,
)


slow_lints = vscode_session(LINTED_VERSIONS, "slow_lints")


async def test_a_burst_during_a_lint_is_linted_once_at_its_newest_text(
    slow_lints: LanguageClient,
):
    e: Editor = slow_lints.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    await e.diagnostics(uri, 1)
    text, last = KERNEL, 1
    for _ in range(5):  # each change arrives while the first one's lint runs
        text += "#"
        last = e.change(uri, text)
        await asyncio.sleep(0.02)
    await e.diagnostics(uri, last)
    await asyncio.sleep(0.5)  # a lint of a replaced text would end by now
    linted = [int(v) for v in server_log(slow_lints, "linted")]
    # The open, the first change, then one lint of the newest text: no lint of a text
    # that was already replaced when its lint would start.
    assert linted == [1, 2, last]


async def test_a_change_undone_before_its_lint_ends_is_not_linted_again(
    slow_lints: LanguageClient,
):
    e: Editor = slow_lints.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    first = await e.diagnostics(uri, 1)
    e.change(uri, KERNEL.replace("num_warps=4", "num_warps=8"))
    await asyncio.sleep(0.02)
    undone = e.change(uri, KERNEL)  # undone while its lint runs: the opened text again
    assert await e.diagnostics(uri, undone) == first
    linted = [int(v) for v in server_log(slow_lints, "linted")]
    assert linted == [1, 2]  # the findings of version 1 stand for version 3


STOPPABLE_LINTS = ClientServerConfig(
    server_command=server_command(
        # Slow rules (a lint of about 1.7 s), and the end of each lint, a line each in
        # a file named after the server's process id: its version, and how it ended.
        "import os, tempfile, time",
        "import ascend_lint.engine as e",
        "import ascend_lint.server.buffers as b",
        "class SlowRules(dict):",
        "    def get(self, key, default=None):",
        "        time.sleep(0.05)",
        "        return dict.get(self, key, default)",
        "e.RULES_BY_CODE = SlowRules(e.RULES_BY_CODE)",
        "real = b.lint_text",
        "log = os.path.join(tempfile.gettempdir(), f'ascend-lint-ended-{os.getpid()}')",
        "def logged(path, text, version, *args):",
        "    try:",
        "        linted = real(path, text, version, *args)",
        "    except BaseException as exc:",
        "        with open(log, 'a') as f: f.write(f'{version} {type(exc).__name__}\\n')",
        "        raise",
        "    with open(log, 'a') as f: f.write(f'{version} done\\n')",
        "    return linted",
        "b.lint_text = logged",
    ),
    client_factory=client_factory,
)


stoppable_lints = vscode_session(STOPPABLE_LINTS, "stoppable_lints")


async def test_an_edit_stops_the_lint_of_the_text_it_replaced(stoppable_lints: LanguageClient):
    e: Editor = stoppable_lints.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    await e.diagnostics(uri, 1)
    clock = asyncio.get_running_loop()
    began = clock.time()
    # Each edit is in the launch: its component (launcher and kernel) is linted again.
    first = e.change(uri, KERNEL.replace("num_warps=4", "num_warps=8"))
    await e.diagnostics(uri, first)
    one_lint = clock.time() - began  # about 2 s: the rules' waits
    began = clock.time()
    second = e.change(uri, KERNEL.replace("num_warps=4", "num_warps=2"))
    await asyncio.sleep(0.3)  # the lint of the second version runs
    last = e.change(uri, KERNEL.replace("num_warps=4", "num_warps=16"))
    await e.diagnostics(uri, last)
    took = clock.time() - began
    ended = server_log(stoppable_lints, "ended")
    assert ended == ["1 done", f"{first} done", f"{second} LintStopped", f"{last} done"]
    # 0.3 s and one lint, not the rest of the replaced text's lint and then one more
    assert took < 1.6 * one_lint, (took, one_lint)


async def test_a_request_waiting_on_a_stopped_lint_is_answered_from_the_newest_text(
    stoppable_lints: LanguageClient,
):
    e: Editor = stoppable_lints.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    await e.diagnostics(uri, 1)
    e.change(uri, KERNEL.replace("num_warps=4", "num_warps=8"))
    await asyncio.sleep(0.3)  # its lint runs; the request below waits for it
    row = types.Range(types.Position(ROW_ASC004, 0), types.Position(ROW_ASC004, 0))
    asked = asyncio.ensure_future(e.actions(uri, row))
    await asyncio.sleep(0.1)
    newest = KERNEL.replace("num_warps=4", "num_warps=16")
    last = e.change(uri, newest)
    actions = await asyncio.wait_for(asked, TIMEOUT)  # answered, not an error
    assert [a.title for a in actions] == ["ascend-lint: Fix all safe"]
    await e.diagnostics(uri, last)
    ended = server_log(stoppable_lints, "ended")
    assert ended == ["1 done", "2 LintStopped", f"{last} done"]


async def test_each_edit_publishes_what_the_command_line_reports(vscode: LanguageClient):
    """Edits of a module of several kernels and launchers (linted incrementally by the
    server): every version's diagnostics are the command line's findings on its text."""
    e: Editor = vscode.editor
    path = e.workspace / "chunk_o.py"
    text = (ROOT / "examples" / "gpu_habits" / "chunk_o.py").read_text(encoding="utf-8")
    uri = e.open(path, text)
    await e.diagnostics(uri, 1)
    launch = text.index("        num_warps=4, num_stages=2,")
    edits = [
        lambda t: t.replace("        num_warps=4, num_stages=2,", "        num_warps=8,", 1),
        lambda t: t[:launch] + "\n\n" + t[launch:],  # rows added above the later kernels
        lambda t: t.replace("num_warps=8,", "num_warps=8, num_stages=3,", 1),
        # a kernel's gate read made stride-1: a finding goes, its launcher's fix changes
        lambda t: t.replace("g + bos * HV + i_h, (T,), (HV,)", "g + bos * HV + i_h, (T,), (1,)", 1),
    ]
    for edit in edits:
        text = edit(text)
        version = e.change(uri, text)
        published = await e.diagnostics(uri, version)
        cli = subprocess.run(
            [
                sys.executable,
                "-m",
                "ascend_lint",
                "check",
                "--no-cache",
                "--output-format",
                "json",
                "--stdin-filename",
                str(path),
                "-",
            ],
            input=text.encode(),
            capture_output=True,
            cwd=e.workspace,
            check=False,
        )
        expected = sorted(
            (d["location"]["row"] - 1, d["code"], d["message"]) for d in json.loads(cli.stdout)
        )
        shown = sorted((d.range.start.line, d.code, d.message) for d in published)
        assert shown == expected


async def test_save_lints_at_once(vscode: LanguageClient):
    e: Editor = vscode.editor
    path = e.workspace / "kern.py"
    uri = e.open(path, KERNEL)
    await e.diagnostics(uri, 1)
    before = len(e.published)
    vscode.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert sorted(by_code(await e.diagnostics(uri, 1, after=before))) == [
        "ASC001",
        "ASC004",
        "ASC007",
    ]


async def test_closing_clears_the_findings(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    await e.diagnostics(uri, 1)
    before = len(e.published)
    vscode.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert await e.diagnostics(uri, None, after=before) == []


# -- hover --------------------------------------------------------------------------------


async def test_hover_explains_the_rule_and_points_to_the_reference_kernel(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    (asc001,) = by_code(await e.diagnostics(uri, 1))["ASC001"]
    hover = await vscode.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=asc001.range.start
        )
    )
    text = hover.contents.value
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert as_tuple(hover.range) == as_tuple(asc001.range)
    assert "**ASC001** `strided-time-gather`" in text
    assert "**Why:**" in text and "gather" in text
    assert "**Reference kernel:** [`gate_block_ptr`](file://" in text
    assert "**Reference kernel:** [`_gate_arg`](file://" in text
    assert "```python\n@triton.jit" in text  # the kernel to copy, as code
    assert "https://github.com/ascend-lint/ascend-lint/blob/main/rules/asc001/ASC001.md" in text

    nothing = await vscode.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0)
        )
    )
    assert nothing is None


# -- pull diagnostics ----------------------------------------------------------------------


@pytest_lsp.fixture(config=USERS)
async def puller(lsp_client: LanguageClient, tmp_path):
    """A client that pulls diagnostics and can be asked to pull again."""
    await start(lsp_client, tmp_path, refreshable("neovim"))
    yield
    await stop(lsp_client)


@pytest_lsp.fixture(config=USERS)
async def neovim(lsp_client: LanguageClient, tmp_path):
    """Neovim 0.11 as it announces itself: it pulls, but cannot be refreshed and
    watches no files for the server."""
    await start(lsp_client, tmp_path, "neovim")
    yield
    await stop(lsp_client)


async def test_pull_diagnostics_report_changes_only(puller: LanguageClient):
    e: Editor = puller.editor
    assert e.pulls
    uri = e.open(e.workspace / "kern.py", KERNEL)
    first = await e.pull(uri)
    assert first.kind == "full"
    assert sorted(by_code(first.items)) == ["ASC001", "ASC004", "ASC007"]
    same = await e.pull(uri, previous=first.result_id)
    assert same.kind == "unchanged" and same.result_id == first.result_id
    e.change(uri, KERNEL.replace(", num_warps=4", ""))
    changed = await e.pull(uri, previous=first.result_id)
    assert changed.kind == "full" and changed.result_id != first.result_id
    assert sorted(by_code(changed.items)) == ["ASC001", "ASC007"]
    assert not e.published  # a client that pulls is not pushed to as well


# -- configuration and pyproject.toml, without a restart ---------------------------------


async def test_pyproject_edit_is_picked_up(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    assert "ASC004" in by_code(await e.diagnostics(uri, 1))
    before = len(e.published)
    project(
        e.workspace,
        '[tool.ascend-lint]\nignore = ["ASC004"]\nper-file-ignores = { "kern.py" = ["ASC007"] }\n',
    )
    vscode.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=(e.workspace / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed
                )
            ]
        )
    )
    assert sorted(by_code(await e.diagnostics(uri, 1, after=before))) == ["ASC001"]


async def test_editor_settings_are_picked_up(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    assert "ASC001" in by_code(await e.diagnostics(uri, 1))
    before = len(e.published)
    vscode.set_configuration({"ignore": ["ASC001"], "unfixable": ["ASC004"]}, section="ascend-lint")
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    found = by_code(await e.diagnostics(uri, 1, after=before))
    assert sorted(found) == ["ASC004", "ASC007"]
    (asc004,) = found["ASC004"]
    assert not [a for a in await e.actions(uri, asc004.range) if a.is_preferred]  # unfixable

    before = len(e.published)
    vscode.set_configuration({"ignore": ["ASC999"]}, section="ascend-lint")
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    # a bad setting is shown to the user, and the buffer is still linted (with the defaults)
    assert sorted(by_code(await e.diagnostics(uri, 1, after=before))) == [
        "ASC001",
        "ASC004",
        "ASC007",
    ]
    assert any("unknown rule selector `ASC999`" in m.message for m in vscode.messages)


@pytest_lsp.fixture(config=USERS)
async def options_client(lsp_client: LanguageClient, tmp_path):
    """Settings sent as initialization options (as Helix sends its `config`), by a
    client that answers the configuration pull with nothing."""
    editor: Editor = lsp_client.editor
    editor.workspace = project(tmp_path)
    await editor.initialize("emacs", options={"ascend-lint": {"ignore": ["ASC007"]}})
    yield
    await stop(lsp_client)


async def test_settings_given_at_initialization_apply_from_the_start(
    options_client: LanguageClient,
):
    e: Editor = options_client.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    assert sorted(by_code(await e.diagnostics(uri, 1))) == ["ASC001", "ASC004"]
    await asyncio.sleep(0.5)  # the client answers the configuration pull with nothing
    assert all("ASC007" not in by_code(p.diagnostics) for p in e.published)


async def test_noqa_and_file_excludes_apply_to_buffers(vscode: LanguageClient):
    e: Editor = vscode.editor
    project(e.workspace, '[tool.ascend-lint]\nextend-exclude = ["vendored"]\n')
    quiet = KERNEL.replace("num_warps=4)", "num_warps=4)  # noqa: ASC004")
    uri = e.open(e.workspace / "kern.py", quiet)
    assert sorted(by_code(await e.diagnostics(uri, 1))) == ["ASC001", "ASC007"]
    (e.workspace / "vendored").mkdir()
    other = e.open(e.workspace / "vendored" / "kern.py", KERNEL)
    assert await e.diagnostics(other, 1) == []
    # a client that sends every buffer: pyproject.toml is not read as Python
    toml = e.open(e.workspace / "pyproject.toml", 'dependencies = ["triton"]\n', "toml")
    assert await e.diagnostics(toml, 1) == []


# -- broken buffers and failing requests --------------------------------------------------


async def test_half_written_code_gives_one_asc000(vscode: LanguageClient):
    e: Editor = vscode.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    await e.diagnostics(uri, 1)
    broken = KERNEL + "\n\ndef half(x, y:\n    gate_kernel[(1,)](x, "
    version = e.change(uri, broken)
    (d,) = await e.diagnostics(uri, version)
    assert d.code == "ASC000" and d.severity == types.DiagnosticSeverity.Error
    assert d.range.start != d.range.end  # something to underline
    version = e.change(uri, KERNEL)  # repaired: the findings are back
    assert sorted(by_code(await e.diagnostics(uri, version))) == ["ASC001", "ASC004", "ASC007"]


FAILING = ClientServerConfig(
    server_command=server_command(
        # A hover that raises, and a rule that raises on every file: both are bugs the
        # server must survive.
        "import ascend_lint.server.hover as h",
        "def broken(d): raise RuntimeError('hover exploded')",
        "h.hover_markdown = broken",
        "from ascend_lint.rules import RULES_BY_CODE",
        "def check(self, ctx): raise ValueError('rule exploded')",
        "RULES_BY_CODE['ASC007'].check = check",
    ),
    client_factory=client_factory,
)


failing = vscode_session(FAILING, "failing")


async def test_a_failing_request_or_rule_does_not_stop_the_server(failing: LanguageClient):
    e: Editor = failing.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    # the other rules' findings still arrive, and the rule's error is logged
    assert sorted(by_code(await e.diagnostics(uri, 1))) == ["ASC001", "ASC004"]
    assert any("internal error in ASC007" in m.message for m in failing.log_messages)
    (asc001,) = by_code(await e.diagnostics(uri, 1))["ASC001"]
    with pytest.raises(JsonRpcException, match="hover exploded"):
        await failing.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=asc001.range.start
            )
        )
    # ... and the server answers the next request and the next edit
    assert await e.actions(uri, asc001.range)
    version = e.change(uri, KERNEL.replace(", num_warps=4", ""))
    assert sorted(by_code(await e.diagnostics(uri, version))) == ["ASC001"]


# -- what Neovim sends: code actions from anywhere on a line ------------------------------

# Two knobs on one line of a launch split over lines: two ASC004 findings side by side.
TWO_KNOBS = KERNEL.replace(
    "BT=64, num_warps=4)  # noqa: ASC023, ASC025",
    "BT=64,  # noqa: ASC023, ASC025\n        num_warps=4, num_stages=2,\n    )",
)
ROW_KNOBS = ROW_ASC004 + 1


def line_start(row: int) -> types.Range:
    """`vim.lsp.buf.code_action()` with the cursor in column 1: an empty range there."""
    return types.Range(types.Position(row, 0), types.Position(row, 0))


async def test_code_action_from_column_1_offers_each_findings_fix_and_noqa(
    neovim: LanguageClient,
):
    e: Editor = neovim.editor
    path = e.workspace / "kern.py"
    uri = e.open(path, TWO_KNOBS)
    found = await e.findings(uri, 1)
    on_line = [d for d in found if d.range.start.line == ROW_KNOBS]
    assert [d.code for d in on_line] == ["ASC004", "ASC004"]
    # Neovim sends the line's diagnostics in the context, as it received them.
    actions = await e.actions(uri, line_start(ROW_KNOBS), context=on_line)
    titles = [a.title for a in actions]
    assert titles == [
        "ASC004: Remove `num_warps`",
        "ASC004: Suppress with `# noqa: ASC004`",
        "ASC004: Remove `num_stages`",
        "ASC004: Suppress with `# noqa: ASC004`",
        "ascend-lint: Fix all safe",  # its edit comes through codeAction/resolve
    ]
    warps, _, stages, noqa, fix_all = actions
    # each quick fix removes its own keyword only, and the two edits differ
    assert warps.edit != stages.edit
    for action, gone, kept in (
        (warps, "num_warps", "num_stages"),
        (stages, "num_stages", "num_warps"),
    ):
        fixed = apply(TWO_KNOBS, action.edit, uri, e.encoding)
        assert gone not in fixed and kept in fixed, action.title
        compile(fixed, "kern.py", "exec")
    assert (
        apply(TWO_KNOBS, noqa.edit, uri, e.encoding)
        .splitlines()[ROW_KNOBS]
        .endswith("num_stages=2,  # noqa: ASC004")
    )
    # the lazy fix-all, resolved when chosen, writes what `--fix` writes
    assert fix_all.edit is None and fix_all.kind == "source.fixAll.ascend-lint"
    resolved = await neovim.code_action_resolve_async(fix_all)
    assert resolved.title == "ascend-lint: Fix all safe (2 fixes)"
    cli = subprocess.run(
        [sys.executable, "-m", "ascend_lint", "check", "--fix", "--stdin-filename", str(path), "-"],
        input=TWO_KNOBS.encode(),
        capture_output=True,
        cwd=e.workspace,
        check=False,
    )
    assert apply(TWO_KNOBS, resolved.edit, uri, e.encoding) == cli.stdout.decode()


async def test_context_diagnostics_of_another_server_are_not_ours(neovim: LanguageClient):
    e: Editor = neovim.editor
    uri = e.open(e.workspace / "kern.py", TWO_KNOBS)
    (asc001,) = by_code(await e.findings(uri, 1))["ASC001"]
    foreign = types.Diagnostic(range=asc001.range, message="E501", code="ASC001", source="ruff")
    actions = await e.actions(uri, line_start(ROW_KNOBS - 5), context=[foreign])
    assert not [a for a in actions if a.kind == types.CodeActionKind.QuickFix]


# -- hover on a code of a noqa comment------------------------------------------------------------


async def test_hover_on_a_noqa_code_shows_its_rule(neovim: LanguageClient):
    e: Editor = neovim.editor
    quiet = KERNEL.replace("num_warps=4)", "num_warps=4)  # noqa: ASC004").replace(
        "(0,))\n", "(0,))  # noqa:ASC003,ASC001\n", 1
    )
    uri = e.open(e.workspace / "kern.py", quiet)
    assert sorted(by_code(await e.findings(uri, 1))) == ["ASC007", "ASC100"]  # ASC003 unused
    lines = quiet.splitlines()

    async def hover_at(row: int, column: int):
        return await neovim.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(row, units(lines[row][:column], e.encoding)),
            )
        )

    hover = await hover_at(ROW_ASC004, lines[ROW_ASC004].index("ASC004") + 2)
    assert hover.contents.value.startswith(
        "**ASC004** `launch-num-warps-stages`: `num_warps`/`num_stages` at a launch"
    )
    assert "**Why:**" in hover.contents.value and "rules/asc004/ASC004.md" in hover.contents.value
    assert as_tuple(hover.range) == span(quiet, ROW_ASC004, "ASC004", e.encoding)
    end_of_code = await hover_at(ROW_ASC001, lines[ROW_ASC001].index("ASC001") + 6)
    assert end_of_code.contents.value.startswith("**ASC001** `strided-time-gather`")
    # an unused code: its rule, then the finding that says it is unused
    unused = (await hover_at(ROW_ASC001, lines[ROW_ASC001].index("ASC003"))).contents.value
    assert unused.startswith("**ASC003** `runtime-branch-in-loop`")
    assert "\n\n---\n\n**ASC100** `unused-noqa`" in unused
    assert await hover_at(ROW_ASC004, lines[ROW_ASC004].index("# noqa")) is None


# -- configuration changes in clients that watch no files ---------------------------------


async def test_pyproject_edit_reaches_a_client_that_watches_no_files(neovim: LanguageClient):
    e: Editor = neovim.editor
    assert not e.registrations  # Neovim on Linux cannot watch files for the server
    uri = e.open(e.workspace / "kern.py", KERNEL)
    assert "ASC004" in by_code(await e.findings(uri, 1))
    before = len(e.published)
    project(e.workspace, '[tool.ascend-lint]\nignore = ["ASC004"]\n')
    # no notification at all: the server sees the file change and publishes again
    assert sorted(by_code(await e.diagnostics(uri, 1, after=before))) == ["ASC001", "ASC007"]


async def test_a_pulling_client_is_asked_to_pull_again_after_a_change(puller: LanguageClient):
    e: Editor = puller.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    first = await e.pull(uri)
    assert "ASC004" in by_code(first.items)
    project(e.workspace, '[tool.ascend-lint]\nignore = ["ASC004"]\n')
    await until(lambda: puller.diagnostic_refresh_count == 1, "workspace/diagnostic/refresh")
    assert sorted(by_code((await e.pull(uri, previous=first.result_id)).items)) == [
        "ASC001",
        "ASC007",
    ]
    puller.set_configuration({"ignore": ["ASC001"]}, section="ascend-lint")
    puller.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await until(lambda: puller.diagnostic_refresh_count == 2, "a second refresh")
    assert sorted(by_code((await e.pull(uri)).items)) == ["ASC004", "ASC007"]
    assert not e.published


# -- fix-all: worked out only when asked for, never in the way of other requests ----------

SLOW_FIX_ALL_S = 4
SLOW_FIXES = ClientServerConfig(
    server_command=server_command(
        # Fix-all that takes a while (as on an 818 KB file), to see what waits for it.
        "import time",
        "import ascend_lint.server.buffers as b",
        "real = b.fix_file",
        f"def slow(*args, **kwargs): time.sleep({SLOW_FIX_ALL_S}); return real(*args, **kwargs)",
        "b.fix_file = slow",
    ),
    client_factory=client_factory,
)


slow_fixes = vscode_session(SLOW_FIXES, "slow_fixes")


async def test_a_hover_is_answered_while_fix_all_runs(slow_fixes: LanguageClient):
    e: Editor = slow_fixes.editor
    uri = e.open(e.workspace / "kern.py", KERNEL)
    (asc001,) = by_code(await e.diagnostics(uri, 1))["ASC001"]
    loop = asyncio.get_running_loop()
    # the lightbulb's request on a cursor move does not work fix-all out
    started = loop.time()
    actions = await e.actions(uri, asc001.range)
    assert loop.time() - started < SLOW_FIX_ALL_S / 2
    assert [a.edit for a in actions if a.kind == "source.fixAll.ascend-lint"] == [None]
    # fix on save asks for it by kind; a hover sent meanwhile does not wait for it
    whole = types.Range(types.Position(0, 0), types.Position(0, 0))
    fix_all = asyncio.ensure_future(e.actions(uri, whole, only=["source.fixAll"]))
    await asyncio.sleep(0.2)
    started = loop.time()
    hover = await slow_fixes.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=asc001.range.start
        )
    )
    assert loop.time() - started < SLOW_FIX_ALL_S / 2
    assert not fix_all.done()
    assert "**ASC001**" in hover.contents.value
    (action,) = await asyncio.wait_for(fix_all, TIMEOUT)
    assert "num_warps" not in apply(KERNEL, action.edit, uri, e.encoding)
    # the same text again: the fix-all of this version is not worked out twice
    started = loop.time()
    (again,) = await e.actions(uri, whole, only=["source.fixAll"])
    assert loop.time() - started < SLOW_FIX_ALL_S / 2
    assert again.edit == action.edit


# -- a client that goes away mid-lint ------------------------------------------------------


def frame(message: dict) -> bytes:
    import json

    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


SLOW_LINT = [
    # Every lint takes seconds, as a big file's does: the client leaves during one.
    "import time",
    "import ascend_lint.server.buffers as b",
    "real = b.lint_text",
    "def slow(*args, **kwargs): time.sleep(5); return real(*args, **kwargs)",
    "b.lint_text = slow",
]


@pytest.mark.parametrize("how", ["closes-both-pipes", "stops-reading"])
async def test_a_client_that_leaves_mid_lint_leaves_no_process_and_no_traceback(
    tmp_path: Path, how: str
):
    project(tmp_path)
    uri = (tmp_path / "kern.py").as_uri()
    process = await asyncio.create_subprocess_exec(
        *server_command(*SLOW_LINT),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    caps = {"textDocument": {"publishDiagnostics": {"versionSupport": True}}}
    process.stdin.write(
        frame(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": caps},
            }
        )
        + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + frame(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "python",
                        "version": 1,
                        "text": KERNEL,
                    }
                },
            }
        )
    )
    await process.stdin.drain()
    assert b"Content-Length" in await asyncio.wait_for(process.stdout.readline(), TIMEOUT)
    await asyncio.sleep(0.5)  # the lint has started
    left = asyncio.get_running_loop().time()
    # `:qa!`: the editor is gone, its end of both pipes closed
    process.stdout.feed_eof()
    process._transport.get_pipe_transport(1).close()
    if how == "closes-both-pipes":
        process.stdin.close()
    code = await asyncio.wait_for(process.wait(), TIMEOUT)
    gone = asyncio.get_running_loop().time() - left
    err = (await process.stderr.read()).decode()
    if how == "closes-both-pipes":
        assert gone < 2, gone  # not after the lint (5 s) ends
    assert code == 1
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert len(err.splitlines()) == 1, err
    assert "client closed the connection" in err


BIG_BUFFER_FIXES = ClientServerConfig(
    # Every buffer fixed as a big one is: in the worker process.
    server_command=server_command(
        "import ascend_lint.server.server as s", "s.BIG_BUFFER_CHARS = 0"
    ),
    client_factory=client_factory,
)


process_fixes = vscode_session(BIG_BUFFER_FIXES, "process_fixes")


async def test_fix_all_in_the_worker_process_writes_what_the_command_line_writes(
    process_fixes: LanguageClient,
):
    e: Editor = process_fixes.editor
    path = e.workspace / "kern.py"
    uri = e.open(path, TWO_KNOBS)
    await e.diagnostics(uri, 1)
    whole = types.Range(types.Position(0, 0), types.Position(0, 0))
    (action,) = await e.actions(uri, whole, only=["source.fixAll"])
    assert action.title == "ascend-lint: Fix all safe (2 fixes)"
    cli = subprocess.run(
        [sys.executable, "-m", "ascend_lint", "check", "--fix", "--stdin-filename", str(path), "-"],
        input=TWO_KNOBS.encode(),
        capture_output=True,
        cwd=e.workspace,
        check=False,
    )
    assert apply(TWO_KNOBS, action.edit, uri, e.encoding) == cli.stdout.decode()
