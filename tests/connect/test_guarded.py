"""The guarded transport on the wire: pinned addresses, TLS by name, no redirects, capped responses (NET-1, NET-2).

The servers are scripted ones on 127.0.0.1 (`_wire`), reached the way a public server would be:
the in-memory resolver answers a public address, the production policy checks it, and the
routed dialer carries the connection to the local server, recording the address it dialed.
TLS uses a test CA that the guard is given to verify with.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import anyio
import httpx2
import pytest

from mcpyard.connect import EgressGuard, MemoryResolver
from mcpyard.connect._guarded import ResponseTooLarge, event_tail, guarded_client
from mcpyard.errors import CallError, UrlRefused
from tests.connect._tls import Certificates, make_certificates
from tests.connect._wire import Respond, RoutedDialer, Seen, Send, WireServer, answer, chunk, wire_server

pytestmark = pytest.mark.anyio

PUBLIC = "93.184.215.14"
PRIVATE = "10.0.0.7"
NAME = "mcp.example.com"
URL = f"https://{NAME}/mcp"
T = TypeVar("T")


async def ok_then_close(seen: Seen, send: Send) -> bool:
    await send(answer(200, b'{"ok": true}', {"content-type": "application/json", "connection": "close"}))
    return False


@pytest.fixture
def certs() -> Certificates:
    return make_certificates(NAME)


@asynccontextmanager
async def public_server(
    certs: Certificates, folder: Path, respond: Respond = ok_then_close
) -> AsyncIterator[WireServer]:
    async with wire_server(respond, tls=lambda names: certs.server_context(folder, names)) as server:
        yield server


def guard_for(
    certs: Certificates,
    routes: dict[tuple[str, int], int],
    resolver: MemoryResolver | None = None,
    *,
    deadline_secs: float = 30.0,
    max_response_bytes: int = 1_048_576,
) -> tuple[EgressGuard, RoutedDialer, MemoryResolver]:
    """A production-policy guard whose resolver answers a public address and whose dialer routes it here."""
    resolver = resolver or MemoryResolver({NAME: [PUBLIC]})
    dialer = RoutedDialer(routes)
    guard = EgressGuard(
        resolver=resolver,
        dialer=dialer,
        verify=certs.client_context(),
        deadline_secs=deadline_secs,
        max_response_bytes=max_response_bytes,
    )
    return guard, dialer, resolver


@pytest.mark.parametrize(
    ("pending", "previous", "chunk_", "after"),
    [
        (0, b"", b"data: x", 7),
        (7, b"x", b"\n\n", 0),
        (0, b"", b"data: a\n\ndata: bc", 8),
        (0, b"", b"data: a\r\n\r\ndata: b", 7),
        (0, b"", b"data: a\r\rdata: b", 7),
        (5, b"\n", b"\ndata: b", 7),
        (5, b"\r", b"\rdata", 4),
        (5, b"\r", b"\ndata", 10),
        (3, b"\n", b"", 3),
        (0, b"", b"data: a\n", 8),
        (0, b"", b"a\n\nb\n\ncd", 2),
    ],
)
def test_net2_an_event_ends_at_a_blank_line_whatever_the_line_ends(
    pending: int, previous: bytes, chunk_: bytes, after: int
) -> None:
    """NET-2: the cap counts the bytes of the event still open; LF, CR and CRLF all end lines."""
    assert event_tail(pending, previous, chunk_) == after


async def test_net1_connections_go_to_the_checked_address_and_the_name_is_resolved_once(
    certs: Certificates, tmp_path: Path
) -> None:
    """NET-1: the resolver answers a public address, then a private one (DNS rebinding).

    Three requests on three TCP connections all go to the first, checked address; the name is
    never resolved again for that client; TLS and the Host header carry the name. A new client
    (the next connection attempt) resolves again, sees the private answer and refuses it.
    """
    async with (
        public_server(certs, tmp_path / "public") as public,
        public_server(certs, tmp_path / "private") as private,
    ):
        resolver = MemoryResolver({NAME: [PUBLIC]}).then(NAME, [PRIVATE])
        guard, dialer, _ = guard_for(certs, {(PUBLIC, 443): public.port, (PRIVATE, 443): private.port}, resolver)
        async with guarded_client(guard) as client:
            for _ in range(3):
                response = await client.get(URL)
                assert response.json() == {"ok": True}
        assert resolver.queries == [NAME]
        assert dialer.dialed == [(PUBLIC, 443)] * 3
        assert public.connections == 3
        assert public.server_names == [NAME] * 3
        assert [seen.headers["host"] for seen in public.requests] == [NAME] * 3
        assert private.connections == 0

        async with guarded_client(guard) as client:
            with pytest.raises(UrlRefused) as refused:
                await client.get(URL)
        assert refused.value.reason == "its name resolves to a private address"
        assert resolver.queries == [NAME, NAME]
        assert dialer.dialed == [(PUBLIC, 443)] * 3
        assert private.connections == 0


async def test_net1_tls_verifies_the_name_not_the_address(tmp_path: Path) -> None:
    """NET-1: a trusted certificate for another name is refused, though the address it came from was checked."""
    other = make_certificates("other.example.com")
    async with public_server(other, tmp_path) as server:
        guard, dialer, _ = guard_for(other, {(PUBLIC, 443): server.port})
        async with guarded_client(guard) as client:
            with pytest.raises(httpx2.ConnectError, match="Hostname mismatch"):
                await client.get(URL)
    assert dialer.dialed == [(PUBLIC, 443)]
    assert server.server_names == [NAME]


async def test_net1_a_trailing_dot_is_dropped_before_tls_and_the_host_header(
    certs: Certificates, tmp_path: Path
) -> None:
    async with public_server(certs, tmp_path) as server:
        guard, _, resolver = guard_for(certs, {(PUBLIC, 443): server.port})
        async with guarded_client(guard) as client:
            assert (await client.get(f"https://{NAME.upper()}./mcp")).status_code == 200
    assert resolver.queries == [NAME]
    assert server.server_names == [NAME]
    assert server.requests[0].headers["host"] == NAME


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308, 300, 304])
async def test_net1_a_redirect_is_refused_and_not_followed(status: int, certs: Certificates, tmp_path: Path) -> None:
    """NET-1: any 3xx is an error naming where it pointed; the other name is never resolved."""

    async def redirect(seen: Seen, send: Send) -> bool:
        await send(answer(status, headers={"location": "https://u:p@elsewhere.example.com/next?k=v"}))
        return True

    async with public_server(certs, tmp_path, redirect) as server:
        guard, _, resolver = guard_for(certs, {(PUBLIC, 443): server.port})
        async with guarded_client(guard) as client:
            with pytest.raises(UrlRefused) as refused:
                await client.post(URL, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert f"it answered with a redirect (HTTP {status}) to https://elsewhere.example.com/next;" in refused.value.reason
    assert "u:p" not in refused.value.message
    assert "k=v" not in refused.value.message
    assert resolver.queries == [NAME]
    assert len(server.requests) == 1


async def read_into(into: list[T], parts: AsyncIterator[T]) -> None:
    async for part in parts:
        into.append(part)


def body_of(size: int, *, declared: bool) -> Respond:
    async def respond(seen: Seen, send: Send) -> bool:
        if declared:
            await send(answer(200, b"x" * size, {"content-type": "application/json"}))
            return True
        await send(answer(200, headers={"content-type": "application/json", "transfer-encoding": "chunked"}))
        sent = 0
        while sent < size:
            part = min(64 * 1024, size - sent)
            await send(chunk(b"x" * part))
            sent += part
        await send(chunk(b""))
        return True

    return respond


@pytest.mark.parametrize("declared", [True, False])
async def test_net2_a_body_over_one_mebibyte_is_refused_as_it_streams(
    declared: bool, certs: Certificates, tmp_path: Path
) -> None:
    """NET-2: the default cap is 1 MiB; a body one byte past it is refused, whether its length is declared or not."""
    async with public_server(certs, tmp_path, body_of(1_048_577, declared=declared)) as server:
        guard, _, _ = guard_for(certs, {(PUBLIC, 443): server.port})
        async with guarded_client(guard) as client, client.stream("GET", URL) as response:
            received: list[bytes] = []
            with pytest.raises(ResponseTooLarge, match=r"over 1048576 bytes from https://mcp\.example\.com/mcp"):
                await read_into(received, response.aiter_bytes())
            assert sum(map(len, received)) <= 1_048_576


@pytest.mark.parametrize("declared", [True, False])
async def test_net2_a_body_of_exactly_the_cap_is_accepted(declared: bool, certs: Certificates, tmp_path: Path) -> None:
    async with public_server(certs, tmp_path, body_of(1_048_576, declared=declared)) as server:
        guard, _, _ = guard_for(certs, {(PUBLIC, 443): server.port})
        async with guarded_client(guard) as client:
            response = await client.get(URL)
    assert len(response.content) == 1_048_576


def event_stream(*sizes: int) -> Respond:
    async def respond(seen: Seen, send: Send) -> bool:
        await send(answer(200, headers={"content-type": "text/event-stream", "transfer-encoding": "chunked"}))
        for number, size in enumerate(sizes):
            event = f"id: {number}\nevent: message\ndata: ".encode() + b"y" * size + b"\n\n"
            for start in range(0, len(event), 4096):  # an event across many chunks
                await send(chunk(event[start : start + 4096]))
        await send(chunk(b""))
        return True

    return respond


async def test_net2_the_cap_of_an_event_stream_is_per_event_not_per_stream(certs: Certificates, tmp_path: Path) -> None:
    """NET-2: many events that together pass the cap are all read: each is one message."""
    async with public_server(certs, tmp_path, event_stream(600_000, 600_000, 600_000)) as server:
        guard, _, _ = guard_for(certs, {(PUBLIC, 443): server.port})
        async with guarded_client(guard) as client, client.stream("GET", URL) as response:
            events = [event async for event in httpx2.EventSource(response, max_event_size=None)]
    assert [len(event.data) for event in events] == [600_000] * 3


async def test_net2_an_event_over_the_cap_is_refused_after_the_events_before_it(
    certs: Certificates, tmp_path: Path
) -> None:
    """NET-2: the refusal is an `SSEError`, which the SDK answers the request with; the small event came through."""
    async with public_server(certs, tmp_path, event_stream(10, 1_100_000, 10)) as server:
        guard, _, _ = guard_for(certs, {(PUBLIC, 443): server.port})
        events: list[str] = []
        async with guarded_client(guard) as client, client.stream("GET", URL) as response:
            with pytest.raises(httpx2.SSEError, match="one event of its event stream"):
                await read_into(
                    events, (event.data async for event in httpx2.EventSource(response, max_event_size=None))
                )
    assert events == ["y" * 10]


async def test_net2_the_cap_is_a_setting(certs: Certificates, tmp_path: Path) -> None:
    async with public_server(certs, tmp_path, body_of(2_000, declared=False)) as server:
        guard, _, _ = guard_for(certs, {(PUBLIC, 443): server.port}, max_response_bytes=1_999)
        async with guarded_client(guard) as client:
            with pytest.raises(ResponseTooLarge, match="over 1999 bytes"):
                await client.get(URL)


async def test_net2_responses_are_asked_for_uncompressed_and_a_compressed_one_is_refused(
    certs: Certificates, tmp_path: Path
) -> None:
    """NET-2: a compressed body could be far larger once decoded than the bytes counted."""

    async def gzip(seen: Seen, send: Send) -> bool:
        await send(answer(200, b"\x1f\x8b", {"content-encoding": "gzip", "content-type": "application/json"}))
        return True

    async with public_server(certs, tmp_path, gzip) as server:
        guard, _, _ = guard_for(certs, {(PUBLIC, 443): server.port})
        async with guarded_client(guard) as client:
            with pytest.raises(CallError) as refused:
                await client.get(URL)
    assert refused.value.code == "response_refused"
    assert server.requests[0].headers["accept-encoding"] == "identity"


async def test_net2_a_connection_that_never_completes_tls_ends_within_the_deadline(certs: Certificates) -> None:
    """NET-2: the server takes the TCP connection and never answers the TLS handshake."""

    async def never(seen: Seen, send: Send) -> bool:
        raise AssertionError("no request gets through a handshake that never happens")

    async with wire_server(never) as silent:
        guard, _, _ = guard_for(certs, {(PUBLIC, 443): silent.port}, deadline_secs=0.3)
        async with guarded_client(guard) as client:
            with anyio.fail_after(10), pytest.raises(httpx2.ConnectTimeout):
                await client.get(URL)
    assert silent.connections == 1


async def test_net1_ambient_proxies_and_netrc_are_ignored(
    certs: Certificates, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NET-1: a proxy named in the environment and a .netrc entry for the host are not used."""
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine {NAME} login someone password netrc-secret\n", encoding="ascii")
    async with public_server(certs, tmp_path / "public") as server, wire_server(ok_then_close) as proxy:
        for variable in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(variable, f"http://127.0.0.1:{proxy.port}")
        monkeypatch.setenv("NETRC", str(netrc))
        guard, _, _ = guard_for(certs, {(PUBLIC, 443): server.port})
        async with guarded_client(guard) as client:
            assert (await client.get(URL)).status_code == 200
    assert proxy.connections == 0
    assert "authorization" not in server.requests[0].headers


async def test_net1_plain_http_to_this_machine_in_development_mode() -> None:
    """NET-1: development mode reaches a loopback server over plain http; nothing else changes."""
    async with wire_server(ok_then_close) as server:
        guard = EgressGuard(dev=True)
        async with guarded_client(guard) as client:
            assert (await client.get(f"http://127.0.0.1:{server.port}/mcp")).status_code == 200
        strict = EgressGuard()
        async with guarded_client(strict) as client:
            with pytest.raises(UrlRefused, match="plain http is not allowed"):
                await client.get(f"http://127.0.0.1:{server.port}/mcp")
    assert server.connections == 1
