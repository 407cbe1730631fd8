"""One browser sign-in: the page to open, a loopback callback that checks `state`, or a pasted redirect (AUTH-2).

The sign-in page is opened only if it is `https` (or `http` on a loopback address), never
through a shell; the callback listens on 127.0.0.1 only; after 10 minutes without an
answer the sign-in ends with a reason the status page shows.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
from mcp.shared.auth import AuthorizationCodeResult

__all__ = ["SIGN_IN_TIMEOUT", "SignIn", "SignInError", "free_loopback_port", "is_loopback", "safe_page_url"]

SIGN_IN_TIMEOUT = 600.0
_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"<!doctype html><title>mcpyard</title><p>Signed in. You can close this tab and go back to mcpyard.</p>"
)
_REFUSED = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nnot this sign-in\n"


class SignInError(Exception):
    """A sign-in that cannot go on; the message is for the status page."""


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def safe_page_url(url: str) -> str:
    """The URL, if it may be opened: https, or http on loopback; no controls, no leading `-`.

    Raises:
        SignInError: it may not.
    """
    if not url or url.startswith("-") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise SignInError("the sign-in page address is malformed; it was not opened")
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname)):
        return url
    raise SignInError(f"the sign-in page is not https ({parts.scheme}://{parts.hostname}); it was not opened")


def _can_open_a_browser() -> bool:
    """A graphical session or an explicit $BROWSER: never a text browser taking over an SSH terminal."""
    import os
    import sys

    if os.environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class SignIn:
    """The state of one server's sign-in, shared by the SDK's handlers and the status page."""

    def __init__(
        self,
        *,
        port: int,
        open_browser: bool,
        on_waiting: Callable[[str], None],
        on_answered: Callable[[], None] = lambda: None,
        timeout: float = SIGN_IN_TIMEOUT,
    ) -> None:
        self.port = port
        self.redirect_uri = f"http://127.0.0.1:{port}/callback"
        self.page_url: str | None = None
        self._open_browser = open_browser
        self._on_waiting = on_waiting
        self._on_answered = on_answered
        self._timeout = timeout
        self._done = anyio.Event()
        self._result: AuthorizationCodeResult | None = None
        self._problem: str | None = None
        self._listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None
        self._state: str | None = None
        self.failure: str | None = None
        """Why the last sign-in did not complete, for the status page."""

    async def redirect_handler(self, url: str) -> None:
        """The SDK asks to send the person to the sign-in page: listen first, then say where, then open it."""
        self.page_url = safe_page_url(url)
        # Each flow starts afresh (a step-up or a rejected token asks again on the same connection).
        self._done = anyio.Event()
        self._result = None
        self._problem = None
        self.failure = None
        self._state = parse_qs(urlsplit(url).query).get("state", [None])[0]
        self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self._on_waiting(self.page_url)
        if self._open_browser and _can_open_a_browser():
            import webbrowser

            # webbrowser starts the browser as a program with arguments, never through a shell.
            await anyio.to_thread.run_sync(webbrowser.open, self.page_url)

    async def callback_handler(self) -> AuthorizationCodeResult:
        """Wait for the browser's redirect (or a pasted one) for at most 10 minutes.

        Raises:
            SignInError: no answer in time, or the server refused the sign-in.
        """
        listener = self._listener
        try:
            async with anyio.create_task_group() as tg:
                if listener is not None:
                    tg.start_soon(listener.serve, self._serve_one)
                with anyio.move_on_after(self._timeout):
                    await self._done.wait()
                tg.cancel_scope.cancel()
        finally:
            if listener is not None:
                await listener.aclose()
            self._listener = None
        if self._result is not None:
            self._on_answered()
            return self._result
        raise SignInError(self._problem or f"no sign-in within {self._timeout / 60:g} minutes; sign in again")

    def complete(self, redirect_url: str) -> bool:
        """Take the address the browser was sent to (from the callback, or pasted back). False if it is not one."""
        parts = urlsplit(redirect_url.strip())
        if parts.path.rstrip("/") != "/callback":
            return False
        query = parse_qs(parts.query)
        if "error" in query:
            description = query.get("error_description", [""])[0]
            self._problem = f"the authorization server refused the sign-in: {query['error'][0]} {description}".strip()
            self._done.set()
            return True
        code = query.get("code", [None])[0]
        state = query.get("state", [None])[0]
        if not code or self._state is None or state != self._state:
            # Not this sign-in's answer: refused, and the sign-in goes on waiting (AUTH-2).
            return False
        iss = query.get("iss", [None])[0]
        self._result = AuthorizationCodeResult(code=code, state=state, iss=iss)
        self._done.set()
        return True

    async def _serve_one(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with anyio.move_on_after(10):
                request = b""
                while b"\r\n" not in request and len(request) < 16384:
                    chunk = await stream.receive()
                    if not chunk:
                        break
                    request += chunk
                line = request.split(b"\r\n", 1)[0].decode("latin-1")
                method, _, rest = line.partition(" ")
                target = rest.rsplit(" ", 1)[0]
                accepted = method == "GET" and self.complete(f"http://127.0.0.1:{self.port}{target}")
                await stream.send(_PAGE if accepted else _REFUSED)
