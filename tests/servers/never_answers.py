"""Fixture "server" that reads stdin and never writes a byte, so no handshake ever completes.

Run as `python tests/servers/never_answers.py [--linger] [--ignore-sigterm]`.
By default it exits quietly once stdin reaches end of file. `--linger` keeps it alive
after that (so only a signal ends it); `--ignore-sigterm` also ignores SIGTERM (so only
SIGKILL ends it).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    """Swallow stdin, then exit or linger as asked."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--linger", action="store_true", help="keep running after stdin closes")
    parser.add_argument("--ignore-sigterm", action="store_true", help="ignore SIGTERM")
    args = parser.parse_args(argv)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while sys.stdin.buffer.read(65536):
        pass
    while args.linger or args.ignore_sigterm:
        time.sleep(3600)  # the behaviour under test: a process that stays after its stdin closed


if __name__ == "__main__":
    main()
