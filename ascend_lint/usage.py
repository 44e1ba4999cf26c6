"""Exit codes and the argument parser every command shares (Ruff's conventions)."""

from __future__ import annotations

import argparse
import sys

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageParser(argparse.ArgumentParser):
    """An argument parser whose usage errors exit 2, like Ruff's."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(EXIT_ERROR)
