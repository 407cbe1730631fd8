"""A stdio server started by a keeper in the reaper process, seen from the host (CONN-5).

The host keeps the server's pipes itself, so messages go straight between host and
server as with a child of its own: the keeper only starts the server, reports its pid and
exit code over a socket, and stops every process of it when asked or when the host dies.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections import deque

import anyio
import anyio.abc
import anyio.lowlevel

__all__ = ["FdReceiveStream", "FdSendStream", "KeptProcess"]

_CHUNK = 65536
_UNKNOWN_EXIT = 255
"""The exit code of a server whose keeper was killed before it could tell (as asyncio reports an unknown one)."""


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _close_fd(fd: int) -> None:
    # Wake any task waiting on it first: a closed descriptor's number may be reused at once.
    anyio.notify_closing(fd)
    with contextlib.suppress(OSError):
        os.close(fd)


class FdReceiveStream(anyio.abc.ByteReceiveStream):
    """The read end of a pipe, read directly: one `read` per chunk, a wait only when it is empty."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd

    def fileno(self) -> int:
        """The pipe's descriptor (-1 once closed)."""
        return self._fd

    async def receive(self, max_bytes: int = _CHUNK) -> bytes:
        await anyio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._fd < 0:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            return data

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            _close_fd(fd)

    async def aclose(self) -> None:
        self.close()
        await anyio.lowlevel.checkpoint()


class FdSendStream(anyio.abc.ByteSendStream):
    """The write end of a pipe, written directly.

    What a cancelled `send` left unwritten stays queued and goes out first on the next one,
    so a message is never cut in half (as with asyncio's own write buffer).
    """

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._queue: deque[memoryview] = deque()

    async def send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        if self._fd < 0:
            raise anyio.ClosedResourceError
        self._queue.append(memoryview(item))
        while self._queue:
            if self._fd < 0:
                raise anyio.ClosedResourceError
            view = self._queue[0]
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except OSError as exc:
                self._queue.clear()
                raise anyio.BrokenResourceError from exc
            if written == len(view):
                self._queue.popleft()
            else:
                self._queue[0] = view[written:]

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        self._queue.clear()
        if fd >= 0:
            _close_fd(fd)

    async def aclose(self) -> None:
        self.close()
        await anyio.lowlevel.checkpoint()


class KeptProcess(anyio.abc.Process):
    """A server process whose parent is a keeper: its pipes, and what the keeper says of it.

    The keeper writes `pid N` (or `error ERRNO STEP`), then `exit CODE`, and closes its socket once
    no process of the server is left; shutting the host's side for writing asks it to stop
    them all (SIGTERM, 2 s, SIGKILL; 0.25 s for 2 s after `hurry`), and `kill` to SIGKILL them at once.
    """

    def __init__(
        self, control: socket.socket, stdin: int, stdout: int, stderr: int | None, *, command: str, cwd: str
    ) -> None:
        control.setblocking(False)
        self._control = control
        self._command = command
        self._cwd = cwd
        self._heard = b""
        self._pid: int | None = None
        self._error: OSError | None = None
        self._returncode: int | None = None
        self._ended = False
        self._stdin = FdSendStream(stdin)
        self._stdout = FdReceiveStream(stdout)
        self._stderr = FdReceiveStream(stderr) if stderr is not None else None

    # ----------------------------------------------------------------- what the keeper says

    def _listen(self) -> None:
        """Take in what the keeper said so far, without waiting."""
        while not self._ended:
            try:
                data = self._control.recv(4096)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._ended = True
                return
            self._heard += data
            while b"\n" in self._heard:
                line, _, self._heard = self._heard.partition(b"\n")
                self._take(line)

    def _take(self, line: bytes) -> None:
        words = line.decode("ascii", "replace").split()
        if len(words) < 2 or not words[1].lstrip("-").isdigit():
            return
        kind, number, values = words[0], int(words[1]), words[1:]
        if kind == "pid":
            self._pid = number
        elif kind == "exit" and self._returncode is None:
            self._returncode = number
        elif kind == "error":
            # The same error a spawn of our own would raise, naming what could not be used.
            filename = self._cwd if values[1:] == ["cwd"] else self._command
            self._error = OSError(number, os.strerror(number), filename) if number else OSError(filename)

    async def _hear_more(self) -> None:
        await anyio.wait_readable(self._control)
        self._listen()

    async def started(self) -> None:
        """Wait for the keeper to say the server runs.

        Raises:
            OSError: the server could not be started (the same error a spawn of its own raises).
        """
        self._listen()
        while self._pid is None:
            if self._error is not None:
                raise self._error
            if self._ended:
                raise OSError("the reaper process ended before the server started")
            await self._hear_more()

    async def stop(self, limit: float) -> bool:
        """Have the keeper stop every process of the server (SIGTERM, 2 s, SIGKILL); wait up to `limit`.

        Returns whether the keeper said none is left.
        """
        with contextlib.suppress(OSError):
            self._control.shutdown(socket.SHUT_WR)
        self._listen()
        with anyio.move_on_after(limit):
            while not self._ended:
                await self._hear_more()
        return self._ended

    def hurry(self) -> None:
        """Have the keeper wait only a short while after its SIGTERM when it stops them (the host was interrupted)."""
        with contextlib.suppress(OSError):
            self._control.send(b"hurry\n")

    def kill_tree(self) -> None:
        """Have the keeper SIGKILL every process of the server now."""
        with contextlib.suppress(OSError):
            self._control.send(b"kill\n")

    def close(self) -> None:
        """Close the pipes and the keeper's socket; a keeper still running stops what is left."""
        for stream in (self._stdin, self._stdout, self._stderr):
            if stream is not None:
                stream.close()
        if self._control.fileno() >= 0:
            anyio.notify_closing(self._control)
            self._control.close()

    # ----------------------------------------------------------------- anyio.abc.Process

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.stop(10.0)
            self.close()

    async def wait(self) -> int:
        while True:
            self._listen()
            if self._returncode is not None:
                return self._returncode
            if self._ended:
                # The keeper is gone without a word (it was killed): the exit code is lost.
                return _UNKNOWN_EXIT
            await self._hear_more()

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def send_signal(self, sig: int) -> None:
        # Only while the keeper has not reaped it: after that the pid may belong to someone else.
        if self.returncode is None and self._pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._pid, sig)

    @property
    def pid(self) -> int:
        if self._pid is None:
            raise RuntimeError("the server has not started yet")
        return self._pid

    @property
    def returncode(self) -> int | None:
        self._listen()
        if self._returncode is None and self._ended and self._pid is not None and not _exists(self._pid):
            # The keeper was killed before it could say: the reaper adopted and ended the server.
            self._returncode = _UNKNOWN_EXIT
        return self._returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stderr
