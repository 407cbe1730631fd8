"""A scripted HTTP/1.1 server on 127.0.0.1 that records what reaches it, and a dialer that routes to it.

Transport tests need a server whose every byte they choose (a redirect, a body past a cap, an
event stream, silence) and that says which connections and requests it saw. `RoutedDialer`
stands in for the network between the guard and a public address: it connects a checked
address to one of these local servers, like a NAT would, and records every address it dials.
The guard's policy sees the public address the resolver gave; only the last hop is local.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import httpcore2
from anyio.abc import SocketAttribute
from anyio.streams.tls import TLSStream

from mcpyard.connect import TcpDialer

__all__ = ["Respond", "RoutedDialer", "Seen", "Send", "WireServer", "answer", "chunk", "wire_server"]

Send = Callable[[bytes], Awaitable[None]]


@dataclass(frozen=True)
class Seen:
    """One request as the server read it; header names in lower case."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


Respond = Callable[[Seen, Send], Awaitable[bool]]
"""Writes the whole answer to one request; returns whether the connection stays open for another."""


@dataclass
class WireServer:
    """What one server saw: its port, the connections it took, the requests it read, the names clients sent."""

    port: int = 0
    connections: int = 0
    requests: list[Seen] = field(default_factory=list)
    server_names: list[str | None] = field(default_factory=list)
    """The name each TLS client asked for (SNI)."""


def answer(status: int, body: bytes = b"", headers: Mapping[str, str] | None = None) -> bytes:
    """An HTTP/1.1 response with a Content-Length, unless `headers` give a Transfer-Encoding."""
    lines = [f"HTTP/1.1 {status} Scripted"]
    given = {name.lower(): value for name, value in (headers or {}).items()}
    if "transfer-encoding" not in given:
        given.setdefault("content-length", str(len(body)))
    lines += [f"{name}: {value}" for name, value in given.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body (`b""` ends the body)."""
    return f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n"


@asynccontextmanager
async def wire_server(
    respond: Respond, *, tls: Callable[[list[str | None]], ssl.SSLContext] | None = None
) -> AsyncIterator[WireServer]:
    """Serve `respond` on a free 127.0.0.1 port until the block ends.

    `tls` makes the server context from the list the names clients send are appended to.
    """
    server = WireServer()
    context = tls(server.server_names) if tls is not None else None
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    server.port = listener.extra(SocketAttribute.local_port)

    async def handle(stream: anyio.abc.ByteStream) -> None:
        server.connections += 1
        try:
            if context is not None:
                stream = await TLSStream.wrap(stream, server_side=True, ssl_context=context, standard_compatible=False)
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    buffer += await stream.receive()
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                method, target, _ = request_line.split(" ", 2)
                headers = {}
                for line in header_lines:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                while len(buffer) < length:
                    buffer += await stream.receive()
                body, buffer = buffer[:length], buffer[length:]
                seen = Seen(method, target, headers, body)
                server.requests.append(seen)
                if not await respond(seen, stream.send):
                    return
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, ssl.SSLError, OSError):
            return
        finally:
            await stream.aclose()

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()


class RoutedDialer:
    """Dials a checked address through a routing table to local ports, recording each address dialed."""

    def __init__(self, routes: Mapping[tuple[str, int], int]) -> None:
        self.routes = dict(routes)
        self.tcp = TcpDialer()
        self.dialed: list[tuple[str, int]] = []

    async def dial(self, address: str, port: int) -> httpcore2.AsyncNetworkStream:
        self.dialed.append((address, port))
        local = self.routes.get((address, port))
        if local is None:
            raise httpcore2.ConnectError(f"no route to {address}:{port} on this test network")
        return await self.tcp.dial("127.0.0.1", local)
