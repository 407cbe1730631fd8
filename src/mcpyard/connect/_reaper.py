"""A watchdog process that stops every server group if the host dies without stopping them (CONN-5).

A host killed with SIGKILL runs no cleanup. The reaper is a tiny separate process in
its own session that learns each server's process group through a pipe; when the pipe
closes (the host exited or died) it sends SIGTERM, then SIGKILL, to every group the
host did not already stop itself.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys

__all__ = ["Reaper"]

_REAPER = """
import os, signal, sys, time
groups = set()
for line in sys.stdin:
    op, _, pgid = line.strip().partition(" ")
    if pgid.isdigit():
        (groups.add if op == "+" else groups.discard)(int(pgid))
def send(sig):
    for group in groups:
        try:
            os.killpg(group, sig)
        except OSError:
            pass
if groups:
    send(signal.SIGTERM)
    time.sleep(2)
    send(signal.SIGKILL)
"""


class Reaper:
    """Tracks server process groups in a watchdog process; a no-op where there are no process groups."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None

    def watch(self, pgid: int) -> None:
        """Kill this group should the host die before `forget(pgid)`."""
        self._send(f"+ {pgid}\n")

    def forget(self, pgid: int) -> None:
        """The host stopped this group itself."""
        self._send(f"- {pgid}\n")

    def close(self) -> None:
        """Let the reaper exit; groups still watched are stopped by it."""
        process, self._process = self._process, None
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)

    def _send(self, line: str) -> None:
        if sys.platform == "win32":  # pragma: no cover - job objects would be the tool there
            return
        if self._process is None:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _REAPER],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # Its own session: a Ctrl-C at the terminal must not take it down with the host.
                start_new_session=True,
            )
        assert self._process.stdin is not None
        with contextlib.suppress(OSError):
            self._process.stdin.write(line.encode())
            self._process.stdin.flush()
