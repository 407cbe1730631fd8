"""A lean HTTP/1.1 client for load: JSON requests over kept-alive connections, nothing else (as wrk would).

A benchmark of a service measures the service; a general client (httpx2 spends 1.5-2.4 ms of CPU
per request here, as much as a whole `Host.call`) would measure the client as much. This one
writes a request line, a few headers and a body, and reads a status line, headers and a body of
`Content-Length` bytes, or chunked: enough for the organization's JSON API and ContextForge's, which
answer with a length, and for an MCP endpoint's answer to one request as an event stream (read to
its end: the server ends the stream once it has answered). One connection per caller at a time,
kept for the next request if it comes within `IDLE_SECS`
(servers close idle connections: uvicorn after 5 s).
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["KeepAliveClient", "McpSession"]

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
        status, _, data = await self.exchange(method, path, payload)
        return status, json.loads(data) if data else None

    async def exchange(
        self, method: str, path: str, payload: Any = None, headers: str = ""
    ) -> tuple[int, dict[str, str], bytes]:
        """The status, the headers (names in lower case) and the body's bytes; `headers` (`Name: value\\r\\n`
        lines) are sent besides the client's own."""
        body = b"" if payload is None else json.dumps(payload).encode()
        head = f"{method} {path} HTTP/1.1\r\n{self._headers}{headers}Content-Length: {len(body)}\r\n\r\n".encode()
        stream, reader = await self._connection()
        try:
            await stream.send(head + body)
            status, answer = _head(await reader.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES))
            data = await _body(reader, status, answer)
        except BaseException:
            await stream.aclose()
            raise
        if answer.get("connection", "").lower() == "close":
            await stream.aclose()
        else:
            self._idle.append((stream, reader, time.monotonic()))
        return status, answer, data

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


def _head(raw: bytes) -> tuple[int, dict[str, str]]:
    """Status and headers (names in lower case) from a response's head; a body is framed by a length or chunked."""
    lines = raw.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    if "content-length" not in headers and headers.get("transfer-encoding", "").lower() != "chunked":
        raise RuntimeError(f"HTTP {status} with neither Content-Length nor chunks (this client reads no other framing)")
    return status, headers


async def _body(reader: BufferedByteReceiveStream, status: int, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return await _chunked(reader)
    length = int(headers.get("content-length", "0"))
    if length > MAX_BODY_BYTES:
        raise RuntimeError(f"HTTP {status} with a body of {length} bytes")
    return await reader.receive_exactly(length) if length else b""


async def _chunked(reader: BufferedByteReceiveStream) -> bytes:
    """A chunked body, to its last chunk."""
    body = bytearray()
    while True:
        size = int((await reader.receive_until(b"\r\n", 1024)).split(b";", 1)[0], 16)
        if size == 0:
            await reader.receive_until(b"\r\n", MAX_HEAD_BYTES)  # no trailers are sent: the empty line
            return bytes(body)
        if len(body) + size > MAX_BODY_BYTES:
            raise RuntimeError(f"a chunked body over {MAX_BODY_BYTES} bytes")
        body += await reader.receive_exactly(size)
        await reader.receive_exactly(2)


def _message(content_type: str, data: bytes) -> Any:
    """The JSON-RPC message of an MCP answer: the JSON body, or the last `data:` of an event stream."""
    if not content_type.startswith("text/event-stream"):
        return json.loads(data)
    found = None
    for line in data.decode().splitlines():
        if line.startswith("data:") and line[5:].strip():
            found = json.loads(line[5:])
    return found


class McpSession:
    """An MCP client over streamable HTTP made of `KeepAliveClient`: `initialize` once, then requests on the session
    (its `Mcp-Session-Id`, when the server gave one), each answered as JSON or as a short event stream."""

    def __init__(self, host: str, port: int, path: str, headers: dict[str, str]) -> None:
        accept = {"Accept": "application/json, text/event-stream", **headers}
        self._client = KeepAliveClient(host, port, accept)
        self._path = path
        self._session = ""
        self._ids = iter(range(1, 1 << 62))

    async def open(self, protocol: str = "2025-06-18") -> None:
        params = {"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        status, headers, data = await self._client.exchange("POST", self._path, request)
        if status != 200:
            raise RuntimeError(f"initialize: HTTP {status}: {data[:500]!r}")
        answer = _message(headers.get("content-type", ""), data)
        version = answer["result"]["protocolVersion"]
        session = headers.get("mcp-session-id")
        self._session = f"MCP-Protocol-Version: {version}\r\n" + (f"Mcp-Session-Id: {session}\r\n" if session else "")
        notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        status, _, data = await self._client.exchange("POST", self._path, notice, self._session)
        if status not in (200, 202):
            raise RuntimeError(f"notifications/initialized: HTTP {status}: {data[:500]!r}")

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """The JSON-RPC answer to one request (`result` or `error` inside)."""
        request = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        status, headers, data = await self._client.exchange("POST", self._path, request, self._session)
        if status != 200:
            raise RuntimeError(f"{method}: HTTP {status}: {data[:500]!r}")
        return _message(headers.get("content-type", ""), data)

    async def aclose(self) -> None:
        if "Mcp-Session-Id" in self._session:
            await self._client.exchange("DELETE", self._path, None, self._session)
        await self._client.aclose()
