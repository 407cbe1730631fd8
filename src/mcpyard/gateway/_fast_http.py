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
parameter a tool mirrors into headers), or with any header given twice, is the SDK's. A body is read
as the SDK's app reads it for the request's era (handshake era: pydantic's parser, which refuses lone
surrogates and deep nesting; new era: Python's). A `DELETE` of a session forgets it. A handshake-era
`notifications/cancelled` of a taken call cancels it, which is then answered `Request cancelled` on an
event stream, as the SDK's app answers; the new era's SDK entry acts on no posted notification, and nor
does this. A client that disconnects cancels its call, as on the SDK's path
(noticed once the call has run `WATCH_AFTER_SECS`: most calls end sooner, and watching costs a
task).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any, NamedTuple

import anyio
import anyio.abc
import mcp_types as types
import pydantic_core
from mcp.server import ServerRequestContext
from mcp.server.streamable_http import REQUEST_CANCELLED
from mcp.shared.dispatcher import coerce_request_id
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpyard import ops
from mcpyard.gateway._fast import Face, FastPath, cancelled_call, error_answer

__all__ = ["FastHttp"]

MAX_BODY_BYTES = 1024 * 1024
"""A larger body is handed to the SDK's app (it holds no small call)."""
PING_SECS = 15.0
"""A call that runs longer has its answer turned into an event stream, a ping sent this often (as the SDK does)."""
WATCH_AFTER_SECS = 0.05
"""A call still running after this is watched: its client leaving cancels it (the SDK's path watches at once)."""
MAX_ENDED = 4096
"""Ended sessions remembered (older ones are past the SDK's own idle time anyway)."""
_NOTED = "mcpyard.fast_meta"
"""Where a call's `_meta` (as JSON) is kept in the ASGI scope's state, for the SDK path's call to arm with."""
_KEYED = ("authorization", "mcp-session-id", "mcp-protocol-version", "host", "origin", "accept", "content-type")
_ROUTING = ("mcp-method", "mcp-name")
_STREAM_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),  # as the SDK's app: a proxy passes each event on at once
]
_KNOWN_MCP = frozenset({b"mcp-session-id", b"mcp-protocol-version", b"mcp-method", b"mcp-name"})


def _headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str] | None:
    """The request's headers by name, or None when one is given twice or is an `Mcp-` header the fast path does not
    read (then the request is the SDK's)."""
    headers: dict[str, str] = {}
    for name, value in raw:
        if name.startswith(b"mcp-") and name not in _KNOWN_MCP:
            return None
        headers[name.decode("latin-1")] = value.decode("latin-1")
    return headers if len(headers) == len(raw) else None


def _modern(headers: Mapping[str, str]) -> bool:
    """Whether the SDK's app hands the request to its new-era entry (it routes on the protocol version header)."""
    version = headers.get("mcp-protocol-version")
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


def _read(body: bytes, modern: bool) -> object:
    """The body as the SDK's app parses it for the request's era; raises ValueError or RecursionError as it refuses."""
    if modern:
        return json.loads(body.decode("utf-8", "surrogatepass"))  # as loads(bytes) would, minus detection
    return pydantic_core.from_json(body)


def _requester(path: str, headers: Mapping[str, str]) -> Hashable:
    """The path, the headers the SDK's checks read (the session second), and whether the routing headers are there."""
    return (path, *(headers.get(name) for name in _KEYED), *(name in headers for name in _ROUTING))


def _requester_of(ctx: ServerRequestContext[Any]) -> Hashable:
    request = ctx.request
    return _requester(request.scope["path"], request.headers) if isinstance(request, Request) else None


class _Posted(NamedTuple):
    """A posted body, its request's headers, and whether the SDK's new-era entry would read it."""

    body: bytes
    headers: Mapping[str, str]
    modern: bool


class _Reply:
    """The response to one call: one JSON body, or an SSE stream once a log message comes first or the call takes
    longer than `PING_SECS` (as the SDK's app answers a call that sends something before its result, and keeps a
    long one's stream alive with pings)."""

    def __init__(self, send: Send, session: str | None) -> None:
        self._send = send
        self._session = [(b"mcp-session-id", session.encode("latin-1"))] if session else []
        self._streaming = False

    async def log(self, notice: bytes) -> None:
        await self._stream(b"event: message\r\ndata: " + notice + b"\r\n\r\n")

    async def ping(self) -> None:
        await self._stream(b": ping\r\n\r\n")

    async def cancelled(self, answer: bytes) -> None:
        """The call was cancelled by its client's notification: its stream ends with `answer` (the SDK's
        handshake-era app answers so, where its dispatcher stays silent)."""
        with contextlib.suppress(Exception):  # the client may be gone already
            await self._start()
            await self.finish(answer)

    async def finish(self, answer: bytes) -> None:
        if self._streaming:
            body = b"event: message\r\ndata: " + answer + b"\r\n\r\n"
            await self._send({"type": "http.response.body", "body": body, "more_body": False})
            return
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
        await self._send({"type": "http.response.start", "status": 200, "headers": [*headers, *self._session]})
        await self._send({"type": "http.response.body", "body": answer})

    async def abandon(self) -> None:
        """The new-era client left: an event stream that ends without an answer (as the SDK's app ends one)."""
        with contextlib.suppress(Exception):  # the client may be gone already
            await self._start()
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _start(self) -> None:
        if not self._streaming:
            self._streaming = True
            headers = [*_STREAM_HEADERS, *self._session]
            await self._send({"type": "http.response.start", "status": 200, "headers": headers})

    async def _stream(self, chunk: bytes) -> None:
        await self._start()
        await self._send({"type": "http.response.body", "body": chunk, "more_body": True})


class FastHttp:
    """The fast path in front of the SDK's streamable HTTP app at `path`."""

    def __init__(self, app: ASGIApp, face: Face, path: str | None) -> None:
        self._app = app
        self._path = path
        """Where MCP is served (None: wherever this app is mounted)."""
        self._face = face
        self.fast = FastPath(face, _requester_of, self._noted)
        self._ended: OrderedDict[str, None] = OrderedDict()
        """Sessions a client ended (`DELETE`): never armed again."""
        self._running: dict[tuple[Hashable, int | str], anyio.CancelScope] = {}
        """Calls on the fast path, by requester and id: a `notifications/cancelled` of the same requester cancels."""

    def _noted(self, ctx: ServerRequestContext[Any]) -> str | None:
        request = ctx.request
        if not isinstance(request, Request) or request.headers.get("mcp-session-id") in self._ended:
            return None
        noted = request.scope.get("state", {}).get(_NOTED)
        return noted if isinstance(noted, str) else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or (self._path is not None and scope["path"] != self._path)
            or scope["method"] not in ("POST", "DELETE")
        ):
            await self._app(scope, receive, send)
            return
        headers = _headers(scope["headers"])
        if headers is None:
            await self._app(scope, receive, send)  # a header the fast path does not read, or one given twice
            return
        requester = _requester(scope["path"], headers)
        if scope["method"] == "DELETE":
            if session := headers.get("mcp-session-id"):
                self._ended[session] = None
                while len(self._ended) > MAX_ENDED:
                    self._ended.popitem(last=False)
                self.fast.forget(lambda requester: isinstance(requester, tuple) and requester[2] == session)
            await self._app(scope, receive, send)
            return
        body, more = await _read_body(receive)
        modern = _modern(headers)
        if (
            not more
            and not modern
            and self._running
            and b'"notifications/cancelled"' in body
            and self._cancelled(body, requester)
        ):
            accepted = [(b"content-type", b"application/json")]  # as the SDK's app acknowledges a notification
            if session := headers.get("mcp-session-id"):
                accepted.append((b"mcp-session-id", session.encode("latin-1")))
            accepted.append((b"content-length", b"0"))
            await send({"type": "http.response.start", "status": 202, "headers": accepted})
            await send({"type": "http.response.body", "body": b""})
            return
        if (
            not more
            and b'"tools/call"' in body
            and await self._answered(scope, _Posted(body, headers, modern), requester, receive, send)
        ):
            return
        await self._app(scope, _replaying(body, more, receive), send)

    def _cancelled(self, body: bytes, requester: Hashable) -> bool:
        """Whether `body` (a handshake-era request's) is a `notifications/cancelled` of a fast call of `requester`'s
        (then cancelled): read by the SDK's models, as its app and dispatcher read it."""
        try:
            message = types.jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
        except ValueError:
            return False
        request_id = cancelled_call(message)
        scope = self._running.get((requester, request_id)) if request_id is not None else None
        if scope is None:
            return False
        scope.cancel()
        return True

    async def _answered(
        self,
        scope: Scope,
        posted: _Posted,
        requester: Hashable,
        receive: Receive,
        send: Send,
    ) -> bool:
        headers = posted.headers
        try:
            value = _read(posted.body, posted.modern)
        except (ValueError, RecursionError):
            return False

        def note(meta: str) -> None:
            scope.setdefault("state", {})[_NOTED] = meta

        taken = self.fast.accept(
            value,
            requester,
            busy=lambda request_id: (requester, coerce_request_id(request_id)) in self._running,
            request=Request(scope, receive),
            note=note,
        )
        if taken is None:
            return False
        if headers.get("mcp-method", "tools/call") != "tools/call" or headers.get("mcp-name", taken.offered) != (
            taken.offered
        ):
            return False  # the SDK's app refuses the mismatch
        reply = _Reply(send, headers.get("mcp-session-id"))
        # A new-era client that leaves gives up its call (as on the SDK's path); a handshake-era one may come back.
        leaving_cancels = taken.armed.version in MODERN_PROTOCOL_VERSIONS
        answer: bytes | None = None
        key = (requester, coerce_request_id(taken.request_id))  # as the SDK's dispatcher matches a cancel's id
        running = self._running[key] = anyio.CancelScope()
        watcher = _Watcher(receive, reply, running if leaving_cancels else None, self._face.task_group)
        try:
            with running:
                answer = await self.fast.answer(taken, reply.log)
        finally:
            await watcher.stop()
            del self._running[key]
        if answer is None and leaving_cancels:
            await reply.abandon()
            return True
        if answer is None:
            await reply.cancelled(error_answer(taken.request_id, REQUEST_CANCELLED, "Request cancelled").rstrip(b"\n"))
            return True
        ops.count_fast_call()
        await reply.finish(answer.rstrip(b"\n"))
        return True


class _Watcher:
    """A call's watcher, from `WATCH_AFTER_SECS` on: pings its stream, and its client leaving cancels `cancel`.

    A call answered sooner is never watched: a task per call would cost as much as the rest of its answer.
    """

    def __init__(
        self, receive: Receive, reply: _Reply, cancel: anyio.CancelScope | None, tg: anyio.abc.TaskGroup | None
    ) -> None:
        self._receive = receive
        self._reply = reply
        self._cancel = cancel
        self._tg = tg
        self._scope: anyio.CancelScope | None = None
        self._done: anyio.Event | None = None
        self._timer = asyncio.get_running_loop().call_later(WATCH_AFTER_SECS, self._start)

    def _start(self) -> None:
        if self._tg is None:
            return
        self._scope, self._done = anyio.CancelScope(), anyio.Event()
        self._tg.start_soon(self._run, self._scope, self._done)

    async def _run(self, scope: anyio.CancelScope, done: anyio.Event) -> None:
        try:
            with scope:
                await _watch(self._receive, self._reply, self._cancel)
        finally:
            done.set()

    async def stop(self) -> None:
        """The call ended: no more watching (once this returns, nothing more is written by the watcher)."""
        self._timer.cancel()
        if self._scope is not None and self._done is not None:
            self._scope.cancel()
            with anyio.CancelScope(shield=True):
                await self._done.wait()


async def _watch(receive: Receive, reply: _Reply, cancel: anyio.CancelScope | None) -> None:
    """While a call runs: pings every `PING_SECS`, and the client leaving cancels `cancel`."""
    while True:
        with anyio.move_on_after(PING_SECS):
            if (await receive())["type"] == "http.disconnect":
                if cancel is not None:
                    cancel.cancel()
                return
            continue
        await reply.ping()


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
