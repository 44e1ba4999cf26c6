"""`ascend-lint server`: the linter as a Language Server Protocol server over stdio.

pygls and lsprotocol are an optional extra (`pip install "ascend-lint[server]"`), so
this package imports them only when the server starts.
"""

from __future__ import annotations

import sys

INSTALL_HINT = 'ascend-lint server needs pygls and lsprotocol: pip install "ascend-lint[server]"'


def main() -> int:
    try:
        from ascend_lint.server.server import serve
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] in ("pygls", "lsprotocol", "cattrs"):
            sys.stderr.write(f"error: {INSTALL_HINT}\n")
            return 2
        raise
    return serve()
