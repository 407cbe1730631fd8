"""The guarded HTTP transport: checked names, pinned addresses, no redirects, bounded responses (NET-1, NET-2).

How a request goes out: its URL is checked (`parse_remote_url`); its host is resolved once for
the life of the client and every answer checked (`EgressGuard.addresses`); the connection pool
then opens each TCP connection through `_CheckedNetwork`, which dials only those pinned
addresses. The pool still knows the connection by its name, so TLS sends that name (SNI) and
verifies the certificate against it; the `Host` header is the name too. Nothing resolves the
name a second time: a record that changes after the check (DNS rebinding) is never used.

Responses: a redirect (any 3xx) is refused, never followed, also not within the origin where
the SDK would follow it. A body is counted as it streams and refused past
`max_response_bytes`; an event stream (`text/event-stream`) is counted per event, since one
stream carries many messages: the cap is per JSON-RPC message, not per stream. Responses are
asked for without compression, and a compressed one is refused: its size could not be
bounded before it is decoded.
"""

from __future__ import annotations

import contextlib
import re
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any

import anyio
import httpcore2
import httpx2

from mcpyard.connect._egress import EgressGuard, RemoteUrl, shown_url
from mcpyard.connect._network import Dialer
from mcpyard.errors import CallError, UrlRefused

__all__ = ["RESPONSE_REFUSED", "GuardedTransport", "ResponseTooLarge", "event_tail", "guarded_client", "refused_size"]

RESPONSE_REFUSED = "mcpyard refused a response over "
"""How a refusal for size begins: the SDK quotes the error in the answer it gives the request."""
_REFUSED = re.compile(re.escape(RESPONSE_REFUSED) + r"([0-9]{1,15}) bytes")
_LOCATION_SHOWN = 200
_CHECKED_URLS = 64
"""URLs a guarded transport keeps checked (a server's endpoint and the few it names); past it, all are checked again."""


class ResponseTooLarge(httpx2.SSEError, httpx2.StreamError):
    """A response (a body, or one event of a stream) went past the cap.

    Both an `SSEError` and a `StreamError`, because that is what the SDK's streamable HTTP client
    answers a request with when reading its event stream or its JSON body fails: the request
    gets an error, and the connection stays.
    """


def refused_size(text: str) -> int | None:
    """The cap, if an error text is (or quotes) a refusal for size from this transport.

    Only the number is taken from the text: a server can send any error text it likes.
    """
    found = _REFUSED.search(text)
    return int(found.group(1)) if found is not None else None


def event_tail(pending: int, previous: bytes, chunk: bytes) -> int:
    """Bytes of the event still open after `chunk` of an event stream, `pending` being those before it.

    An event ends at a blank line: two line ends in a row, where a line end is CR, LF or CRLF,
    so any of LF LF, LF CR or CR CR. `previous` is the byte before `chunk`, for a blank line
    that straddles two chunks.
    """
    data = previous[-1:] + chunk
    end = max(data.rfind(b"\n\n"), data.rfind(b"\n\r"), data.rfind(b"\r\r"))
    if end < 0:
        return pending + len(chunk)
    end += 2
    if data[end - 1 : end + 1] == b"\r\n":
        end += 1  # the blank line ended in CRLF
    return len(data) - end


_MAPPED: tuple[tuple[type[Exception], type[httpx2.HTTPError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
)
"""httpcore2's errors as httpx2's, most specific first, as httpx2's own transport maps them."""


@contextlib.contextmanager
def _mapped() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for source, target in _MAPPED:
            if isinstance(exc, source):
                raise target(str(exc)) from exc
        raise


class _Pins:
    """Each host's checked addresses, resolved once for the life of one client."""

    def __init__(self, guard: EgressGuard) -> None:
        self._guard = guard
        self._pinned: dict[tuple[str, int], tuple[str, ...]] = {}
        self._lock = anyio.Lock()

    async def pin(self, target: RemoteUrl) -> tuple[str, ...]:
        key = (target.host, target.port)
        if (found := self._pinned.get(key)) is not None:
            return found
        async with self._lock:  # concurrent first requests share one resolution
            if (found := self._pinned.get(key)) is None:
                found = self._pinned[key] = await self._guard.addresses(target)
        return found

    def pinned(self, host: str, port: int) -> tuple[str, ...] | None:
        return self._pinned.get((host.lower(), port))


class _CheckedNetwork(httpcore2.AsyncNetworkBackend):
    """The pool's network: a TCP connection goes to a pinned address of its host, never to a name."""

    def __init__(self, pins: _Pins, dialer: Dialer) -> None:
        self._pins = pins
        self._dialer = dialer

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109  # httpcore2's interface: the pool's connect timeout
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        del local_address, socket_options
        addresses = self._pins.pinned(host, port)
        if addresses is None:  # the transport pins before it sends: this would be a bug, refused all the same
            raise httpcore2.ConnectError(f"{host}:{port} was not checked; mcpyard does not connect to it")
        failure: Exception = httpcore2.ConnectError(f"{host}:{port} has no address")
        try:
            with anyio.fail_after(timeout):
                for address in addresses:
                    try:
                        return _ClosedOnFailedTls(await self._dialer.dial(address, port))
                    except httpcore2.ConnectError as exc:
                        failure = exc  # the next checked address, if there is one
        except TimeoutError:
            raise httpcore2.ConnectTimeout(f"{host}:{port} did not take the connection in time") from None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109  # httpcore2's interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("the outbound guard connects over TCP only")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


class _ClosedOnFailedTls(httpcore2.AsyncNetworkStream):
    """A TCP stream that is closed when its TLS handshake does not finish, cancelled included.

    httpcore2 closes it on an error but not on cancellation (a connect deadline that fires
    during the handshake), which would leave the socket open.
    """

    def __init__(self, stream: httpcore2.AsyncNetworkStream) -> None:
        self._stream = stream

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109  # httpcore2's
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109  # httpcore2's
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109  # httpcore2's interface
    ) -> httpcore2.AsyncNetworkStream:
        try:
            return await self._stream.start_tls(ssl_context, server_hostname, timeout)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._stream.aclose()
            raise

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _CappedStream(httpx2.AsyncByteStream):
    """A response body counted as it streams: the whole body, or each event of an event stream."""

    def __init__(self, inner: httpcore2.Response, *, limit: int, events: bool, shown: str) -> None:
        self._inner = inner
        self._limit = limit
        self._events = events
        self._shown = shown

    def _too_large(self) -> ResponseTooLarge:
        what = "one event of its event stream" if self._events else "its body"
        return ResponseTooLarge(f"{RESPONSE_REFUSED}{self._limit} bytes from {self._shown} ({what})")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        declared = _header(self._inner.headers, b"content-length")
        if not self._events and declared.isdigit() and int(declared) > self._limit:
            raise self._too_large()
        pending = 0
        previous = b""
        stream = self._inner.stream
        assert isinstance(stream, AsyncIterable)  # an async pool's responses stream asynchronously
        with _mapped():
            async for chunk in stream:
                if self._events:
                    pending = event_tail(pending, previous, chunk)
                    previous = chunk[-1:] or previous
                else:
                    pending += len(chunk)
                if pending > self._limit:
                    raise self._too_large()
                yield chunk

    async def aclose(self) -> None:
        with _mapped():
            await self._inner.aclose()


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1").strip()
    return ""


class GuardedTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that sends each request only to checked, pinned addresses (see the module)."""

    def __init__(self, guard: EgressGuard) -> None:
        self._guard = guard
        self._pins = _Pins(guard)
        self._checked: dict[str, tuple[RemoteUrl, str]] = {}
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=guard.verify or httpx2.create_ssl_context(trust_env=False),
            network_backend=_CheckedNetwork(self._pins, guard.dialer),
            # httpx2's own limits.
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send one request.

        Raises:
            UrlRefused: the URL or its addresses may not be reached, or the answer is a redirect.
            CallError: `response_refused`: the answer came compressed although asked for without.
        """
        target, shown = self._checked_url(request.url)
        await self._pins.pin(target)
        url = target.url
        if url.raw_host != request.url.raw_host:
            request.headers["Host"] = url.netloc.decode("ascii")
        request.headers["Accept-Encoding"] = "identity"
        assert isinstance(request.stream, httpx2.AsyncByteStream)  # an async client's requests are
        core = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _mapped():
            response = await self._pool.handle_async_request(core)
        if 300 <= response.status < 400:
            await self._close(response)
            raise UrlRefused(shown, _redirect_words(request.url, response))
        encoding = _header(response.headers, b"content-encoding").lower()
        if encoding not in ("", "identity"):
            await self._close(response)
            raise CallError(
                "response_refused",
                f"{shown} answered with a compressed response ({encoding}) although mcpyard asked for none; "
                "its size cannot be bounded before it is decoded, so it is refused",
            )
        events = _header(response.headers, b"content-type").partition(";")[0].strip().lower() == "text/event-stream"
        return httpx2.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_CappedStream(response, limit=self._guard.max_response_bytes, events=events, shown=shown),
            extensions=response.extensions,
        )

    def _checked_url(self, url: httpx2.URL) -> tuple[RemoteUrl, str]:
        """The URL checked by the guard (no network) and as messages show it; the same few URLs every request,
        so each is checked once (the check is a pure function of the URL and the guard's mode)."""
        key = str(url)
        checked = self._checked.get(key)
        if checked is None:
            if len(self._checked) >= _CHECKED_URLS:
                self._checked.clear()
            checked = self._checked[key] = (self._guard.parse(url), shown_url(url))
        return checked

    @staticmethod
    async def _close(response: httpcore2.Response) -> None:
        with _mapped():
            await response.aclose()

    async def aclose(self) -> None:
        with _mapped():
            await self._pool.aclose()


def _redirect_words(url: httpx2.URL, response: httpcore2.Response) -> str:
    location = _header(response.headers, b"location")
    words = f"it answered with a redirect (HTTP {response.status})"
    if location:
        try:
            where = shown_url(url.join(location))
        except httpx2.InvalidURL:
            where = "an address that is not a valid URL"
        words += f" to {where[:_LOCATION_SHOWN]}"
    return f"{words}; redirects are not followed (use the address it names, if that is the server)"


def guarded_client(
    guard: EgressGuard,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx2.Auth | None = None,
    event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
    timeout: httpx2.Timeout | None = None,
) -> httpx2.AsyncClient:
    """An HTTP client whose every request goes through `guard`: no ambient proxies or .netrc, no redirects.

    `timeout` defaults to the guard's `deadline_secs` for each phase of a request; a client that
    holds event streams open (MCP's) passes one without a read limit and bounds its calls itself.
    """
    return httpx2.AsyncClient(
        headers=dict(headers or {}),
        timeout=timeout or httpx2.Timeout(guard.deadline_secs),
        trust_env=False,
        follow_redirects=False,
        event_hooks=dict(event_hooks or {}),
        auth=auth,
        transport=GuardedTransport(guard),
    )
