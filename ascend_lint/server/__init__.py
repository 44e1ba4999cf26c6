"""`ascend-lint server`: the linter as a Language Server Protocol server over stdio.

The protocol is the package's own (`rpc`), so the server needs nothing beyond the
package; the `server` extra stays, empty, for `pip install "ascend-lint[server]"`.
"""

from __future__ import annotations


def main() -> int:
    from ascend_lint.server.server import serve

    return serve()
