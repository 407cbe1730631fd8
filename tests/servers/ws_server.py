"""The basic fixture server over websocket (the SDK serves none): one JSON-RPC message per text frame.

Run as `python tests/servers/ws_server.py --port N [--host 127.0.0.1]`; the endpoint is
`ws://HOST:N/ws` with the `mcp` subprotocol. Every connection gets its own server session
(both protocol eras, as over stdio). It also answers the handshake's request headers on
`/seen-headers` (JSON), so tests can check that none were sent.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

# Run as a script: put the repository root on the path to reach the basic fixture.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.servers.basic import build_server

SEEN: list[dict[str, str]] = []


async def endpoint(socket: WebSocket) -> None:
    SEEN.append(dict(socket.headers))
    await socket.accept(subprotocol="mcp")
    server = build_server(name="ws")._lowlevel_server  # pyright: ignore[reportPrivateUsage]
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def receive() -> None:
        async with read_writer:
            try:
                while True:
                    text = await socket.receive_text()
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
                    except ValueError as exc:
                        await read_writer.send(exc)
                        continue
                    await read_writer.send(SessionMessage(message))
            except WebSocketDisconnect:
                return

    async def send() -> None:
        async with write_reader:
            async for outgoing in write_reader:
                await socket.send_text(outgoing.message.model_dump_json(by_alias=True, exclude_unset=True))

    async with anyio.create_task_group() as tg:
        tg.start_soon(receive)
        tg.start_soon(send)
        await server.run(read_stream, write_stream, server.create_initialization_options())
        tg.cancel_scope.cancel()


async def seen_headers(request: Request) -> JSONResponse:
    del request
    return JSONResponse(SEEN)


def app() -> Starlette:
    return Starlette(routes=[WebSocketRoute("/ws", endpoint), Route("/seen-headers", seen_headers)])


def main(argv: Sequence[str] | None = None) -> None:
    from tests.servers._listen import serve

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--transport", default="websocket")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args: Any = parser.parse_args(argv)
    serve(app(), host=args.host, port=args.port, ws="websockets")


if __name__ == "__main__":
    main()
