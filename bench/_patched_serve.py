"""A diagnostic for `gateway.py`, not mcpyard as shipped: `mcpyard ARGS...` with one change to how it serves.

    python bench/_patched_serve.py nodelay serve --transport http ...
    python bench/_patched_serve.py nodelay,schema serve --transport http ...
    python bench/_patched_serve.py pipes serve ...

- `nodelay`: TCP sockets made without a protocol number get IPPROTO_TCP. `gateway/_serve.py`
  `serve_http` binds `socket.socket(family, SOCK_STREAM)` (proto 0) and hands it to uvicorn;
  asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, so every accepted
  connection keeps Nagle's algorithm, and a response written in two parts waits for the
  client's delayed ACK (~40 ms a call). Only that proto changes.
- `schema`: the gateway's low-level server gets a `get_tool_input_schema` (a look-up in the
  shared tools). Without one, the SDK's new-era HTTP path (`_streamable_http_modern.py`
  `_mcp_param_rejection`) runs the gateway's whole `tools/list` handler before every
  `tools/call` that has arguments, to check `Mcp-Param-*` headers against the tool's schema.
- `pipes`: the SDK's `stdio_server()` (used by `gateway/_serve.py` `serve_stdio`) is given
  stdin and stdout read and written on the event loop (asyncio pipes) instead of through
  `anyio.wrap_file`, which sends every `readline`, `write` and `flush` to a worker thread.
  Everything else in `stdio_server` (framing, parsing, streams) is the SDK's own.

Run by `gateway.py --sides mcpyard-http-nodelay,mcpyard-http-nodelay-schema,mcpyard-stdio-pipes`
only, to show what those changes would be worth; `src/` is not touched.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


class _TcpSocket(socket.socket):
    def __init__(self, family: Any = -1, type: Any = -1, proto: int = -1, fileno: int | None = None) -> None:
        if fileno is None and family in (socket.AF_INET, socket.AF_INET6) and type == socket.SOCK_STREAM:
            proto = socket.IPPROTO_TCP if proto in (-1, 0) else proto
        super().__init__(family, type, proto, fileno)


class _LinesIn:
    """What `stdio_server` reads from (`async for line in stdin`), on an asyncio pipe."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _LinesIn:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _TextOut:
    """What `stdio_server` writes to (`write`, `flush`), on an asyncio pipe."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _patch_pipes() -> None:
    import mcp.server.stdio as sdk_stdio

    original = sdk_stdio.stdio_server

    @asynccontextmanager
    async def stdio_server(stdin: Any = None, stdout: Any = None) -> AsyncIterator[Any]:
        del stdin, stdout
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 30)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb", 0))
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(1), "wb", 0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        try:
            async with original(_LinesIn(reader), _TextOut(writer)) as streams:  # type: ignore[arg-type]
                yield streams
        finally:
            transport.close()

    sdk_stdio.stdio_server = stdio_server


def _patch_schema() -> None:
    from mcpyard.gateway import _server

    original_init = _server.Gateway.__init__

    def __init__(self: Any, host: Any, **options: Any) -> None:
        original_init(self, host, **options)

        def input_schema(name: str) -> Any:
            names = (
                self.public_names() if hasattr(self, "public_names") else {t.name: t.name for t in self.shared_tools()}
            )
            catalog = names.get(name)
            return next((dict(t.input_schema) for t in self.shared_tools() if t.name == catalog), None)

        self.server.get_tool_input_schema = input_schema

    _server.Gateway.__init__ = __init__  # type: ignore[method-assign]


def main() -> None:
    patches, *args = sys.argv[1:]
    for patch in patches.split(","):
        if patch == "nodelay":
            socket.socket = _TcpSocket  # type: ignore[misc]
        elif patch == "schema":
            _patch_schema()
        elif patch == "pipes":
            _patch_pipes()
        else:
            sys.exit(f"unknown patch {patch!r}: use nodelay, schema or pipes")
    from mcpyard.cli import console_main

    sys.argv = ["mcpyard", *args]
    console_main()


if __name__ == "__main__":
    main()
