"""The fast path of a face's streamable HTTP front: a client's repeated tool calls answered on parsed JSON.

An ASGI app in front of the SDK's: a `POST` to the MCP path whose body is one `tools/call` the
fast path takes (`_fast.py`: its `_meta` as on a call the SDK's app served, from the same
requester) is run through the same pipeline and answered with one JSON response; every other
request, and every body it does not take, goes to the SDK's app unchanged (the body handed on
as it was read).

The answer is one JSON body; when a server sends a log message the client takes before the
result, the answer becomes an SSE stream carrying it and then the result, as the SDK's app
answers. A requester is the path and the set of headers the SDK's checks read: the bearer token, the
session, the protocol version, `Host` and `Origin` (its DNS-rebinding guard), `Accept` and
`Content-Type`, and whether the routing headers are there. Only a request whose headers are all the same as
those of a request the SDK's app accepted is taken; its `Mcp-Method` and `Mcp-Name` must also
agree with its body (else the SDK refuses it), and a request with any other `Mcp-` header (a
parameter a tool mirrors into headers) is the SDK's. A `DELETE` of a session forgets it. A
client that disconnects cancels its call, as on the SDK's path.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Hashable, Mapping
from typing import Any

import anyio
from mcp.server import ServerRequestContext
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpyard import ops
from mcpyard.gateway._fast import Face, FastPath

__all__ = ["FastHttp"]

MAX_BODY_BYTES = 1024 * 1024
"""A larger body is handed to the SDK's app (it holds no small call)."""
_KEYED = ("authorization", "mcp-session-id", "mcp-protocol-version", "host", "origin", "accept", "content-type")
_ROUTING = ("mcp-method", "mcp-name")
_STREAM_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
]
_KNOWN_MCP = frozenset({b"mcp-session-id", b"mcp-protocol-version", b"mcp-method", b"mcp-name"})


def _requester(path: str, headers: Mapping[str, str]) -> Hashable:
    """The path, the headers the SDK's checks read (the session second), and whether the routing headers are there."""
    return (path, *(headers.get(name) for name in _KEYED), *(name in headers for name in _ROUTING))


def _requester_of(ctx: ServerRequestContext[Any]) -> Hashable:
    request = ctx.request
    return _requester(request.scope["path"], request.headers) if isinstance(request, Request) else None


class _Reply:
    """The response to one call: one JSON body, or, once a log message comes first, an SSE stream (as the SDK's app
    answers a call that sends something before its result)."""

    def __init__(self, send: Send, session: str | None) -> None:
        self._send = send
        self._session = [(b"mcp-session-id", session.encode("latin-1"))] if session else []
        self._streaming = False

    async def log(self, notice: bytes) -> None:
        if not self._streaming:
            self._streaming = True
            headers = [*_STREAM_HEADERS, *self._session]
            await self._send({"type": "http.response.start", "status": 200, "headers": headers})
        await self._event(notice, more=True)

    async def finish(self, answer: bytes) -> None:
        if self._streaming:
            await self._event(answer, more=False)
            return
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
        await self._send({"type": "http.response.start", "status": 200, "headers": [*headers, *self._session]})
        await self._send({"type": "http.response.body", "body": answer})

    async def abandon(self) -> None:
        """The client left: end what was started."""
        if self._streaming:
            with contextlib.suppress(Exception):  # the connection may be gone already
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _event(self, data: bytes, *, more: bool) -> None:
        body = b"event: message\r\ndata: " + data + b"\r\n\r\n"
        await self._send({"type": "http.response.body", "body": body, "more_body": more})


class FastHttp:
    """The fast path in front of the SDK's streamable HTTP app at `path`."""

    def __init__(self, app: ASGIApp, face: Face, path: str | None) -> None:
        self._app = app
        self._path = path
        """Where MCP is served (None: wherever this app is mounted)."""
        self.fast = FastPath(face, _requester_of)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or (self._path is not None and scope["path"] != self._path)
            or scope["method"] not in ("POST", "DELETE")
        ):
            await self._app(scope, receive, send)
            return
        raw: list[tuple[bytes, bytes]] = scope["headers"]
        if any(name.startswith(b"mcp-") and name not in _KNOWN_MCP for name, _ in raw):
            await self._app(scope, receive, send)
            return
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in raw}
        requester = _requester(scope["path"], headers)
        if scope["method"] == "DELETE":
            if session := headers.get("mcp-session-id"):
                self.fast.forget(lambda requester: isinstance(requester, tuple) and requester[2] == session)
            await self._app(scope, receive, send)
            return
        body, more = await _read_body(receive)
        if (
            not more
            and b'"tools/call"' in body
            and await self._answered(scope, body, headers, requester, receive, send)
        ):
            return
        await self._app(scope, _replaying(body, more, receive), send)

    async def _answered(
        self,
        scope: Scope,
        body: bytes,
        headers: Mapping[str, str],
        requester: Hashable,
        receive: Receive,
        send: Send,
    ) -> bool:
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):
            return False
        taken = self.fast.accept(value, requester, request=Request(scope, receive))
        if taken is None:
            return False
        if headers.get("mcp-method", "tools/call") != "tools/call" or headers.get("mcp-name", taken.offered) != (
            taken.offered
        ):
            return False  # the SDK's app refuses the mismatch
        reply = _Reply(send, headers.get("mcp-session-id"))
        answer: bytes | None = None
        async with anyio.create_task_group() as tg:

            async def until_disconnected() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()  # the client left: its call is cancelled, as on the SDK's path

            tg.start_soon(until_disconnected)
            answer = await self.fast.answer(taken, reply.log)
            tg.cancel_scope.cancel()
        if answer is None:
            await reply.abandon()
            return True
        ops.count_fast_call()
        await reply.finish(answer.rstrip(b"\n"))
        return True


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request's body up to `MAX_BODY_BYTES`, and whether more is left to read."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False
        if size > MAX_BODY_BYTES:
            return b"".join(chunks), True


def _replaying(body: bytes, more: bool, receive: Receive) -> Receive:
    """`receive` with what was read of the body given first."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return replay
