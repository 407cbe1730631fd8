"""A lean HTTP/1.1 client for load: JSON requests over kept-alive connections, nothing else (as wrk would).

A benchmark of a service measures the service; a general client (httpx2 spends 1.5-2.4 ms of CPU
per request here, as much as a whole `Host.call`) would measure the client as much. This one
writes a request line, a few headers and a body, and reads a status line, headers and a body of
`Content-Length` bytes: enough for the organization's JSON API and ContextForge's, which answer
with a length. One connection per caller at a time, kept for the next request if it comes within `IDLE_SECS`
(servers close idle connections: uvicorn after 5 s).
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["KeepAliveClient"]

MAX_HEAD_BYTES = 65536
MAX_BODY_BYTES = 64 * 1024 * 1024
IDLE_SECS = 2.0


class KeepAliveClient:
    """JSON over HTTP/1.1 to one `host:port`, with the same headers on every request."""

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self._host, self._port = host, port
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self._headers = f"Host: {host}:{port}\r\n{lines}Content-Type: application/json\r\n"
        self._idle: list[tuple[SocketStream, BufferedByteReceiveStream, float]] = []

    async def request(self, method: str, path: str, payload: Any = None) -> tuple[int, Any]:
        """The status and the decoded JSON body (None when empty)."""
        body = b"" if payload is None else json.dumps(payload).encode()
        head = f"{method} {path} HTTP/1.1\r\n{self._headers}Content-Length: {len(body)}\r\n\r\n".encode()
        stream, reader = await self._connection()
        try:
            await stream.send(head + body)
            status, length, close = _head(await reader.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES))
            data = await reader.receive_exactly(length) if length else b""
        except BaseException:
            await stream.aclose()
            raise
        if close:
            await stream.aclose()
        else:
            self._idle.append((stream, reader, time.monotonic()))
        return status, json.loads(data) if data else None

    async def post(self, path: str, payload: Any) -> tuple[int, Any]:
        return await self.request("POST", path, payload)

    async def _connection(self) -> tuple[SocketStream, BufferedByteReceiveStream]:
        while self._idle:
            stream, reader, since = self._idle.pop()
            if time.monotonic() - since < IDLE_SECS:
                return stream, reader
            await stream.aclose()
        stream = await anyio.connect_tcp(self._host, self._port)
        return stream, BufferedByteReceiveStream(stream)

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for stream, _, _ in idle:
            await stream.aclose()


def _head(raw: bytes) -> tuple[int, int, bool]:
    """Status, body length and whether the server closes the connection, from a response's head."""
    lines = raw.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    if "content-length" not in headers:
        raise RuntimeError(f"HTTP {status} without Content-Length (this client reads no other framing)")
    length = int(headers["content-length"])
    if length > MAX_BODY_BYTES:
        raise RuntimeError(f"HTTP {status} with a body of {length} bytes")
    return status, length, headers.get("connection", "").lower() == "close"
