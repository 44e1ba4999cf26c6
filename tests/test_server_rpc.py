"""The server's own JSON-RPC/LSP layer, driven byte for byte over the real process's
stdio: framing, errors, the lifecycle, cancellation, requests to the client, position
encodings, ranged changes and file URIs. Needs nothing beyond the package (no LSP
client library): the frames are written here."""

from __future__ import annotations

import json
import queue
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest
from lint_helpers import server_command

from ascend_lint.server.documents import apply_change, offset_of
from ascend_lint.server.uris import path_of_uri

TIMEOUT = 20  # seconds; a loaded CI machine starts Python slowly

# ASC004 on its last line, after `g\U0001d465` (4 UTF-8 bytes, 2 UTF-16 units); the core
# count (ASC012) and an empty input's grid of 0 programs (ASC025) are suppressed.
KERNEL = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def copy_kernel(x, y, N, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < N), mask=offs < N)


    def copy(gx, y):
        N = gx.numel()
        copy_kernel[(triton.cdiv(N, 1024),)](g\U0001d465, y, N, BLOCK=1024, num_warps=4)  # noqa: ASC012, ASC025
    """
)
ROW_ASC004 = 12

# What pygls 2.1 answered to `initialize` before the server had its own layer.
CAPABILITIES = {
    "codeActionProvider": {
        "codeActionKinds": ["quickfix", "source.fixAll.ascend-lint"],
        "resolveProvider": True,
    },
    "executeCommandProvider": {"commands": []},
    "hoverProvider": True,
    "positionEncoding": "utf-16",
    "textDocumentSync": {"change": 1, "openClose": True, "save": True},
    "workspace": {
        "fileOperations": {},
        "workspaceFolders": {"changeNotifications": True, "supported": True},
    },
}
PULL_DIAGNOSTICS = {
    "identifier": "ascend-lint",
    "interFileDependencies": False,
    "workspaceDiagnostics": False,
}


def frame(message: dict | bytes, headers: str = "") -> bytes:
    body = (
        message if isinstance(message, bytes) else json.dumps(message, ensure_ascii=False).encode()
    )
    return b"Content-Length: %d\r\n%s\r\n" % (len(body), headers.encode()) + body


class Client:
    """The client end of the server's stdio, frame by frame."""

    def __init__(self, cwd: Path, *patches: str) -> None:
        self.cwd = cwd
        self.process = subprocess.Popen(
            server_command(*patches),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        self._inbox: queue.Queue = queue.Queue()
        self.held: list[dict] = []  # received, not yet asked for
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.process.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self._inbox.put(None)
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode("ascii").partition(":")
                assert line.endswith(b"\r\n"), line
                if name.lower() == "content-length":
                    length = int(value)
            self._inbox.put(json.loads(out.read(length).decode("utf-8")))

    def write(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        self.write(frame({"jsonrpc": "2.0", **message}))

    def request(self, id_, method: str, params=None) -> dict:
        self.send({"id": id_, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == id_ and "method" not in m)

    def notify(self, method: str, params=None) -> None:
        self.send({"method": method, "params": params})

    def wait(self, wanted, timeout: float = TIMEOUT) -> dict:
        """The first message (held back or new) that `wanted` accepts."""
        for i, message in enumerate(self.held):
            if wanted(message):
                return self.held.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            message = self._inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            assert message is not None, f"the server ended: {self.stderr()}"
            if wanted(message):
                return message
            self.held.append(message)

    def next(self, timeout: float = TIMEOUT) -> dict:
        return self.wait(lambda _m: True, timeout)

    def published(self, uri: str, timeout: float = TIMEOUT) -> dict:
        return self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            ),
            timeout,
        )["params"]

    def initialize(self, capabilities: dict | None = None, **params) -> dict:
        params = {"processId": None, "rootUri": self.cwd.as_uri(), **params}
        answer = self.request(1, "initialize", {**params, "capabilities": capabilities or {}})
        self.notify("initialized", {})
        return answer

    def open(self, path: Path, text: str = KERNEL) -> str:
        uri = path.as_uri()
        item = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": item})
        return uri

    def end(self) -> int:
        """`shutdown` and `exit`: the exit code."""
        assert self.request("down", "shutdown") == {"jsonrpc": "2.0", "id": "down", "result": None}
        self.notify("exit")
        return self.process.wait(TIMEOUT)

    def stderr(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(TIMEOUT)
        return self.process.stderr.read().decode()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(TIMEOUT)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", "utf-8")
    return tmp_path


@pytest.fixture
def client(workspace: Path):
    c = Client(workspace)
    yield c
    c.close()


def codes(params: dict) -> list[str]:
    return sorted(d["code"] for d in params["diagnostics"])


def error_of(answer: dict) -> int:
    return answer["error"]["code"]


# -- initialize ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("capabilities", "diagnostic_provider"),
    [
        ({}, False),
        # pulls and can be asked to pull again (VS Code, Neovim 0.12)
        (
            {
                "textDocument": {"diagnostic": {}},
                "workspace": {"diagnostics": {"refreshSupport": True}},
            },
            True,
        ),
        # pulls, cannot be refreshed (Neovim 0.10 and 0.11): pushed to
        ({"textDocument": {"diagnostic": {"dynamicRegistration": True}}}, False),
    ],
)
def test_initialize_answers_the_capabilities_as_before(
    client: Client, capabilities: dict, diagnostic_provider: bool
):
    answer = client.initialize(capabilities)
    expected = dict(CAPABILITIES)
    if diagnostic_provider:
        expected["diagnosticProvider"] = PULL_DIAGNOSTICS
    from ascend_lint import __version__

    assert answer["result"] == {
        "capabilities": expected,
        "serverInfo": {"name": "ascend-lint", "version": __version__},
    }
    assert client.end() == 0


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        (None, "utf-16"),
        (["utf-8"], "utf-8"),
        (["utf-32"], "utf-32"),
        (["utf-32", "utf-8", "utf-16"], "utf-32"),  # the client's order is its preference
        (["utf-16", "utf-8"], "utf-16"),
        (["latin-1", "utf-8"], "utf-8"),
        (["latin-1"], "utf-16"),
    ],
)
def test_position_encoding_is_the_clients_first_known_offer(
    client: Client, offered: list[str] | None, chosen: str
):
    capabilities = {} if offered is None else {"general": {"positionEncodings": offered}}
    assert client.initialize(capabilities)["result"]["capabilities"]["positionEncoding"] == chosen


ENGINE = ("ascend_lint.engine", "ascend_lint.rules", "ascend_lint.index", "ascend_lint.settings")
LIBRARIES = ("libcst", "pygls", "lsprotocol", "cattrs")


def test_initialize_is_answered_before_anything_of_the_engine_is_imported(
    workspace: Path, tmp_path_factory
):
    record = tmp_path_factory.mktemp("modules") / "modules.json"
    c = Client(
        workspace,
        # The modules loaded when the server writes its first answer (to `initialize`).
        "import json, sys, ascend_lint.server.rpc as r",
        "real = r.Connection._write",
        "def write(self, header, body):",
        f"    if not hasattr(r, 'seen'): r.seen = open({str(record)!r}, 'w').write("
        "json.dumps(sorted(sys.modules)))",
        "    real(self, header, body)",
        "r.Connection._write = write",
    )
    try:
        assert c.initialize()["result"]["serverInfo"]["name"] == "ascend-lint"
        uri = c.open(workspace / "kern.py")
        assert codes(c.published(uri)) == ["ASC004"]  # the engine comes after
        loaded = json.loads(record.read_text())
        assert "ascend_lint.server.server" in loaded
        early = [m for m in loaded if m.split(".")[0] in LIBRARIES or m.startswith(ENGINE)]
        assert early == []
        assert c.end() == 0
    finally:
        c.close()


def test_the_server_needs_no_lsp_library(workspace: Path):
    blocked = ", ".join(f"{name!r}" for name in LIBRARIES[1:])
    c = Client(workspace, f"import sys; sys.modules.update(dict.fromkeys([{blocked}]))")
    try:
        c.initialize()
        uri = c.open(workspace / "kern.py")
        (asc004,) = c.published(uri)["diagnostics"]
        hover = c.request(
            2,
            "textDocument/hover",
            {
                "textDocument": {"uri": uri},
                "position": asc004["range"]["start"],
            },
        )
        assert hover["result"]["contents"]["value"].startswith("**ASC004**")
        assert c.end() == 0
    finally:
        c.close()


# -- framing -------------------------------------------------------------------------------


def test_any_chunking_of_stdin_and_utf8_bodies(client: Client, workspace: Path):
    """Frames cut anywhere (a byte at a time, mid-header, mid-character) or run
    together, with an optional Content-Type; the body's UTF-8 is decoded as one text."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {"general": {"positionEncodings": ["utf-8"]}},
        },
    }
    for i, byte in enumerate(
        frame(init, "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n")
    ):
        client.write(bytes([byte]))
        if i % 40 == 0:
            time.sleep(0.001)
    assert client.next()["result"]["capabilities"]["positionEncoding"] == "utf-8"
    uri = (workspace / "kern.py").as_uri()
    item = {"uri": uri, "languageId": "python", "version": 1, "text": KERNEL}
    opened = frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}) + frame(
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}
    )
    cut = opened.index("\U0001d465".encode()) + 2  # inside the 4 bytes of one character
    client.write(opened[:cut])
    time.sleep(0.05)
    client.write(opened[cut:])
    (asc004,) = client.published(uri)["diagnostics"]
    line = KERNEL.splitlines()[ROW_ASC004]
    start = len(line[: line.index("num_warps")].encode())
    assert asc004["range"]["start"] == {"line": ROW_ASC004, "character": start}
    assert client.end() == 0


@pytest.mark.parametrize(
    "garbage",
    [
        b"Content-Length: 12\r\n\r\n{not json!!}",  # a body that is not JSON
        b"Content-Length: 2\r\n\r\n\xff\xfe",  # nor UTF-8
        b'Content-Length: 4\r\nContent-Type: application/json; charset=latin-1\r\n\r\n"\xe9"\n',
        b"Length 12\r\n\r\n",  # not a header
        b"Content-Length: many\r\n\r\n",  # no length to go by
        b'Content-Type: application/json\r\n\r\n{"id": 5}',  # no length: runs into the next
    ],
)
def test_malformed_input_is_answered_with_a_parse_error_and_the_server_goes_on(
    client: Client, garbage: bytes
):
    client.initialize()
    client.write(garbage)
    answer = client.next()
    assert answer["id"] is None and error_of(answer) == -32700
    hover = client.request(
        2,
        "textDocument/hover",
        {
            "textDocument": {"uri": "untitled:Untitled-1"},
            "position": {"line": 0, "character": 0},
        },
    )
    assert hover["result"] is None
    assert client.end() == 0
    assert "Traceback" not in client.stderr()


# -- the lifecycle and unknown methods ------------------------------------------------------


def test_lifecycle_errors_and_unknown_methods(client: Client):
    hover = {"textDocument": {"uri": "untitled:a"}, "position": {"line": 0, "character": 0}}
    assert error_of(client.request(1, "textDocument/hover", hover)) == -32002
    client.notify("$/setTrace", {"value": "off"})  # dropped before initialize
    assert "result" in client.request(2, "initialize", {"processId": None, "capabilities": {}})
    assert error_of(client.request(3, "initialize", {"capabilities": {}})) == -32600
    client.notify("initialized", {})
    assert error_of(client.request(4, "textDocument/formatting", {})) == -32601
    assert error_of(client.request(5, "textDocument/hover", 5)) == -32602  # params: 5
    answer = client.request("five", "$/unknownRequest", {})
    assert error_of(answer) == -32601
    assert answer == {"jsonrpc": "2.0", "id": "five", "error": answer["error"]}  # ids as sent
    # notifications without a handler, `$/...` or other: no answer at all
    client.notify("$/setTrace", {"value": "verbose"})
    client.notify("$/progress", {"token": 1, "value": {}})
    client.notify("textDocument/willSave", {"textDocument": {"uri": "untitled:a"}, "reason": 1})
    client.send({"id": 6, "method": "textDocument/hover", "params": hover})
    assert client.next() == {"jsonrpc": "2.0", "id": 6, "result": None}
    assert client.request(7, "shutdown")["result"] is None
    assert error_of(client.request(8, "textDocument/hover", hover)) == -32600
    client.notify("exit")
    assert client.process.wait(TIMEOUT) == 0
    assert client.stderr() == ""


@pytest.mark.parametrize(
    ("message", "answered"),
    [
        ([{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}], True),  # a batch
        ({"jsonrpc": "2.0", "id": [2], "method": "shutdown"}, True),  # an id that is no id
        ({"jsonrpc": "2.0", "id": {"n": 2}, "result": None}, True),
        ({"jsonrpc": "2.0", "id": 3, "method": 42}, True),
        # a notification: logged, not answered
        ({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1]}}, False),
    ],
)
def test_invalid_messages_are_invalid_requests_and_the_server_goes_on(
    client: Client, message: dict | list, answered: bool
):
    client.initialize()
    client.write(frame(json.dumps(message).encode()))
    hover = {"textDocument": {"uri": "untitled:a"}, "position": {"line": 0, "character": 0}}
    assert client.request(9, "textDocument/hover", hover)["result"] is None
    errors = [error_of(m) for m in client.held if "error" in m]
    assert errors == ([-32600] if answered else [])
    assert client.end() == 0
    assert "Traceback" not in client.stderr()


def test_stdin_closed_after_shutdown_is_a_clean_exit(client: Client):
    client.initialize()
    assert client.request(2, "shutdown")["result"] is None
    client.process.stdin.close()
    assert client.process.wait(TIMEOUT) == 0
    assert client.stderr() == ""


def test_exit_without_shutdown_is_code_1_and_one_line(client: Client):
    client.initialize()
    client.notify("exit")
    assert client.process.wait(TIMEOUT) == 1
    assert client.stderr().splitlines() == ["ascend-lint server: `exit` without `shutdown`"]


# -- cancellation --------------------------------------------------------------------------

SLOW_HOVER = [
    "import asyncio, ascend_lint.server.server as s",
    "async def slow(self, params): await asyncio.sleep(60)",
    "s.AscendLintServer.hover = slow",
]
SLOW_LINT = [
    "import time, ascend_lint.server.buffers as b",
    "real = b.lint_text",
    "def slow(*args, **kwargs): time.sleep(3); return real(*args, **kwargs)",
    "b.lint_text = slow",
]


def test_a_cancelled_request_is_answered_request_cancelled(workspace: Path):
    c = Client(workspace, *SLOW_HOVER)
    try:
        c.initialize()
        hover = {"textDocument": {"uri": "untitled:a"}, "position": {"line": 0, "character": 0}}
        c.send({"id": 7, "method": "textDocument/hover", "params": hover})
        time.sleep(0.2)
        started = time.monotonic()
        c.notify("$/cancelRequest", {"id": 7})
        answer = c.next()
        assert answer["id"] == 7 and error_of(answer) == -32800
        assert time.monotonic() - started < 5
        # a cancel read with its request (the handler has not started yet)
        c.write(
            frame({"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover", "params": hover})
            + frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 8}})
        )
        answer = c.next()
        assert answer["id"] == 8 and error_of(answer) == -32800
        c.notify("$/cancelRequest", {"id": 7})  # again, or of an answered request: nothing
        c.notify("$/cancelRequest", {"id": 99})
        assert c.request(9, "shutdown")["result"] is None
    finally:
        c.close()


def test_cancelling_a_request_that_waits_for_a_lint_leaves_the_lint_to_the_others(
    workspace: Path,
):
    c = Client(workspace, *SLOW_LINT)
    try:
        c.initialize()
        uri = c.open(workspace / "kern.py")
        time.sleep(0.3)  # the lint (3 s) has started
        hover = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        c.send({"id": 2, "method": "textDocument/hover", "params": hover})
        c.notify("$/cancelRequest", {"id": 2})
        answer = c.next()
        assert answer.get("id") == 2 and error_of(answer) == -32800, answer
        # the lint both waited for goes on and is published, and requests are answered
        assert codes(c.published(uri)) == ["ASC004"]
        assert c.request(3, "textDocument/hover", hover)["result"] is None
        assert c.end() == 0
    finally:
        c.close()


# -- requests to the client, failing handlers -------------------------------------------------


def test_requests_to_the_client_have_their_own_ids_and_await_the_answer(
    client: Client, workspace: Path
):
    client.initialize(
        {
            "workspace": {
                "configuration": True,
                "didChangeWatchedFiles": {"dynamicRegistration": True},
            }
        }
    )
    register = client.wait(lambda m: m.get("method") == "client/registerCapability")
    # the client fails this one: the server goes on to ask for its settings
    client.send({"id": register["id"], "error": {"code": -32601, "message": "no"}})
    configuration = client.wait(lambda m: m.get("method") == "workspace/configuration")
    assert configuration["id"] != register["id"]
    assert configuration["params"] == {"items": [{"section": "ascend-lint"}]}
    client.send({"id": configuration["id"], "result": [{"ignore": ["ASC004"]}]})
    uri = client.open(workspace / "kern.py")
    assert codes(client.published(uri)) == []  # the answer was read and applied
    assert client.end() == 0
    err = client.stderr()
    assert err.splitlines() == ["ascend-lint server: client/registerCapability failed: no"]


def test_a_handler_that_raises_is_an_internal_error_and_one_log_line(workspace: Path):
    c = Client(
        workspace,
        "import ascend_lint.server.hover as h",
        "def broken(d): raise RuntimeError('hover exploded')",
        "h.hover_markdown = broken",
    )
    try:
        c.initialize()
        uri = c.open(workspace / "kern.py")
        (asc004,) = c.published(uri)["diagnostics"]
        position = {"textDocument": {"uri": uri}, "position": asc004["range"]["start"]}
        answer = c.request(2, "textDocument/hover", position)
        assert error_of(answer) == -32603
        assert "RuntimeError: hover exploded" in answer["error"]["message"]
        # a request without the fields it needs: the same, and the server goes on
        assert error_of(c.request(3, "textDocument/codeAction", {})) == -32603
        assert (
            c.request(
                4, "textDocument/hover", {**position, "position": {"line": 0, "character": 0}}
            )["result"]
            is None
        )
        assert c.end() == 0
        lines = c.stderr().splitlines()
        assert len(lines) == 2 and "internal error in textDocument/hover" in lines[0]
        assert "Traceback" not in "".join(lines)
    finally:
        c.close()


# -- documents: ranged changes, URIs ------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_ranged_changes_apply_in_the_negotiated_encoding(
    client: Client, workspace: Path, encoding: str
):
    client.initialize({"general": {"positionEncodings": [encoding]}})
    uri = client.open(workspace / "kern.py")
    assert codes(client.published(uri)) == ["ASC004"]
    line = KERNEL.splitlines()[ROW_ASC004]
    cut = ", num_warps=4"
    start = line.index(cut)

    def units(text: str) -> int:
        return {"utf-8": len(text.encode()), "utf-16": len(text.encode("utf-16-le")) // 2}.get(
            encoding, len(text)
        )

    where = {
        "start": {"line": ROW_ASC004, "character": units(line[:start])},
        "end": {"line": ROW_ASC004, "character": units(line[: start + len(cut)])},
    }
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [
                {"range": where, "text": ""},
                # then a line added at the end, past the last line
                {
                    "range": {
                        "start": {"line": 99, "character": 0},
                        "end": {"line": 99, "character": 0},
                    },
                    "text": "# done\n",
                },
            ],
        },
    )
    published = client.published(uri)
    assert published["version"] == 2 and codes(published) == []
    # another knob where the first was: found where the text now has it
    at = {"line": ROW_ASC004, "character": units(line[:start])}
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [{"range": {"start": at, "end": at}, "text": ", num_stages=2"}],
        },
    )
    (asc004,) = client.published(uri)["diagnostics"]
    begin = units(line[: start + 2])
    assert asc004["range"]["start"] == {"line": ROW_ASC004, "character": begin}
    assert asc004["range"]["end"] == {"line": ROW_ASC004, "character": begin + 12}
    assert client.end() == 0


def test_apply_change_counts_units_and_line_breaks_as_the_lsp_does():
    text = "a\U0001d465b\r\nc\u00e9d\re\nf"

    def at(line: int, character: int) -> dict:
        return {"line": line, "character": character}

    assert offset_of(text, at(0, 3), "utf-16") == 2  # after the astral letter's two units
    assert offset_of(text, at(0, 5), "utf-8") == 2
    assert offset_of(text, at(0, 2), "utf-32") == 2
    assert offset_of(text, at(0, 99), "utf-16") == 3  # past the end: the line's end, before \r\n
    assert offset_of(text, at(1, 2), "utf-16") == text.index("d")
    assert offset_of(text, at(1, 3), "utf-8") == text.index("d")
    assert offset_of(text, at(2, 0), "utf-8") == text.index("e")  # a lone \r breaks a line
    assert offset_of(text, at(3, 1), "utf-8") == len(text)
    assert offset_of(text, at(7, 0), "utf-8") == len(text)
    change = {"range": {"start": at(0, 1), "end": at(1, 1)}, "text": "X"}
    assert apply_change(text, change, "utf-16") == "aX\u00e9d\re\nf"
    assert apply_change(text, {"text": "whole"}, "utf-16") == "whole"


@pytest.mark.parametrize(
    ("uri", "windows", "path"),
    [
        ("file:///home/me/k.py", False, "/home/me/k.py"),
        ("file:///home/me/my%20kernels/k%C3%A9.py", False, "/home/me/my kernels/k\u00e9.py"),
        ("file://localhost/home/me/k.py", False, "/home/me/k.py"),
        ("file:///c%3A/Users/me/k%201.py", True, "C:\\Users\\me\\k 1.py"),  # VS Code
        ("file:///C:/Users/me/k.py", True, "C:\\Users\\me\\k.py"),
        ("file://server/share/k.py", True, "\\\\server\\share\\k.py"),  # UNC
        ("file://server/share/k.py", False, "//server/share/k.py"),
        ("untitled:Untitled-1", False, None),
        ("vscode-notebook-cell:/a.ipynb#1", True, None),
    ],
)
def test_file_uris_as_paths(uri: str, windows: bool, path: str | None):
    assert path_of_uri(uri, windows=windows) == path


def test_a_file_whose_path_is_percent_encoded_gets_its_projects_settings(
    client: Client, workspace: Path
):
    folder = workspace / "my kernels \u00e9\u6587"
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[tool.ascend-lint]\nignore = ["ASC004"]\n', "utf-8")
    client.initialize()
    uri = client.open(folder / "k #1.py")
    assert "%20" in uri and "%E6%96%87" in uri and "%23" in uri
    assert codes(client.published(uri)) == []  # the settings of that folder's project
    plain = client.open(workspace / "kern.py")
    assert codes(client.published(plain)) == ["ASC004"]
    assert client.end() == 0


@pytest.mark.parametrize("root", ["rootUri", "rootPath", "workspaceFolders"])
def test_an_untitled_buffer_gets_the_settings_of_the_workspace_root(
    workspace: Path, tmp_path_factory, root: str
):
    (workspace / "pyproject.toml").write_text('[tool.ascend-lint]\nignore = ["ASC004"]\n', "utf-8")
    elsewhere = tmp_path_factory.mktemp("elsewhere")  # the server's own folder: no settings
    c = Client(elsewhere)
    try:
        given = {
            "rootUri": {"rootUri": workspace.as_uri()},
            "rootPath": {"rootUri": None, "rootPath": str(workspace)},
            "workspaceFolders": {
                "rootUri": None,
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "w"}],
            },
        }[root]
        c.initialize(**given)
        uri = "untitled:Untitled-1"
        item = {"uri": uri, "languageId": "python", "version": 1, "text": KERNEL}
        c.notify("textDocument/didOpen", {"textDocument": item})
        assert codes(c.published(uri)) == []
        assert c.end() == 0
    finally:
        c.close()
