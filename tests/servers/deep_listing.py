"""Fixture server that answers `tools/list` with a tool whose input schema nests `--depth` arrays (100,000).

`--call-depth N` makes its answer to `tools/call` nest N arrays too (else: `called`), and
`--banner` has it print a line that is not JSON before anything else, as some servers do.
`--flood` answers `tools/call` (over stdio) with a line that never ends: 65 MiB and no newline.
Run as `python tests/servers/deep_listing.py [--depth N]` (stdio), or with
`--transport streamable-http|sse --host H --port P` (JSON responses on `/mcp`; or events on
`/sse`, messages posted to `/messages`). It speaks
just enough raw JSON-RPC to get through the handshake: no SDK could even write such a
message, and no client can parse it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

METHOD_NOT_FOUND = -32601


def answer(message: dict[str, Any], depth: int, call_depth: int = 0) -> bytes | None:
    """The reply to one message, as bytes on one line; None for a notification."""
    if "id" not in message:
        return None
    method = message.get("method")
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": message.get("params", {}).get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deep-listing", "version": "1.0"},
        }
        return _reply(message["id"], result)
    if method == "tools/list":
        deep = "[" * depth + "]" * depth
        tool = f'{{"name":"deep","inputSchema":{{"type":"object","default":{deep}}}}}'
        return f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":{{"tools":[{tool}]}}}}'.encode()
    if method == "tools/call":
        nested = "[" * call_depth + "]" * call_depth
        text = '{"type":"text","text":"called"}'
        body = f'{{"content":[{text}],"structuredContent":{{"deep":{nested or "0"}}}}}'
        return f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":{body}}}'.encode()
    if method == "ping":
        return _reply(message["id"], {})
    error = {"code": METHOD_NOT_FOUND, "message": f"no method {method}"}
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode()


def _reply(request_id: Any, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


FLOOD_BYTES = 65 * 1024 * 1024


def serve_stdio(depth: int, call_depth: int, *, flood: bool = False) -> None:
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        message = json.loads(line)
        if flood and message.get("method") == "tools/call":
            chunk = b"x" * 1024 * 1024
            for _ in range(FLOOD_BYTES // len(chunk)):
                sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            continue
        reply = answer(message, depth, call_depth)
        if reply is not None:
            sys.stdout.buffer.write(reply + b"\n")
            sys.stdout.buffer.flush()


def app(depth: int) -> Starlette:
    async def mcp(request: Request) -> Response:
        if request.method != "POST":
            return Response(status_code=405)
        reply = answer(json.loads(await request.body()), depth)
        if reply is None:
            return Response(status_code=202)
        return Response(reply, media_type="application/json")

    # Legacy HTTP+SSE: one client at a time; replies to what it posts go out on its event stream.
    send, receive = anyio.create_memory_object_stream[bytes](16)

    async def events(request: Request) -> StreamingResponse:
        async def stream() -> AsyncIterator[bytes]:
            yield b"event: endpoint\ndata: /messages\n\n"
            async for reply in receive:
                yield b"event: message\ndata: " + reply + b"\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def messages(request: Request) -> Response:
        reply = answer(json.loads(await request.body()), depth)
        if reply is not None:
            await send.send(reply)
        return Response(status_code=202)

    return Starlette(
        routes=[
            Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
            Route("/sse", events, methods=["GET"]),
            Route("/messages", messages, methods=["POST"]),
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depth", type=int, default=100_000)
    parser.add_argument("--call-depth", type=int, default=0)
    parser.add_argument("--banner", action="store_true", help="print a line that is not JSON first")
    parser.add_argument("--flood", action="store_true", help="answer tools/call with a line that never ends")
    parser.add_argument("--transport", choices=["stdio", "streamable-http", "sse"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        if args.banner:
            print("deep-listing fixture starting (this line is not JSON)", flush=True)
        serve_stdio(args.depth, args.call_depth, flood=args.flood)
        return
    # Run as a script: put the repository root on the path to reach the shared helper.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    serve(app(args.depth), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
