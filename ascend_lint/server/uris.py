"""`file://` URIs as the client sends them, as paths of this machine.

RFC 8089 as editors write it: the path percent-encoded (UTF-8 for non-ASCII; VS Code
encodes a drive's colon too: `file:///c%3A/src/k.py`), a Windows drive letter after a
slash, a host for a UNC share (`file://server/share/k.py`). Any other scheme
(`untitled:`, `vscode-notebook-cell:`) names no file: None.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, unquote_to_bytes, urlsplit

_DRIVE = re.compile(r"^/?([A-Za-z]):(/|$)")


def path_of_uri(uri: str, windows: bool = os.name == "nt") -> str | None:
    """The local path a `file:` URI names (`windows`: as Windows spells paths)."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        return None
    host = "" if parts.netloc.lower() == "localhost" else parts.netloc
    if not windows:
        # File names are bytes here: undo the encoding byte for byte, as the OS decodes them.
        path = os.fsdecode(unquote_to_bytes(parts.path))
        return f"//{host}{path}" if host else path
    path = unquote(parts.path)
    drive = _DRIVE.match(path)
    if drive and not host:
        path = f"{drive.group(1).upper()}:/{path[drive.end() :]}"
    elif host:
        path = f"//{host}{path}"
    return path.replace("/", "\\")
