"""The texts of the documents the client has open, as it last sent them.

The server asks for full sync (each change is the whole text), but a client may send
ranged changes anyway: they are applied in the position encoding agreed at
`initialize`, with the LSP's line breaks (`\\n`, `\\r\\n`, `\\r`).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

from ascend_lint.server.positions import server_column
from ascend_lint.server.uris import path_of_uri

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class TextDocument:
    uri: str
    text: str
    version: int | None
    language_id: str | None


class Documents:
    def __init__(self) -> None:
        self._open: dict[str, TextDocument] = {}

    def __contains__(self, uri: str) -> bool:
        return uri in self._open

    def __iter__(self):
        return iter(list(self._open))

    def get(self, uri: str) -> TextDocument | None:
        return self._open.get(uri)

    def open(self, item: dict) -> None:
        """`didOpen`'s `textDocument` (a `TextDocumentItem`)."""
        uri = item["uri"]
        self._open[uri] = TextDocument(
            uri, item["text"], item.get("version"), item.get("languageId")
        )

    def change(self, params: dict, encoding: str) -> None:
        """`didChange`: each change in turn, each a whole text or a range's new text."""
        uri = params["textDocument"]["uri"]
        document = self._open.get(uri)
        if document is None:
            raise KeyError(f"{uri} changed but not open")
        text = document.text
        for change in params["contentChanges"]:
            text = apply_change(text, change, encoding)
        document.text = text
        document.version = params["textDocument"].get("version")

    def close(self, uri: str) -> None:
        self._open.pop(uri, None)


def unopened(uri: str) -> TextDocument:
    """A document the client asks about without having opened it: the file on disk
    (nothing, for a file that cannot be read or a URI that names none)."""
    path = path_of_uri(uri)
    text = ""
    if path is not None:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = Path(path).read_text("utf-8")
    return TextDocument(uri, text, None, None)


def apply_change(text: str, change: dict, encoding: str) -> str:
    """`text` after one `TextDocumentContentChangeEvent`."""
    where = change.get("range")
    if where is None:
        return change["text"]
    start = offset_of(text, where["start"], encoding)
    end = offset_of(text, where["end"], encoding)
    start, end = min(start, end), max(start, end)
    return text[:start] + change["text"] + text[end:]


def offset_of(text: str, position: dict, encoding: str) -> int:
    """The string index of an LSP position (0-based line, `encoding` units). A
    character past the end of its line means the line's end, a line past the last
    line the end of the text, as the LSP says."""
    line, units = position["line"], position["character"]
    start = 0
    if line > 0:
        for count, brk in enumerate(_LINE_BREAK.finditer(text), 1):
            if count == line:
                start = brk.end()
                break
        else:
            return len(text)
    brk = _LINE_BREAK.search(text, start)
    end = brk.start() if brk else len(text)
    return start + server_column(text[start:end], units, encoding)
