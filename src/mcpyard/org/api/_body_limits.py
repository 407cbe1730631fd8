"""Every request body bounded while it is read: in size, and in the time it takes to arrive (THREATS: DoS).

One pure-ASGI middleware on the whole app (API, pages' forms, visitors' endpoints), so no route reads more
than the limit and none waits on a client forever:

- a `Content-Length` over the limit is refused with 413 before a byte of the body is read;
- a malformed one (not digits, or two that differ) is refused with 400;
- a body without a length (chunked) is cut the moment it passes the limit (413): the app never sees more;
- a body that stops arriving is refused with 408 once no part came for `idle_seconds`, or once it took
  `total_seconds` in all.

A refusal is the API's error object (`{"error": {"code", "message"}}`), or a short page for a browser asking
for a page. After a 400 or a 408 the connection is closed; after a 413 the server throws away what the client
still sends, unread by the app, so the client (still writing) gets its answer: closing a connection with
unread bytes in it resets it, and a reset loses the answer on its way.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimits", "LengthRefused", "announced_length"]


class LengthRefused(ValueError):
    """A `Content-Length` the request cannot be read by."""


class _Cut(Exception):
    """The body was refused while the app read it; the answer is already sent."""


def announced_length(headers: Iterable[tuple[bytes, bytes]]) -> int | None:
    """The body's length its `Content-Length` headers announce (None when none does), or `LengthRefused`."""
    values = {value.strip() for name, value in headers if name.lower() == b"content-length"}
    if not values:
        return None
    if len(values) > 1:
        raise LengthRefused("the request has two different Content-Length headers; send one")
    (value,) = values
    if not value.isdigit():
        raise LengthRefused("the request's Content-Length is not a whole number of bytes")
    return int(value)


def _wants_page(scope: Scope) -> bool:
    """A browser asking for a page (not a program calling the API): it is told with a page."""
    path = str(scope.get("path", ""))
    if path.startswith(("/api/", "/public/")):
        return False
    accept = b",".join(value for name, value in scope.get("headers", ()) if name.lower() == b"accept")
    return b"text/html" in accept


_TITLES = {400: "Bad request", 408: "Too slow", 413: "Too large"}


def _answer(scope: Scope, status: int, code: str, message: str) -> tuple[Message, Message]:
    if _wants_page(scope):
        title = _TITLES.get(status, "Refused")
        body = (
            f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} · mcpyard</title>'
            '<link rel="stylesheet" href="/static/style.css"></head><body><main id="main">'
            f'<h1>{title}</h1><p class="notice error">{html.escape(message)}</p>'
            '<p><a href="/">Back to the start</a></p></main></body></html>'
        ).encode()
        kind = b"text/html; charset=utf-8"
    else:
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        kind = b"application/json"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    if status != 413:
        headers.append((b"connection", b"close"))
    return (
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": body},
    )


def _too_large(max_bytes: int) -> str:
    return f"the request body is over {max_bytes} bytes; send at most that"


class BodyLimits:
    """The middleware: at most `max_bytes` of body, no `idle_seconds` without a part of it, `total_seconds` in all."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, idle_seconds: float, total_seconds: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.idle_seconds = idle_seconds
        self.total_seconds = total_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            length = announced_length(scope.get("headers", ()))
        except LengthRefused as exc:
            for message in _answer(scope, 400, "invalid_length", str(exc)):
                await send(message)
            return
        if length is not None and length > self.max_bytes:
            for message in _answer(scope, 413, "too_large", _too_large(self.max_bytes)):
                await send(message)
            return
        reading = _Reading(self, scope, receive, send)
        try:
            await self.app(scope, reading.receive, reading.send)
        except Exception:
            if not reading.refused:  # the app failed on its own: the outer handler answers
                raise


class _Reading:
    """One request's body as the app reads it, counted and timed."""

    def __init__(self, limits: BodyLimits, scope: Scope, receive: Receive, send: Send) -> None:
        self.limits, self.scope, self._receive, self._send = limits, scope, receive, send
        self.received = 0
        self.whole = False
        self.deadline = math.inf
        self.started = False
        self.refused = False

    async def send(self, message: Message) -> None:
        if self.refused:  # the refusal is the answer; whatever the app says after it is dropped
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)

    async def receive(self) -> Message:
        if self.refused:
            return {"type": "http.disconnect"}
        if self.whole:  # the body is in: what follows is the wait for a disconnect, never timed
            return await self._receive()
        now = anyio.current_time()
        if self.deadline == math.inf:
            self.deadline = now + self.limits.total_seconds
        message: Message | None = None
        with anyio.move_on_after(min(self.limits.idle_seconds, self.deadline - now)):
            message = await self._receive()
        if message is None:
            await self._refuse(408, "request_timeout", "the request body stopped arriving; send it whole, promptly")
        assert message is not None
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limits.max_bytes:
                await self._refuse(413, "too_large", _too_large(self.limits.max_bytes))
            if not message.get("more_body", False):
                self.whole = True
        else:
            self.whole = True
        return message

    async def _refuse(self, status: int, code: str, message: str) -> None:
        if not self.started:
            for part in _answer(self.scope, status, code, message):
                await self._send(part)
        self.refused = True
        raise _Cut(message)
