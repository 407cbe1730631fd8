"""A stdio server's messages read by the event loop itself: no reader task between the pipe and the session.

The loop watches the pipe once for the connection's whole life (no registration per read),
and the callback that runs when it is readable splits lines and parses messages straight
into a small queue the SDK's session reads from: one task wake-up per message fewer than a
reader task handing each message on through a memory stream. asyncio only (uvloop too);
elsewhere the transport keeps its reader task.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Callable
from types import TracebackType

import anyio
from mcp.shared.message import SessionMessage

from mcpyard.connect._errors import MessageTooLong

__all__ = ["PipeMessages", "on_asyncio"]

_CHUNK = 65536
_READS_PER_WAKE = 16
"""At most this many full reads (1 MiB) each time the pipe is readable, then other work gets its turn."""
_HIGH_WATER = 32
"""Messages read ahead of the session at most; then the pipe is left unread until it catches up."""

Message = SessionMessage | Exception
Deliver = Callable[[], None]
"""Something taken off the pipe for another reader (`take_line`'s), handed over in the line's turn."""


def on_asyncio() -> bool:
    """Whether this runs on asyncio (uvloop too), where the loop's own callbacks are used; not under trio."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class PipeMessages:
    """The read side of a session over one pipe (the SDK's `ReadStream` of messages).

    `take_line(line)` turns one line into a message, a `Deliver` (a line another reader takes: called once every
    message before it was received, so a call's answer never overtakes what the server sent before it), a
    malformed one (an `Exception`, which the
    session reports) or None for stray output. A line that grows past `max_line_bytes` ends the
    stream with `MessageTooLong`, which the session reports like a malformed message.
    """

    def __init__(
        self,
        fd: int,
        *,
        take_line: Callable[[bytes], Message | Deliver | None],
        max_line_bytes: int,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._on_end = on_end
        self._fd = fd
        self._take_line = take_line
        self._max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._ready: deque[Message | Deliver] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        """No more messages will come: end of file, a read error, a flood, or closed."""
        self._closed = False
        self._watching = False
        self._watch()

    def _watch(self) -> None:
        if not self._watching and not self._ended:
            self._loop.add_reader(self._fd, self._on_readable)
            self._watching = True

    def _unwatch(self) -> None:
        if self._watching:
            self._watching = False
            self._loop.remove_reader(self._fd)

    def _on_readable(self) -> None:
        buffer = self._buffer
        start = len(buffer)
        for _ in range(_READS_PER_WAKE):
            try:
                data = os.read(self._fd, _CHUNK)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:
                self._take(start)
                self._end()
                return
            buffer += data
            if len(data) < _CHUNK:
                break  # the pipe is empty now: no read that would only say so
        self._take(start)
        if len(buffer) > self._max_line_bytes:
            buffer.clear()
            self._ready.append(MessageTooLong(self._max_line_bytes))
            self._end()

    def _take(self, start: int) -> None:
        """Every whole line in the buffer (a line end at or after `start`) as a message."""
        buffer = self._buffer
        end = buffer.find(b"\n", start)
        if end == -1:
            return
        begin = 0
        view = memoryview(buffer)
        try:
            while end != -1:
                message = self._take_line(bytes(view[begin:end]))  # one copy, however long the line
                if callable(message) and not self._ready:
                    message()  # nothing before it is left to receive
                elif message is not None:
                    self._ready.append(message)
                begin = end + 1
                end = buffer.find(b"\n", begin)
        finally:
            view.release()
        del buffer[:begin]
        if len(self._ready) >= _HIGH_WATER:
            self._unwatch()
        if self._ready:  # lines all delivered to other readers leave the session asleep
            self._wake()

    def _end(self) -> None:
        self._unwatch()
        if not self._ended and self._on_end is not None:
            self._on_end()
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self) -> Message:
        while True:
            while not self._ready:
                if self._closed:
                    raise anyio.ClosedResourceError
                if self._ended:
                    raise anyio.EndOfStream
                waiter = self._waiter = self._loop.create_future()
                try:
                    await waiter
                finally:
                    self._waiter = None
            message = self._ready.popleft()
            if not self._watching and len(self._ready) < _HIGH_WATER // 2:
                self._watch()
            if not callable(message):
                return message
            message()  # its turn: every message before it was received

    def close(self) -> None:
        """Stop watching the pipe (before its descriptor is closed: the number may be reused)."""
        self._closed = True
        self._end()

    async def aclose(self) -> None:
        self.close()

    def __aiter__(self) -> PipeMessages:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> PipeMessages:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
