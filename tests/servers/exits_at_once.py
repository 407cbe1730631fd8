"""Fixture "server" that writes an error to stderr and exits with code 3 before any handshake.

Run as `python tests/servers/exits_at_once.py`.
"""

from __future__ import annotations

import sys

EXIT_CODE = 3
STDERR_LINES = (
    "starting fixture database server",
    "loading configuration from defaults",
    "fatal: cannot open database /nonexistent/db.sqlite",
)


def main() -> None:
    """Print the error lines to stderr and exit."""
    for line in STDERR_LINES:
        print(line, file=sys.stderr)
    sys.exit(EXIT_CODE)


if __name__ == "__main__":
    main()
