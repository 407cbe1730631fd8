"""The watchdog process that leaves no server process behind, even if the host dies (CONN-5).

A host killed with SIGKILL runs no cleanup, and a server's helper may leave the server's
process group (`setsid`, a double-forked daemon), so the group is not enough. The reaper
is a small separate process in a session of its own (`_reaper_program.py`), started with
the first server and talking to the host over a Unix socket:

- on Linux it starts each stdio server under a keeper, a child subreaper that stops every
  descendant of its server when the host is done with it or dies (`spawn`);
- elsewhere the host starts servers itself and the reaper only learns their process
  groups, to stop them should the host die without doing so (`watch`, `forget`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from mcpyard.connect import _reaper_program as program
from mcpyard.connect._kept import KeptProcess

__all__ = ["Reaper"]

_PROGRAM = Path(program.__file__)
_SEND_TIMEOUT = 5.0
"""A reaper that takes no request for this long is taken for dead and replaced."""
_CLOSE_WAIT = 5.0


class Reaper:
    """The host's watchdog process; a no-op where there are no process groups (Windows)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None

    @property
    def spawns(self) -> bool:
        """Whether servers are started through `spawn` here (Linux: keepers are subreapers)."""
        return sys.platform.startswith("linux")

    async def spawn(
        self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str, stderr: bool = True
    ) -> KeptProcess | None:
        """Start a server under a keeper; None if the reaper process cannot be reached.

        Without `stderr`, what it writes there goes to /dev/null.

        Raises:
            OSError: the server itself could not be started (command not found, bad `cwd`…).
        """
        host_end, keeper_end = socket.socketpair()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe() if stderr else (-1, os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC))
        request = {"op": "spawn", "argv": list(argv), "env": dict(env), "cwd": cwd}
        try:
            sent = self._request(request, [keeper_end.fileno(), stdin_r, stdout_w, stderr_w])
        finally:
            # The keeper has its own copies now; ours would keep the pipes from ever ending.
            keeper_end.close()
            for fd in (stdin_r, stdout_w, stderr_w):
                os.close(fd)
        process = KeptProcess(host_end, stdin_w, stdout_r, stderr_r if stderr else None, command=argv[0], cwd=cwd)
        if not sent:
            process.close()
            return None
        try:
            await process.started()
        except BaseException:
            process.close()  # a keeper that started the server anyway stops it on seeing this
            raise
        return process

    @contextlib.asynccontextmanager
    async def tree(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> AsyncIterator[anyio.abc.Process]:
        """A process (a pre_call hook) under a keeper; leaving the block SIGKILLs it and all it started.

        Its stderr goes to /dev/null.

        Raises:
            OSError: it could not be started, or there is no reaper to start it here.
        """
        process = await self.spawn(argv, env=env, cwd=os.fspath(cwd), stderr=False) if self.spawns else None
        if process is None:
            raise OSError("no reaper process to start it under")
        try:
            yield process
        finally:
            with anyio.CancelScope(shield=True):
                process.kill_tree()
                await process.stop(program.TERM_GRACE + program.KILL_LIMIT + 1)
                process.close()

    def watch(self, pgid: int) -> None:
        """Kill this group should the host die before `forget(pgid)`."""
        self._request({"op": "watch", "pgid": pgid})

    def forget(self, pgid: int) -> None:
        """The host stopped this group itself."""
        self._request({"op": "forget", "pgid": pgid})

    def close(self) -> None:
        """Let the reaper exit; whatever it still watches or keeps is stopped by it."""
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
        process, self._process = self._process, None
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_CLOSE_WAIT)

    def _request(self, request: dict[str, Any], fds: Sequence[int] = ()) -> bool:
        """Send one request (a new reaper replaces a dead one); False if none can be reached."""
        if sys.platform == "win32":  # pragma: no cover - job objects would be the tool there
            return False
        header, body = program.encode_request(request)
        for _ in range(2):
            try:
                channel = self._channel or self._start()
                # One header with the descriptors, then the body: the reaper reads them in order.
                socket.send_fds(channel, [header], list(fds))
                channel.sendall(body)
            except OSError:
                self._discard()
                continue
            return True
        return False

    def _start(self) -> socket.socket:
        host_end, reaper_end = socket.socketpair()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", os.fspath(_PROGRAM), str(reaper_end.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=[reaper_end.fileno()],
                # Its own session: a Ctrl-C at the terminal must not take it down with the host.
                start_new_session=True,
            )
        except BaseException:
            host_end.close()
            raise
        finally:
            reaper_end.close()
        host_end.settimeout(_SEND_TIMEOUT)
        self._channel = host_end
        return host_end

    def _discard(self) -> None:
        """Forget a reaper that no longer takes requests (it ends when it sees its socket close)."""
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
        process, self._process = self._process, None
        if process is not None:
            with contextlib.suppress(OSError):
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_CLOSE_WAIT)
