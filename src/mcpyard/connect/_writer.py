"""A session's write end on a byte pipe: each message serialized and written by the task that sends it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from mcp.shared.message import SessionMessage

__all__ = ["MessageWriter"]


class MessageWriter:
    """A session's write end on a byte pipe: each message serialized and written at once, one per line.

    Written from the sending task itself, with no relay task between: one task switch less per
    message. A lock keeps concurrent senders' messages whole and in order; taken when free, it
    does not yield to the event loop first (anyio's default would, once per message).
    """

    def __init__(
        self,
        write: Callable[[bytes], Awaitable[None]],
        on_broken: Callable[[], Awaitable[None]],
        on_sent: Callable[[SessionMessage], None] | None = None,
    ) -> None:
        self._write = write
        self._on_broken = on_broken
        self._on_sent = on_sent
        """Told of each message the session sends (the fast path learns its `_meta` from it)."""
        self._lock = anyio.Lock(fast_acquire=True)
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._on_sent is not None:
            self._on_sent(item)
        await self.send_line(item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")

    async def send_line(self, data: bytes) -> None:
        """Write one message already serialized (`data` ends with its newline)."""
        if self._closed:
            raise anyio.ClosedResourceError
        async with self._lock:
            try:
                await self._write(data)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                # The peer is gone: let the session see the end.
                await self._on_broken()
                raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> MessageWriter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
