"""JSON-RPC 2.0 over stdio, with the Language Server Protocol's base layer: framing,
dispatch, the lifecycle (`initialize` first, nothing but `exit` after `shutdown`),
`$/cancelRequest`, requests to the client, and errors as the LSP numbers them.

Messages are plain dicts of the protocol's JSON (camelCase keys), read and written by
the standard `json` module: no typed objects are built for a message, so an 800 KB
`didChange` costs one `json.loads`, and importing this module costs nothing measurable.

A thread reads stdin (blocking reads take any chunking of the stream, and work on
every platform's pipes, where asyncio's pipe reading does not) and hands each message
to the event loop, where handlers run and answers are written. A handler may be a function or a
coroutine function; a coroutine runs as a task of its own, so a long request does not
hold up the next one, and `$/cancelRequest` cancels it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import threading
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

log = logging.getLogger("ascend_lint.server")

# Error codes: JSON-RPC 2.0's, then the LSP's own.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800

Handler = Callable[[Any], Any]

# Where the lifecycle stands.
_WAITING, _RUNNING, _SHUT_DOWN = "waiting for initialize", "running", "shut down"
# Methods allowed whatever the lifecycle says.
_EXIT = "exit"
_CHARSETS = ("utf-8", "utf8")
_CHUNK = 1 << 20


class ResponseError(Exception):
    """A request's answer as an error: raise it from a handler to answer with `code`;
    a request to the client that the client answers with an error raises it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict:
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class _ParseFailure:
    """What the reader hands the loop for input that is not a message."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Connection:
    """One client on a pair of byte streams (the server's stdin and stdout).

    `on_closed(message)` is called on the loop when the client closed stdin, and at
    once when writing to it fails: the server leaves then (`shut_down` says whether
    cleanly)."""

    def __init__(
        self,
        reader: BinaryIO,
        writer: BinaryIO,
        on_closed: Callable[[str], None],
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_closed = on_closed
        self._requests: dict[str, Handler] = {}
        self._notifications: dict[str, Handler] = {}
        self._running: dict[Any, asyncio.Task] = {}  # id -> the task answering it
        self._cancelled: set[Any] = set()
        self._waiting: dict[int, asyncio.Future] = {}  # our requests to the client, by id
        self._last_id = 0
        self._state = _WAITING
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task] = set()

    # -- set up ------------------------------------------------------------------------

    def on_request(self, method: str, handler: Handler) -> None:
        self._requests[method] = handler

    def on_notification(self, method: str, handler: Handler) -> None:
        self._notifications[method] = handler

    @property
    def shut_down(self) -> bool:
        """`shutdown` was answered: `exit` leaves with code 0."""
        return self._state == _SHUT_DOWN

    def serve_forever(self) -> None:
        """Read and answer messages until `on_closed` (or a handler) ends the process."""
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        loop.set_exception_handler(_log_loop_error)
        threading.Thread(target=self._read_forever, name="ascend-lint-stdin", daemon=True).start()
        loop.run_forever()

    # -- to the client -----------------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> None:
        message: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request(self, method: str, params: Any = None) -> asyncio.Future:
        """Send a request to the client; the future is its result, or `ResponseError`."""
        self._last_id += 1
        message: dict = {"jsonrpc": "2.0", "id": self._last_id, "method": method}
        if params is not None:
            message["params"] = params
        future = asyncio.get_running_loop().create_future()
        self._waiting[self._last_id] = future
        self._send(message)
        return future

    def _respond(self, id_: Any, result: Any) -> None:
        self._send({"jsonrpc": "2.0", "id": id_, "result": result})

    def _respond_error(self, id_: Any, error: ResponseError) -> None:
        self._send({"jsonrpc": "2.0", "id": id_, "error": error.to_json()})

    def _send(self, message: dict) -> None:
        # ASCII JSON (non-ASCII escaped): valid UTF-8 whatever the text holds, lone
        # surrogates from a client's `\ud800` included.
        body = json.dumps(message, separators=(",", ":")).encode("ascii")
        self._write(b"Content-Length: %d\r\n\r\n" % len(body), body)

    def _write(self, header: bytes, body: bytes) -> None:
        try:
            self._writer.write(header)
            self._writer.write(body)
            self._writer.flush()
        except (OSError, ValueError):  # a broken pipe, or a stream closed under us
            self._on_closed("the client closed the connection; exiting")

    # -- from the client: reading ------------------------------------------------------

    def _read_forever(self) -> None:
        try:
            while True:
                message = self._read_message()
                if message is None:
                    break
                self._loop.call_soon_threadsafe(self._receive, message)
        except (OSError, ValueError):  # stdin closed or gone under us
            pass
        except Exception as exc:  # a bug here would leave a server that hears nothing
            log.error("reading from the client failed: %s: %s", type(exc).__name__, exc)
        with contextlib.suppress(RuntimeError):  # a closed loop: the process is leaving
            self._loop.call_soon_threadsafe(self._input_closed)

    def _read_message(self) -> dict | list | _ParseFailure | None:
        """The next message, a `_ParseFailure` for input that is not one, or None at the
        end of the input."""
        headers: dict[str, str] = {}
        while True:
            line = self._reader.readline()
            if not line:
                return None
            text = line.decode("ascii", "replace").rstrip("\r\n")
            if not text:
                if headers:
                    break
                continue  # blank lines between messages
            # A body sent without (or with a wrong) length runs into the next header:
            # the message starts again at that header.
            start = text.lower().find("content-length:")
            if start > 0:
                self._loop.call_soon_threadsafe(
                    self._receive, _ParseFailure(f"not a header: {text[:start][:80]!r}")
                )
                headers, text = {}, text[start:]
            name, colon, value = text.partition(":")
            if not colon:
                return _ParseFailure(f"not a header: {text[:80]!r}")
            headers[name.strip().lower()] = value.strip()
        length = headers.get("content-length", "")
        if not length.isdigit():
            return _ParseFailure(f"no valid Content-Length header ({length!r})")
        body = self._read_body(int(length))
        if body is None:
            return None  # the client left mid-message
        charset = _charset(headers.get("content-type"))
        if charset is not None and charset not in _CHARSETS:
            return _ParseFailure(f"unsupported charset {charset!r} (only utf-8 is)")
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return _ParseFailure(f"the body is not UTF-8 JSON: {exc}")

    def _read_body(self, length: int) -> bytes | None:
        """`length` bytes, read a chunk at a time: a wrong, huge length waits for input
        instead of allocating it all at once."""
        chunks, left = [], length
        while left:
            chunk = self._reader.read(min(left, _CHUNK))
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    # -- from the client: dispatch -----------------------------------------------------

    def _receive(self, message: dict | list | _ParseFailure) -> None:
        if isinstance(message, _ParseFailure):
            log.error("parse error: %s", message.reason)
            self._respond_error(None, ResponseError(PARSE_ERROR, message.reason))
            return
        if not isinstance(message, dict) or not _is_id(message.get("id")):
            # a batch (the LSP sends none), or an id that is neither a number nor a string
            log.error("invalid message: %.200s", json.dumps(message))
            self._respond_error(None, ResponseError(INVALID_REQUEST, "not a JSON-RPC message"))
            return
        method = message.get("method")
        if "id" in message and method is None:
            self._response(message)
        elif not isinstance(method, str):
            log.error("invalid message: %.200s", json.dumps(message))
            if "id" in message:
                self._respond_error(
                    message["id"], ResponseError(INVALID_REQUEST, "no method named")
                )
        elif "id" in message:
            self._request(message["id"], method, message.get("params"))
        else:
            self._notification(method, message.get("params"))

    def _response(self, message: dict) -> None:
        future = self._waiting.pop(message["id"], None)
        if future is None or future.done():
            return  # an answer to nothing we asked (or asked and gave up on)
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(
                ResponseError(
                    error.get("code", INTERNAL_ERROR),
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))

    def _request(self, id_: Any, method: str, params: Any) -> None:
        if self._state == _WAITING and method != "initialize":
            error = ResponseError(SERVER_NOT_INITIALIZED, f"{method} before initialize")
        elif self._state == _SHUT_DOWN:
            error = ResponseError(INVALID_REQUEST, f"{method} after shutdown")
        elif method == "initialize" and self._state != _WAITING:
            error = ResponseError(INVALID_REQUEST, "initialize was already received")
        elif method not in self._requests:
            error = ResponseError(METHOD_NOT_FOUND, f"unhandled method {method}")
        elif params is not None and not isinstance(params, (dict, list)):
            error = ResponseError(INVALID_PARAMS, "params must be an object or an array")
        else:
            self._call(id_, method, params)
            return
        self._respond_error(id_, error)

    def _call(self, id_: Any, method: str, params: Any) -> None:
        try:
            result = self._requests[method](params)
        except ResponseError as exc:
            self._respond_error(id_, exc)
            return
        except Exception as exc:  # a bug in a handler: its request fails, nothing else
            self._respond_error(id_, _internal_error(method, exc))
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._running[id_] = task
            # Answered from the task's end, however it ends: cancelled before it even
            # started (a cancel read with its request) too.
            task.add_done_callback(lambda done: self._finished(id_, method, done))
        else:
            self._answered(id_, method, result)

    def _finished(self, id_: Any, method: str, task: asyncio.Future) -> None:
        self._running.pop(id_, None)
        by_client = id_ in self._cancelled
        self._cancelled.discard(id_)
        if task.cancelled():
            if by_client:  # otherwise the loop is going away, and the process with it
                self._respond_error(id_, ResponseError(REQUEST_CANCELLED, f"{method} cancelled"))
            return
        exc = task.exception()
        if exc is None:
            self._answered(id_, method, task.result())
        elif isinstance(exc, ResponseError):
            self._respond_error(id_, exc)
        else:
            self._respond_error(id_, _internal_error(method, exc))

    def _answered(self, id_: Any, method: str, result: Any) -> None:
        try:
            self._respond(id_, result)
        except (TypeError, ValueError) as exc:  # a result that is not JSON: a bug
            self._respond_error(id_, _internal_error(method, exc))
            return
        if method == "initialize":
            self._state = _RUNNING
        elif method == "shutdown":
            self._state = _SHUT_DOWN

    def _notification(self, method: str, params: Any) -> None:
        if method == "$/cancelRequest":
            self._cancel(params)
            return
        if method != _EXIT and self._state != _RUNNING:
            return  # before `initialize` or after `shutdown`, as the LSP says: dropped
        handler = self._notifications.get(method)
        if handler is None:
            return  # `$/...` and any other notification the server has no use for
        try:
            result = handler(params)
            if inspect.isawaitable(result):
                self._spawn(self._notified_later(method, result))
        except Exception as exc:
            _internal_error(method, exc)  # logged; a notification has no one to answer

    async def _notified_later(self, method: str, pending: Awaitable) -> None:
        try:
            await pending
        except Exception as exc:
            _internal_error(method, exc)

    def _cancel(self, params: Any) -> None:
        id_ = params.get("id") if isinstance(params, dict) else None
        if not _is_id(id_):
            return
        task = self._running.get(id_)
        if task is not None and not task.done():
            self._cancelled.add(id_)
            task.cancel()

    def _spawn(self, coroutine) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _input_closed(self) -> None:
        self._on_closed(
            "the client closed the connection"
            + ("" if self.shut_down else " without `shutdown`")
            + "; exiting"
        )


def _is_id(value: object) -> bool:
    """A JSON-RPC id (or its absence): a number, a string or null."""
    return value is None or (isinstance(value, (int, float, str)) and not isinstance(value, bool))


def _log_loop_error(_loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """What escapes every handler (a bug): one line in the log, not a traceback."""
    exc = context.get("exception")
    detail = f": {type(exc).__name__}: {exc}" if exc is not None else ""
    log.error("%s%s", context.get("message", "error in the event loop"), detail)


def _charset(content_type: str | None) -> str | None:
    """The charset a `Content-Type` header names, lower-cased (None when it names none)."""
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"').lower()
    return None


def _internal_error(method: str, exc: BaseException) -> ResponseError:
    """A handler's exception as the answer and one log line: what failed, and where."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f" (in {last.name}, {last.filename.rsplit('/', 1)[-1]}:{last.lineno})"
    message = f"internal error in {method}: {type(exc).__name__}: {exc}{where}"
    log.error("%s", message)
    return ResponseError(INTERNAL_ERROR, message)
