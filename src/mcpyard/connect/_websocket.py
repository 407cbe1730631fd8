"""A websocket transport for the SDK's `Client` (it has none): one JSON-RPC message per text frame (CONN-1).

Messages are parsed and written with the SDK's own models, as on every other transport.
No headers are sent over websocket (AUTH-1); proxies from the environment are not used.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

__all__ = ["MAX_FRAME_BYTES", "SUBPROTOCOL", "websocket_transport"]

SUBPROTOCOL = "mcp"
MAX_FRAME_BYTES = 64 * 1024 * 1024


@contextlib.asynccontextmanager
async def websocket_transport(url: str, *, open_timeout: float) -> AsyncIterator[TransportStreams]:
    """Connect to `ws://` or `wss://` with the `mcp` subprotocol and exchange messages until the block ends."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed
    from websockets.typing import Subprotocol

    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    async with connect(
        url,
        subprotocols=[Subprotocol(SUBPROTOCOL)],
        proxy=None,
        open_timeout=open_timeout,
        max_size=MAX_FRAME_BYTES,
        compression=None,
    ) as socket:

        async def receive() -> None:
            async with read_writer:
                with contextlib.suppress(ConnectionClosed, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    async for frame in socket:
                        try:
                            message = types.jsonrpc_message_adapter.validate_json(frame, by_name=False)
                        except ValueError as exc:
                            await read_writer.send(exc)
                            continue
                        await read_writer.send(SessionMessage(message))

        async def send() -> None:
            async with write_reader:
                with contextlib.suppress(ConnectionClosed, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    async for outgoing in write_reader:
                        await socket.send(outgoing.message.model_dump_json(by_alias=True, exclude_unset=True))

        async with anyio.create_task_group() as tg:
            tg.start_soon(receive)
            tg.start_soon(send)
            try:
                yield read_stream, write_stream
            finally:
                await write_stream.aclose()
                await read_stream.aclose()
                tg.cancel_scope.cancel()
