"""`ascend-lint server` next to `ruff server` in the same run, driven over stdio by one
JSON-RPC client the way an editor drives them.

    python benchmarks/bench_server.py [--runs 5] [--edits 40] [--cli-runs 10] \
        [--out benchmarks/RESULTS.md]

What is timed, for both servers on the same files in one fresh project folder:

* initialize: from starting the process to the answer to `initialize`;
* first diagnostics: from `didOpen` (sent right after `initialized`) of the ~50 KB file
  to its `publishDiagnostics`;
* edit to diagnostics on the ~50 KB file (`benchmarks/bigfile.py` builds it from the
  shipped GPU-habit examples): each edit changes one launch option's value and sends
  the whole text, then waits for `publishDiagnostics` of that version (push) or for the
  answer to `textDocument/diagnostic` sent right after it (pull; what VS Code and
  Neovim with refresh support do); a typing row sends bursts of 5 changes 20 ms apart
  and times the last;
* first diagnostics of the ~818 KB file: from `didOpen` to its `publishDiagnostics`,
  the first time and then for copies of it opened as other files;
* codeAction on a flagged line of the ~818 KB file, as Neovim's
  `vim.lsp.buf.code_action()` sends it from column 1: an empty range at the start of
  the line, the line's diagnostics in the context, no `only`;
* a hover sent 50 ms after `codeAction` with `only: ["source.fixAll"]` on the 818 KB
  file (fix on save): how long the hover took, and how long the fix-all took;
* memory: the server's resident set after the 818 KB file's diagnostics arrived.

Ruff lints with `select = ["E", "F", "B", "UP"]` (a usual project's choice) and
ascend-lint with its defaults. Peers for edit to diagnostics: `ascend-lint check
--stdin-filename` as a new process per edit, and in-process: the session's `lint_buffer` of
the whole text, and the server's own lint of each edit from the lint before it
(incremental, the floor of a pushed or pulled answer).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from bench_lint import installed_layout  # noqa: E402
from bigfile import build_big_source  # noqa: E402
from results_file import write_section  # noqa: E402

SECTION = "server"
RESULTS_TITLE = "# Linter speed and memory"
TIMEOUT = 120
SMALL_BYTES, BIG_BYTES = 50_000, 818_000
BURST, BURST_GAP_S = 5, 0.02  # keystrokes of a typing burst, and the time between them
HOVER_DELAY_S = 0.05
RUFF_TABLE = '[tool.ruff.lint]\nselect = ["E", "F", "B", "UP"]\n'


def server_commands() -> dict[str, list[str]]:
    commands = {"ascend-lint": [sys.executable, "-m", "ascend_lint", "server"]}
    ruff = shutil.which("ruff")
    if ruff is not None:
        commands["ruff"] = [ruff, "server"]
    return commands


def edits(text: str, n: int) -> list[str]:
    """`n` texts, each one launch option away from the one before and none the same as
    an earlier one (a server may answer a text it linted already from that lint): the
    first launch's `num_warps=4` counts up (the module docstring names the option too;
    that is not the edit)."""
    launch = re.search(r"^[ \t]+num_warps=4\b", text, re.M)
    assert launch is not None, "the kernel file has no launch with `num_warps=4` to edit"
    at = launch.end() - 1
    return [text[:at] + str(4 + i) + text[at + 1 :] for i in range(1, n + 1)]


def ms(samples: list[float]) -> tuple[float, float]:
    """(median, p95) in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return statistics.median(ordered) * 1000, p95 * 1000


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Session:
    """One server process and a minimal JSON-RPC client that drives it: plain dicts,
    no protocol library, so both servers' messages are read the same way (and pygls'
    client cannot read Ruff's notebook capabilities anyway)."""

    def __init__(self, command: list[str], folder: Path, pull: bool = False) -> None:
        self.command, self.folder, self.pull = command, folder, pull
        self.arrived: dict[tuple[str, int], float] = {}
        self.published: dict[tuple[str, int], list] = {}
        self.event = asyncio.Event()
        self.answers: dict[int, asyncio.Future] = {}
        self.next_id = 0
        self.versions: dict[str, int] = {}  # the last version sent, per document

    async def start(self) -> float:
        """Start the server; seconds from spawning it to the answer to `initialize`."""
        started = time.perf_counter()
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            cwd=self.folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.reader = asyncio.ensure_future(self._read())
        text_document = {
            "publishDiagnostics": {"versionSupport": True},
            "codeAction": {
                "codeActionLiteralSupport": {
                    "codeActionKind": {"valueSet": ["", "quickfix", "source", "source.fixAll"]}
                },
                "resolveSupport": {"properties": ["edit"]},
                "dataSupport": True,
                "isPreferredSupport": True,
            },
            "hover": {"contentFormat": ["markdown", "plaintext"]},
        }
        if self.pull:
            text_document["diagnostic"] = {"dynamicRegistration": False}
        capabilities = {
            "textDocument": text_document,
            "workspace": {"configuration": True, "diagnostics": {"refreshSupport": True}},
            "general": {"positionEncodings": ["utf-16"]},
        }
        uri = self.folder.as_uri()
        await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "bench"}],
                "capabilities": capabilities,
            },
        )
        took = time.perf_counter() - started
        self.notify("initialized", {})
        return took

    @property
    def pid(self) -> int:
        return self.process.pid

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params) -> None:
        self._send({"method": method, "params": params})

    async def request(self, method: str, params):
        self.next_id += 1
        answer = self.answers[self.next_id] = asyncio.get_running_loop().create_future()
        self._send({"id": self.next_id, "method": method, "params": params})
        return await asyncio.wait_for(answer, TIMEOUT)

    async def _read(self) -> None:
        out = self.process.stdout
        while True:
            length = 0
            while True:
                line = await out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(await out.readexactly(length))
            self._received(message, time.perf_counter())

    def _received(self, message: dict, at: float) -> None:
        if "method" not in message:  # an answer
            answer = self.answers.pop(message.get("id"), None)
            if answer is not None and not answer.done():
                if "error" in message:
                    answer.set_exception(RuntimeError(message["error"]))
                else:
                    answer.set_result(message.get("result"))
            return
        if message["method"] == "textDocument/publishDiagnostics":
            params = message["params"]
            version = params.get("version")  # a server may leave it out
            key = (
                params["uri"],
                version if version is not None else self.versions.get(params["uri"]),
            )
            self.arrived.setdefault(key, at)
            self.published[key] = params["diagnostics"]
            self.event.set()
        if "id" in message:  # a request of the server: configuration, registration, ...
            items = message.get("params", {}).get("items")
            result = (
                [None for _ in items] if message["method"] == "workspace/configuration" else None
            )
            self._send({"id": message["id"], "result": result})

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        return uri

    def change(self, uri: str, version: int, text: str) -> None:
        self.versions[uri] = version
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    async def diagnostics(self, uri: str, version: int) -> list:
        """This version's diagnostics: pulled, or waited for until published."""
        if self.pull:
            report = await self.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            return list(report.get("items", []))
        while (uri, version) not in self.arrived:
            self.event.clear()
            await asyncio.wait_for(self.event.wait(), TIMEOUT)
        return list(self.published[(uri, version)])

    async def code_action(self, uri: str, r: dict, context: list, only: list[str] | None = None):
        ctx: dict = {"diagnostics": context, "triggerKind": 1}
        if only is not None:
            ctx["only"] = only
        params = {"textDocument": {"uri": uri}, "range": r, "context": ctx}
        return await self.request("textDocument/codeAction", params)

    async def hover(self, uri: str, position: dict):
        return await self.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": position}
        )

    async def stop(self) -> None:
        await self.request("shutdown", None)
        self.notify("exit", None)
        await asyncio.wait_for(self.process.wait(), TIMEOUT)
        self.reader.cancel()


async def startup(command: list[str], folder: Path, small: Path, text: str, runs: int):
    """(initialize seconds, first-diagnostics seconds) per run, each in a new process."""
    init, first = [], []
    for _ in range(runs):
        session = Session(command, folder)
        init.append(await session.start())
        sent = time.perf_counter()
        uri = session.open(small, text)
        await session.diagnostics(uri, 1)
        first.append(session.arrived[(uri, 1)] - sent)
        await session.stop()
    return init, first


async def edit_latency(
    command: list[str], folder: Path, path: Path, texts: list[str], pull: bool, burst: int = 1
) -> list[float]:
    session = Session(command, folder, pull=pull)
    await session.start()
    uri = session.open(path, texts[0])
    await session.diagnostics(uri, 1)
    samples = []
    for version, text in enumerate(texts[1:], start=2):
        if (version - 2) % burst:
            await asyncio.sleep(BURST_GAP_S)  # the next keystroke of a burst
        sent = time.perf_counter()
        session.change(uri, version, text)
        if (version - 1) % burst:
            continue  # not the burst's last keystroke
        await session.diagnostics(uri, version)
        done = time.perf_counter() if pull else session.arrived[(uri, version)]
        samples.append(done - sent)
    await session.stop()
    return samples


async def big_file(command: list[str], folder: Path, path: Path, text: str, runs: int) -> dict:
    """codeAction on a flagged line, a hover behind a fix-all, memory: one session."""
    session = Session(command, folder)
    await session.start()
    sent = time.perf_counter()
    uri = session.open(path, text)
    found = await session.diagnostics(uri, 1)
    opened = [time.perf_counter() - sent]
    memory = rss_mb(session.pid)
    rows = sorted({d["range"]["start"]["line"] for d in found})
    picks = [rows[i * len(rows) // runs] for i in range(runs)] if rows else []
    actions, quick = [], 0
    for row in picks:
        line = [d for d in found if d["range"]["start"]["line"] == row]
        start = {"line": row, "character": 0}
        sent = time.perf_counter()
        result = await session.code_action(uri, {"start": start, "end": start}, line)
        actions.append(time.perf_counter() - sent)
        quick = max(quick, sum(1 for a in result or [] if a.get("kind") == "quickfix"))
    hovers, fixes = [], []
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    for i in range(runs):
        # A fresh version each time, so that no fix-all is reused from the last one.
        session.change(uri, i + 2, text + "\n" * (i + 1))
        found = await session.diagnostics(uri, i + 2)
        at = found[len(found) // 2]["range"]["start"]
        sent = time.perf_counter()
        fix_all = asyncio.ensure_future(session.code_action(uri, whole, [], ["source.fixAll"]))
        await asyncio.sleep(HOVER_DELAY_S)
        asked = time.perf_counter()
        await session.hover(uri, at)
        hovers.append(time.perf_counter() - asked)
        await fix_all
        fixes.append(time.perf_counter() - sent)
    for i in range(1, runs):  # the same text as other files: each one's first lint
        copy = path.with_name(f"{path.stem}_copy{i}.py")
        copy.write_text(text, encoding="utf-8")
        sent = time.perf_counter()
        await session.diagnostics(session.open(copy, text), 1)
        opened.append(time.perf_counter() - sent)
    await session.stop()
    return {
        "open": opened,
        "findings": len(found),
        "code_action": actions,
        "quick_fixes": quick,
        "hover": hovers,
        "fix_all": fixes,
        "rss_mb": memory,
    }


def cli_latency(path: Path, texts: list[str]) -> list[float]:
    samples = []
    command = [sys.executable, "-m", "ascend_lint", "check", "--no-cache"]
    command += ["--output-format", "json", "--stdin-filename", str(path), "-"]
    for text in texts:
        started = time.perf_counter()
        done = subprocess.run(command, input=text.encode(), capture_output=True, cwd=path.parent)
        samples.append(time.perf_counter() - started)
        assert done.returncode == 1, done.stderr.decode()
    return samples


def engine_latency(path: Path, texts: list[str]) -> tuple[list[float], list[float]]:
    """In-process lints of each text: whole (`session.lint_buffer`) and incremental from the
    lint of the text before it (what the server does on an edit)."""
    from ascend_lint.server.buffers import lint_text
    from ascend_lint.server.config import SettingsResolver
    from ascend_lint.session import lint_buffer

    resolved = SettingsResolver().for_path(path)
    whole, incremental = [], []
    previous = lint_text(str(path), texts[0], 0, resolved)
    for version, text in enumerate(texts[1:], start=1):
        started = time.perf_counter()
        lint_buffer(str(path), text.encode(), resolved.settings)
        whole.append(time.perf_counter() - started)
        started = time.perf_counter()
        previous = lint_text(str(path), text, version, resolved, previous)
        incremental.append(time.perf_counter() - started)
    return whole, incremental


def cell(samples: list[float]) -> str:
    if not samples:
        return "n/a"
    median, p95 = ms(samples)
    return f"{median:.1f} / {p95:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="starts, code actions, hovers")
    parser.add_argument("--edits", type=int, default=40, help="edits timed per mode")
    parser.add_argument("--cli-runs", type=int, default=10, help="command-line runs timed")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    args = parser.parse_args()

    from ascend_lint import __version__
    from ascend_lint.server.config import DEFAULT_DEBOUNCE_MS

    load_before = os.getloadavg()[0]
    small_text, big_text = build_big_source(SMALL_BYTES), build_big_source(BIG_BYTES)
    texts = [small_text, *edits(small_text, args.edits)]
    commands = server_commands()
    results: dict[str, dict] = {name: {} for name in commands}
    with (
        tempfile.TemporaryDirectory(prefix="ascend-lint-bench-server-") as tmp,
        tempfile.TemporaryDirectory(prefix="ascend-lint-stage-") as stage,
    ):
        folder = Path(tmp)
        # The server and the command-line peer as `pip install` lays the linter out, its
        # bytecode compiled (else each start would compile the linter's modules first);
        # the processes started below inherit this environment.
        staged = installed_layout(ROOT, Path(stage) / "linter")
        os.environ.update(PYTHONPATH=str(staged), PYTHONSAFEPATH="1")
        (folder / "pyproject.toml").write_text(
            f"[project]\nname = 'bench'\n\n{RUFF_TABLE}", encoding="utf-8"
        )
        small, big = folder / "kernels_50k.py", folder / "kernels_818k.py"
        small.write_text(small_text, encoding="utf-8")
        big.write_text(big_text, encoding="utf-8")
        for name, command in commands.items():
            r = results[name]
            r["initialize"], r["first"] = asyncio.run(
                startup(command, folder, small, small_text, args.runs)
            )
            r["push"] = asyncio.run(edit_latency(command, folder, small, texts, pull=False))
            r["pull"] = asyncio.run(edit_latency(command, folder, small, texts, pull=True))
            r["typing"] = asyncio.run(
                edit_latency(command, folder, small, texts, pull=False, burst=BURST)
            )
            r.update(asyncio.run(big_file(command, folder, big, big_text, args.runs)))
        cli = cli_latency(small, texts[1 : args.cli_runs + 1])
        engine, incremental = engine_latency(small, texts[: args.cli_runs + 1])

    names = list(commands)
    ruff_version = (
        subprocess.run(["ruff", "--version"], capture_output=True, text=True).stdout.strip()
        if "ruff" in commands
        else "ruff not installed"
    )
    header = "| median / p95 ms | " + " | ".join(f"`{n} server`" for n in names) + " |"
    rule = "| --- |" + " ---: |" * len(names)
    rows = [
        ("initialize (process start to answer)", "initialize"),
        ("first diagnostics after `didOpen`, 50 KB", "first"),
        ("edit to diagnostics, 50 KB, push", "push"),
        ("edit to diagnostics, 50 KB, pull", "pull"),
        (f"edit to diagnostics, 50 KB, push after typing ({BURST} changes)", "typing"),
        ("first diagnostics after `didOpen`, 818 KB", "open"),
        ("codeAction from column 1 of a flagged line, 818 KB", "code_action"),
        (f"hover sent {HOVER_DELAY_S * 1000:.0f} ms into a fix-all, 818 KB", "hover"),
        ("fix-all (`only: source.fixAll`), 818 KB", "fix_all"),
    ]
    lines = [
        "## Editor: `ascend-lint server` next to `ruff server`",
        "",
        f"`python benchmarks/bench_server.py --runs {args.runs} --edits {args.edits} "
        f"--cli-runs {args.cli_runs}`, "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; ascend-lint "
        f"{__version__} (its own JSON-RPC/LSP layer), {ruff_version}, Python "
        f"{platform.python_version()}; "
        f"{os.cpu_count()} cores ({platform.machine()}) shared with other work, load average "
        f"{load_before:.1f} before and {os.getloadavg()[0]:.1f} after the run.",
        "",
        f"Files built by `benchmarks/bigfile.py`: {len(small_text.encode()) / 1000:.1f} KB and "
        f"{len(big_text.encode()) / 1000:.1f} KB. ascend-lint with its defaults, Ruff with "
        '`select = ["E", "F", "B", "UP"]`; findings on the big file: '
        + ", ".join(f"{n} {results[n]['findings']}" for n in names)
        + ". Quick fixes offered for the flagged line (most of the runs): "
        + ", ".join(f"{n} {results[n]['quick_fixes']}" for n in names)
        + ". Each edit changes one launch option to a value not used before and sends the "
        f"whole text; ascend-lint with its default `debounceMs` ({DEFAULT_DEBOUNCE_MS}): a "
        "change is linted at once, a change that arrives during a lint stops it before its "
        "next rule, and the newest text is linted then.",
        "",
        header,
        rule,
    ]
    for title, key in rows:
        lines.append(f"| {title} | " + " | ".join(cell(results[n][key]) for n in names) + " |")
    lines.append(
        "| resident memory with the 818 KB file open, MB | "
        + " | ".join(f"{results[n]['rss_mb']:.0f}" for n in names)
        + " |"
    )
    lines += [
        "",
        "Peers of the edit-to-diagnostics rows, on the same 50 KB texts: "
        f"`ascend-lint check --stdin-filename` as a new process per edit {cell(cli)} ms, "
        f"in-process, the session's `lint_buffer` of the whole text {cell(engine)} ms and the "
        f"server's incremental lint of each edit (the floor) {cell(incremental)} ms.",
    ]
    body = "\n".join(lines)
    print(body)
    write_section(args.out, SECTION, body, title=RESULTS_TITLE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
