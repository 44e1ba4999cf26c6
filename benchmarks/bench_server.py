"""Edit-to-diagnostics latency of `ascend-lint server` on a ~44 KB kernel file, with the
command line on the same text through `--stdin-filename` as the peer, in one run.

    python benchmarks/bench_server.py [--edits 60] [--cli-runs 20] [--out benchmarks/RESULTS.md]

The file is the two shipped versions of the chunk output kernels one after the other
(`examples/gpu_habits/chunk_o.py`, then `reference_kernels/chunk_o.py`: 44 KB, 26
findings), in a fresh project folder. A pygls client starts the server over stdio as
an editor does and, for each edit, sends the whole new text (`didChange`) and waits:

* push: until `publishDiagnostics` for that version arrives (what an editor without
  pull support shows), for single edits and for the last change of a typing burst
  (which waits out the server's debounce, at its default);
* pull: for the answer to `textDocument/diagnostic` sent right after the change (what
  VS Code and Neovim 0.10+ do; no debounce on the server side).

Each edit changes one launch option's value, so every edit is a new text to lint and
the findings stay the same. Peers, on the same text: `ascend-lint check --no-cache
--stdin-filename ... -` as a new process per edit (what editor plugins that pipe a
buffer pay), and the engine's `lint_buffer` in-process (the floor: lint alone).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from results_file import write_section  # noqa: E402

SOURCES = ("examples/gpu_habits/chunk_o.py", "reference_kernels/chunk_o.py")
SECTION = "server"
RESULTS_TITLE = "# Linter speed and memory"
TIMEOUT = 30
BURST, BURST_GAP_S = 5, 0.02  # keystrokes of a typing burst, and the time between them


def kernel_text() -> str:
    return "\n\n".join((ROOT / s).read_text(encoding="utf-8") for s in SOURCES)


def edits(text: str, n: int) -> list[str]:
    """`n` texts, each one launch option away from the one before."""
    marker = "num_warps=4"
    assert marker in text, "the kernel file has no `num_warps=4` to edit"
    return [text.replace(marker, f"num_warps={4 + (i % 2) * 4}", 1) for i in range(1, n + 1)]


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return statistics.median(ordered) * 1000, p95 * 1000


async def server_latency(
    path: Path, texts: list[str], pull: bool, burst: int = 1, gap: float = 0.0
) -> tuple[list[float], int]:
    """Per edit (or per burst of `burst` edits `gap` seconds apart): seconds from the
    last change sent to its diagnostics received."""
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("ascend-lint-bench", "1")
    arrived: dict[int, float] = {}
    counts: dict[int, int] = {}
    event = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(params: types.PublishDiagnosticsParams) -> None:
        arrived[params.version] = time.perf_counter()
        counts[params.version] = len(params.diagnostics)
        event.set()

    await client.start_io(sys.executable, "-m", "ascend_lint", "server")
    text_caps = types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
        diagnostic=types.DiagnosticClientCapabilities() if pull else None,
    )
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(text_document=text_caps),
            root_uri=path.parent.as_uri(),
        )
    )
    client.initialized(types.InitializedParams())
    uri = path.as_uri()
    doc = types.TextDocumentIdentifier(uri=uri)

    async def wait_for(version: int) -> None:
        while version not in arrived:
            event.clear()
            await asyncio.wait_for(event.wait(), TIMEOUT)

    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=texts[0])
        )
    )
    if pull:
        first = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=doc)
        )
        findings = len(first.items)
    else:
        await wait_for(1)
        findings = counts[1]
    samples = []
    for version, text in enumerate(texts[1:], start=2):
        if (version - 2) % burst:
            await asyncio.sleep(gap)  # the next keystroke of a burst
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        if (version - 1) % burst:
            continue  # not the burst's last keystroke
        if pull:
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=doc)
            )
            samples.append(time.perf_counter() - sent)
            assert len(report.items) == findings
        else:
            await wait_for(version)
            samples.append(arrived[version] - sent)
            assert counts[version] == findings
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return samples, findings


def cli_latency(path: Path, texts: list[str]) -> tuple[list[float], int]:
    samples, found = [], 0
    command = [sys.executable, "-m", "ascend_lint", "check", "--no-cache"]
    command += ["--output-format", "json", "--stdin-filename", str(path), "-"]
    for text in texts:
        started = time.perf_counter()
        done = subprocess.run(
            command,
            input=text.encode(),
            capture_output=True,
            cwd=path.parent,
            check=False,
        )
        samples.append(time.perf_counter() - started)
        assert done.returncode == 1, done.stderr.decode()
        found = done.stdout.count(b'"code":')
    return samples, found


def engine_latency(path: Path, texts: list[str]) -> list[float]:
    from ascend_lint.engine import lint_buffer
    from ascend_lint.settings import load_settings

    samples = []
    for text in texts:
        started = time.perf_counter()
        settings = load_settings(None, path)
        lint_buffer(str(path), text.encode(), settings)
        samples.append(time.perf_counter() - started)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=60, help="edits timed per mode")
    parser.add_argument("--cli-runs", type=int, default=20, help="command-line runs timed")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    args = parser.parse_args()

    from ascend_lint import __version__
    from ascend_lint.server.config import DEFAULT_DEBOUNCE_MS

    load_before = os.getloadavg()[0]
    base = kernel_text()
    texts = [base, *edits(base, args.edits)]
    with tempfile.TemporaryDirectory(prefix="ascend-lint-bench-server-") as tmp:
        folder = Path(tmp)
        (folder / "pyproject.toml").write_text("[project]\nname = 'bench'\n", encoding="utf-8")
        path = folder / "chunk_o_both.py"
        path.write_text(base, encoding="utf-8")
        size = len(base.encode())
        push, found_push = asyncio.run(server_latency(path, texts, pull=False))
        typing, _ = asyncio.run(
            server_latency(path, texts, pull=False, burst=BURST, gap=BURST_GAP_S)
        )
        pull, found_pull = asyncio.run(server_latency(path, texts, pull=True))
        cli, found_cli = cli_latency(path, texts[1 : args.cli_runs + 1])
        engine = engine_latency(path, texts[1 : args.cli_runs + 1])
    assert found_push == found_pull == found_cli, (found_push, found_pull, found_cli)

    rows = [
        ("server, push (`publishDiagnostics`)", push),
        ("server, pull (`textDocument/diagnostic`)", pull),
        (
            f"server, push after typing ({BURST} changes {BURST_GAP_S * 1000:.0f} ms apart; "
            "from the last)",
            typing,
        ),
        ("CLI, `check --stdin-filename` (new process per edit)", cli),
        ("engine `lint_buffer`, in-process (floor)", engine),
    ]
    cli_median = statistics.median(cli)
    lines = [
        "## Editor: `ascend-lint server` edit-to-diagnostics latency",
        "",
        f"`python benchmarks/bench_server.py --edits {args.edits} --cli-runs {args.cli_runs}`, "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; ascend-lint "
        f"{__version__}, Python {platform.python_version()}, pygls {metadata.version('pygls')}, "
        f"lsprotocol {metadata.version('lsprotocol')}; {os.cpu_count()} cores "
        f"({platform.machine()}) shared with other work, load average {load_before:.1f} "
        f"before and {os.getloadavg()[0]:.1f} after the run.",
        "",
        f"One {size / 1000:.1f} KB file ({' + '.join(f'`{s}`' for s in SOURCES)}), "
        f"{found_push} findings on every edit; each edit sends the whole text and waits "
        "for its diagnostics. A change after a pause is linted at once; changes that "
        f"follow one another within the debounce ({DEFAULT_DEBOUNCE_MS} ms, the default) "
        "are linted once they pause, so the typing row includes that wait.",
        "",
        "| path | runs | median ms | p95 ms | vs CLI (median) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, samples in rows:
        median, p95 = summary(samples)
        ratio = cli_median / statistics.median(samples)
        lines.append(f"| {name} | {len(samples)} | {median:.1f} | {p95:.1f} | {ratio:.2f}x |")
    body = "\n".join(lines)
    print(body)
    write_section(args.out, SECTION, body, title=RESULTS_TITLE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
