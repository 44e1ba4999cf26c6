"""Stopping a lint whose result nobody wants any more: the language server lints on a
worker thread, and an edit that arrives meanwhile replaces the text being linted. The
engine looks at the signal between two rules (a few milliseconds apart on a kernel),
so the lint of the new text need not wait for the whole lint of the old one. This
module is light on purpose: the server imports it before the engine is loaded."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class LintStopped(Exception):
    """A lint stopped between two rules because its caller no longer wants its result
    (`stop_when`): the editor's buffer changed while it ran."""


_signal = threading.local()


@contextlib.contextmanager
def stop_when(event: threading.Event) -> Iterator[None]:
    """Lints run on this thread inside the block stop (raise `LintStopped`) before their
    next rule once `event` is set."""
    _signal.event = event
    try:
        yield
    finally:
        _signal.event = None


def stop_signal() -> threading.Event | None:
    """The event that stops the lints of this thread, if any."""
    return getattr(_signal, "event", None)
