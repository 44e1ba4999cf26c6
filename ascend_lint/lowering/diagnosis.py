"""The compiler's own words, without the noise around them.

A rejection's raw text mixes the error with what only the compiler's authors can use:
LLVM stack dumps (``#12 0x5563... (triton-adapter-opt+0x1d489bb)``), the adapter's whole
command line (``Program arguments: ...``), Python traceback frames, and paths of the
machine the wheel was built on (``/root/agent_.../llvm-project/...``).  Left in, they
push the error out of any length limit: under a long checkout or venv path the
command line alone is thousands of characters.  ``distil`` keeps the error lines (and
the IR the adapter prints around them), ``reason`` picks the one line that says why,
the probable cause first.

Runs in the worker (``distil``, before the answer is sent) and in the test process
(``reason``, ``shown_path``); imports nothing from triton.
"""

from __future__ import annotations

import os
import re

HINT_PREFIX = "probable cause: "  # a cause the worker inferred (from the TTIR, the source)
PLATFORM_PREFIX = "platform switch: "  # a rejection caused by the host's import-time choice

# a message longer than this keeps its head and tail (the error is at one end of it)
KEEP_LINES = 40
_LLVM_FRAME = re.compile(r"^\s*#\d+\s+0x[0-9a-fA-F]+\b")
_PROGRAM_ARGUMENTS = re.compile(r"^\s*\d+\.\s+Program arguments:")
_PY_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')
_NOISE = ("Stack dump:", "PLEASE submit a bug report", "Traceback (most recent call last)")
# not after a quote: ``loc("/abs/kernel.py":L:C)`` names the user's source, kept whole
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~\"-])/(?:[\w.+~-]+/)+[\w.+~-]+")
_SOURCE_ROOTS = ("/llvm-project/", "/triton-ascend/", "/triton-adapter/", "/bishengir/")
_REPR_ERROR = re.compile(r"^(\w+(?:Error|Exception|Failure))\((['\"])(.*)\2\)$", re.DOTALL)
_LOC = re.compile(r'loc\("[^"]+":\d+:\d+\)|(?:/|\w:)?[^\s:"()]+\.py:\d+:\d+')


def distil(message: str) -> str:
    """The message without stack frames, command lines and build-machine paths; a long
    one keeps its first and last ``KEEP_LINES`` lines."""
    kept: list[str] = []
    after_py_frame = False
    for line in message.splitlines():
        stripped = line.strip()
        if after_py_frame:
            after_py_frame = False
            if line.startswith("    ") and not _PY_FRAME.match(line):
                continue  # the source line Python prints under a frame
        if _PY_FRAME.match(line):
            after_py_frame = True
            continue
        if (
            _LLVM_FRAME.match(line)
            or _PROGRAM_ARGUMENTS.match(line)
            or stripped.startswith(_NOISE)
            or (stripped and set(stripped) <= set("^~ "))  # Python 3.11 caret lines
        ):
            continue
        kept.append(_short_paths(line.rstrip()))
    while kept and not kept[-1].strip():
        kept.pop()
    if len(kept) > 2 * KEEP_LINES:
        left_out = len(kept) - 2 * KEEP_LINES
        kept = [*kept[:KEEP_LINES], f"... ({left_out} lines left out)", *kept[-KEEP_LINES:]]
    return "\n".join(kept)


def _short_paths(line: str) -> str:
    """Paths that exist only on the machine the compiler was built on, cut to their
    source-tree part (``llvm-project/llvm/...``) or their file name."""

    def shorten(m: re.Match) -> str:
        path = m.group(0)
        if os.path.exists(path):
            return path
        for root in _SOURCE_ROOTS:
            if root in path:
                return root[1:] + path.split(root, 1)[1]
        return os.path.basename(path)

    return _ABSOLUTE_PATH.sub(shorten, line)


# Rejections that are limits of the pinned front end, not defects of the kernel: later
# triton-ascend releases compile the same code. (needle in the message, what to say)
_VERSION_LIMITS = (
    (
        "'NotImplementedType' object has no attribute",
        "arithmetic on the result of a constexpr function (`tl.cdiv(A, B) + 1`) is a limit "
        "of this front end that later releases lift; compute it as `(A + B - 1) // B + 1` "
        "or on the host",
    ),
)


def front_end() -> str:
    """The compiler front end the gate runs, with its version: every verdict is this
    version's (`triton-ascend 3.2.0`)."""
    global _FRONT_END
    if _FRONT_END is None:
        from importlib import metadata

        try:
            _FRONT_END = f"triton-ascend {metadata.version('triton-ascend')}"
        except metadata.PackageNotFoundError:
            _FRONT_END = "triton-ascend (version unknown)"
    return _FRONT_END


_FRONT_END: str | None = None


def version_limit(message: str) -> str | None:
    """What to say when a rejection is a limit of this front-end version."""
    for needle, said in _VERSION_LIMITS:
        if needle in message:
            return said
    return None


def reason(message: str, stage: str) -> str:
    """One line that says why: a probable cause where one was found, else the
    compiler's first error, else the exception."""
    limit = version_limit(message)
    if limit is not None:
        return limit
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    for prefix in (PLATFORM_PREFIX, HINT_PREFIX):
        for ln in lines:
            if ln.startswith(prefix):
                cause = _LOC.sub("", ln[len(prefix) :]).strip(" :")
                return f"{prefix.rstrip(': ')}: {cause}" if prefix == PLATFORM_PREFIX else cause
    for i, ln in enumerate(lines):
        # llvm_unreachable prints its message on the line before
        if "UNREACHABLE executed" in ln and i > 0:
            return _LOC.sub("", lines[i - 1]).strip(" :")
    for ln in lines:
        if "Assertion `" in ln:
            return _assertion(ln)
    for needle in ("error:", "Error:", "UNREACHABLE", "LLVM ERROR", "Error(", "Exception"):
        for ln in lines:
            if needle in ln:
                return plain_error(_LOC.sub("", ln).strip(" :")) or ln
    for ln in lines:
        if not ln.startswith(("Traceback", "File ", "at ")):
            return ln
    return f"failed at stage {stage}"


def plain_error(text: str) -> str:
    """``AssertionError('x')`` (how triton's code generator quotes an exception) as
    ``AssertionError: x``."""
    m = _REPR_ERROR.match(text.strip())
    if not m:
        return text
    return f"{m.group(1)}: {m.group(3)}"


def _assertion(line: str) -> str:
    """``tool: llvm/Support/Casting.h:650: <signature>: Assertion `cond' failed.`` as
    ``Assertion `cond' failed (Casting.h:650)``."""
    at = line.index("Assertion `")
    where = re.search(r"([\w.+-]+\.(?:h|hpp|cpp|cc|td)):(\d+)", line[:at])
    text = line[at:].rstrip(".")
    return f"{text} ({where.group(1)}:{where.group(2)})" if where else text


def shown_path(path: str, root: str | None = None) -> str:
    """`path` as the gate and `ascend-lint compile` print it: relative to `root` (the
    working directory by default), unchanged where no relative path exists (another
    drive on Windows)."""
    try:
        return os.path.relpath(path, root)
    except ValueError:
        return path


def specialisation_text(record: dict) -> str:
    """``x: *fp32 (16-byte aligned), n: i32, BLOCK=32``: the runtime arguments as the
    key specialises them, then the constexprs; else the key itself."""
    signature = record.get("signature") or {}
    constants = record.get("constants") or {}
    if not signature and not constants:
        return record.get("key") or "(unknown)"
    parts = (
        [record["specialisation"]]
        if record.get("specialisation")
        else [f"{name}: {kind}" for name, kind in signature.items() if name not in constants]
    )
    parts += [f"{name}={value}" for name, value in constants.items() if name not in signature]
    return ", ".join(p for p in parts if p)
