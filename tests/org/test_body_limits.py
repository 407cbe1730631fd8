"""Request bodies are bounded while they arrive, on the service served by uvicorn, by a client that writes raw bytes
(THREATS: denial of service; ERR-1): an announced length over the limit is refused at once, a chunked body the
moment it passes the limit, a body that stops arriving after a bounded time, a malformed length with 400; a body
within the limit still works."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import SocketStream

from tests.conftest import Home
from tests.org._served import served_service
from tests.org._service import Service, running_service

pytestmark = pytest.mark.anyio

LIMIT = 64 * 1024
"""The body limit the service runs with here: small, so the tests send little."""
IDLE = 1.0
TOTAL = 3.0
ANSWER_SECONDS = 5.0
"""How long a refusal may take to arrive: far less than a client would need to send what it announced."""


@asynccontextmanager
async def _served(database_url: str, home: Home) -> AsyncIterator[tuple[Service, str, int]]:
    settings: dict[str, Any] = {"max_body_bytes": LIMIT, "body_idle_seconds": IDLE, "body_total_seconds": TOTAL}
    async with served_service(database_url, home.data_home, **settings) as service:
        url = httpx2.URL(str(service.client.base_url))
        assert url.host is not None
        assert url.port is not None
        yield service, url.host, url.port


def _head(service: Service, path: str, *headers: str, accept: str = "application/json") -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Authorization: Bearer {service.org.owner_token}",
        "Content-Type: application/json",
        f"Accept: {accept}",
        *headers,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _answer(stream: SocketStream) -> tuple[int, dict[str, str], bytes]:
    """The response's status, headers and body, read until the service closes the connection."""
    data = b""
    while True:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
            break
        data += chunk
        head, sep, rest = data.partition(b"\r\n\r\n")
        if sep:
            lines = head.decode("latin-1").split("\r\n")
            headers = dict(line.lower().split(": ", 1) for line in lines[1:])
            if len(rest) >= int(headers.get("content-length", "-1")) >= 0:
                return int(lines[0].split()[1]), headers, rest
    raise AssertionError(f"the connection closed before a whole answer: {data!r}")


async def _keep_sending(stream: SocketStream, chunk: bytes) -> None:
    """Send `chunk` until 3 MiB went out, never the chunk that ends the body (or until the service hangs up)."""
    try:
        for _ in range(3 * 1024 * 1024 // len(chunk)):
            await stream.send(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
        return


async def test_an_announced_length_over_the_limit_is_refused_at_once(database_url: str, home: Home) -> None:
    """512 MiB announced, a little sent: 413 comes within seconds, the connection closed (nothing more read)."""
    async with _served(database_url, home) as (service, host, port), await anyio.connect_tcp(host, port) as stream:
        await stream.send(_head(service, "/api/v1/servers", f"Content-Length: {512 * 1024 * 1024}") + b"{" * 1000)
        with anyio.fail_after(ANSWER_SECONDS):
            status, _headers, body = await _answer(stream)
    assert status == 413
    assert json.loads(body)["error"]["code"] == "too_large"


async def test_an_endless_chunked_body_is_cut_when_it_passes_the_limit(database_url: str, home: Home) -> None:
    """A chunked body that never ends, on the API and on the visitors' endpoint: 413 as soon as it passes the limit."""
    chunk = b"%x\r\n%s\r\n" % (4096, b" " * 4096)
    async with _served(database_url, home) as (service, host, port):
        for path in ("/api/v1/servers", "/public/assistants/nobody/turns", "/api/v1/calls"):
            async with await anyio.connect_tcp(host, port) as stream:
                await stream.send(_head(service, path, "Transfer-Encoding: chunked"))
                with anyio.fail_after(ANSWER_SECONDS):
                    async with anyio.create_task_group() as sending:
                        sending.start_soon(_keep_sending, stream, chunk)
                        status, _, body = await _answer(stream)
                        sending.cancel_scope.cancel()
            assert status == 413, path
            assert json.loads(body)["error"]["code"] == "too_large"
        assert await service.get("/api/v1/servers") == []


async def test_a_page_form_over_the_limit_is_refused_with_a_page(database_url: str, home: Home) -> None:
    """A form post announcing a body over the limit gets 413 at once, as a short page (a browser asked for one)."""
    async with _served(database_url, home) as (service, host, port), await anyio.connect_tcp(host, port) as stream:
        await stream.send(_head(service, "/login", f"Content-Length: {LIMIT + 1}", accept="text/html"))
        with anyio.fail_after(ANSWER_SECONDS):
            status, headers, body = await _answer(stream)
    assert status == 413
    assert headers["content-type"].startswith("text/html")
    assert b"over" in body
    assert b"Too large" in body


async def test_a_body_that_stops_arriving_is_refused_after_a_bounded_time(database_url: str, home: Home) -> None:
    """Headers and part of the body, then nothing: 408 once no part came for the idle bound; a body trickling in
    forever is refused at the total bound (both ends within a bound the test waits, never the test's own timeout)."""
    async with _served(database_url, home) as (service, host, port):
        async with await anyio.connect_tcp(host, port) as stream:
            await stream.send(_head(service, "/api/v1/servers", "Content-Length: 100") + b'{"name": ')
            with anyio.fail_after(IDLE + ANSWER_SECONDS):
                status, _, body = await _answer(stream)
            assert status == 408
            assert json.loads(body)["error"]["code"] == "request_timeout"
        async with await anyio.connect_tcp(host, port) as stream:
            await stream.send(_head(service, "/api/v1/servers", "Content-Length: 10000"))

            async def trickle() -> None:
                while True:  # a byte at a time, each within the idle bound: only the total bound ends it
                    await stream.send(b" ")
                    # The pause is the slow client this test plays, not a wait standing for an event; the
                    # whole exchange is bounded by the fail_after below.
                    await anyio.sleep(IDLE / 4)

            with anyio.fail_after(TOTAL + ANSWER_SECONDS):
                async with anyio.create_task_group() as sending:
                    sending.start_soon(trickle)
                    status, _, body = await _answer(stream)
                    sending.cancel_scope.cancel()
            assert status == 408
        assert await service.get("/api/v1/servers") == []


MALFORMED = pytest.mark.parametrize(
    "lengths", [("-1",), ("12abc",), ("10", "11")], ids=["negative", "not-digits", "two-differing"]
)


@MALFORMED
async def test_a_malformed_content_length_is_400(database_url: str, home: Home, lengths: tuple[str, ...]) -> None:
    """Refused before anything reads the body, on the wire (uvicorn refuses it before the service sees it)."""
    async with _served(database_url, home) as (service, host, port), await anyio.connect_tcp(host, port) as stream:
        headers = [f"Content-Length: {length}" for length in lengths]
        await stream.send(_head(service, "/api/v1/servers", *headers) + b"{}")
        with anyio.fail_after(ANSWER_SECONDS):
            status, _, _ = await _answer(stream)
    assert status == 400


@MALFORMED
async def test_a_malformed_content_length_is_400_from_the_app_itself(
    database_url: str, home: Home, lengths: tuple[str, ...]
) -> None:
    """Under a server that lets it through, the service refuses it itself, as an error object."""
    async with running_service(database_url, home.data_home, max_body_bytes=LIMIT) as service:
        request = service.client.build_request("POST", "/api/v1/servers", headers=service.headers(), content=b"{}")
        headers = [(name, value) for name, value in request.headers.multi_items() if name != "content-length"]
        request.headers = httpx2.Headers([*headers, *(("content-length", length) for length in lengths)])
        response = await service.client.send(request)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "invalid_length"
        assert await service.get("/api/v1/servers") == []


async def test_a_body_within_the_limit_still_works(database_url: str, home: Home) -> None:
    """A body in many chunks, and one at its length, up to the limit: read whole and answered as always."""
    async with _served(database_url, home) as (service, host, port):
        body = json.dumps({"label": "x" * 100}).encode()
        async with await anyio.connect_tcp(host, port) as stream:
            await stream.send(_head(service, "/api/v1/tokens", "Transfer-Encoding: chunked"))
            for start in range(0, len(body), 10):
                part = body[start : start + 10]
                await stream.send(b"%x\r\n%s\r\n" % (len(part), part))
            await stream.send(b"0\r\n\r\n")
            with anyio.fail_after(ANSWER_SECONDS):
                status, _, answer = await _answer(stream)
        assert status == 201, answer
        padded = b'{"label": "y"}' + b" " * (LIMIT - 14)
        response = await service.client.post("/api/v1/tokens", headers=service.headers(), content=padded)
        assert response.status_code == 201, response.text
        response = await service.client.post("/api/v1/tokens", headers=service.headers(), content=padded + b" ")
        assert response.status_code == 413, response.text
