"""A host opened with the outbound guard: real MCP servers over https, reached by checked addresses (NET-1, NET-2).

The fixture server runs over https with a test CA's certificate for `mcp.example.com`. The
guard's policy is the production one: the in-memory resolver answers a public address for that
name, and the routed dialer carries the connection to the local server (see `_wire`).

Real processes and real https listeners: the outbound guard's subject is the wire.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from mcpyard import ElicitationAnswer, ElicitationRequest, Host
from mcpyard.connect import EgressGuard, MemoryResolver
from tests.conftest import Home, body
from tests.connect._tls import Certificates, make_certificates
from tests.connect._wire import Respond, RoutedDialer, Seen, Send, answer, chunk, wire_server
from tests.servers.http_runner import HttpTransport, serve_http

pytestmark = pytest.mark.anyio

PUBLIC = "93.184.215.14"
PRIVATE = "10.0.0.7"
NAME = "mcp.example.com"


@pytest.fixture
def certs() -> Certificates:
    return make_certificates(NAME)


@asynccontextmanager
async def https_server(
    certs: Certificates, folder: Path, transport: HttpTransport = "streamable-http", script: str = "basic"
) -> AsyncIterator[int]:
    """A fixture server (`basic` unless said) over https on 127.0.0.1; yields its port."""
    cert, key = certs.write(folder)
    async with serve_http(script, transport, ["--tls-cert", str(cert), "--tls-key", str(key)]) as url:
        port = urlsplit(url).port
        assert port is not None
        yield port


def guard_to(
    certs: Certificates, port: int, resolver: MemoryResolver | None = None, *, deadline_secs: float = 30.0
) -> tuple[EgressGuard, RoutedDialer, MemoryResolver]:
    resolver = resolver or MemoryResolver({NAME: [PUBLIC]})
    dialer = RoutedDialer({(PUBLIC, 443): port})
    guard = EgressGuard(resolver=resolver, dialer=dialer, verify=certs.client_context(), deadline_secs=deadline_secs)
    return guard, dialer, resolver


@asynccontextmanager
async def guarded_host(home: Home, servers: dict[str, dict[str, Any]], guard: EgressGuard) -> AsyncIterator[Host]:
    async with home.open(home.write_config(servers), egress=guard) as host:
        yield host


def reason(host: Host) -> str:
    return host.status().servers[0].reason or ""


async def test_net1_a_guarded_host_talks_to_a_public_https_server_only_at_the_checked_address(
    home: Home, certs: Certificates, tmp_path: Path
) -> None:
    """NET-1: the session's every connection goes to the address checked once; a later attempt checks again."""
    resolver = MemoryResolver({NAME: [PUBLIC]}).then(NAME, [PRIVATE])
    async with https_server(certs, tmp_path) as port:
        guard, dialer, _ = guard_to(certs, port, resolver)
        async with guarded_host(home, {"r": {"url": f"https://{NAME}/mcp"}}, guard) as host:
            assert host.status().servers[0].state == "connected", reason(host)
            assert body(await host.call("r__add", {"a": 1, "b": 2})) == "3"
            assert body(await host.call("r__echo", {"text": "hello"})) == "hello"
        assert resolver.queries == [NAME]
        assert dialer.dialed
        assert set(dialer.dialed) == {(PUBLIC, 443)}

        # The next connection attempt resolves again: the record now points inside, and is refused.
        async with guarded_host(home, {"r": {"url": f"https://{NAME}/mcp"}}, guard) as host:
            server = host.status().servers[0]
        assert server.state == "failed"
        assert reason(host) == (
            f"https://{NAME}/mcp is refused: its name resolves to a private address "
            "(only public https servers can be reached from here)"
        )
        assert set(dialer.dialed) == {(PUBLIC, 443)}


async def test_net2_a_result_over_one_mebibyte_is_refused_and_the_connection_stays(
    home: Home, certs: Certificates, tmp_path: Path
) -> None:
    """NET-2: the call gets a clear error of its own; the server stays connected for the next call."""
    async with https_server(certs, tmp_path) as port:
        guard, _, _ = guard_to(certs, port)
        async with guarded_host(home, {"r": {"url": f"https://{NAME}/mcp"}}, guard) as host:
            refused = await host.call("r__big_text", {"chars": 1_100_000})
            assert refused.error is not None
            assert refused.error["code"] == "response_too_large"
            assert refused.error["message"] == (
                "server 'r' sent a response over 1,048,576 bytes (the limit for one message); mcpyard refused it"
            )
            fits = await host.call("r__big_text", {"chars": 400_000})  # twice over: text and structured content
            assert fits.ok, fits.error
            assert host.status().servers[0].state == "connected"


async def test_net2_an_event_over_one_mebibyte_ends_a_legacy_sse_connection_saying_why(
    home: Home, certs: Certificates, tmp_path: Path
) -> None:
    """NET-2: over legacy SSE only the event names the request it answers: the connection ends, with the reason."""
    async with https_server(certs, tmp_path, "sse") as port:
        guard, _, _ = guard_to(certs, port)
        servers = {"r": {"url": f"https://{NAME}/sse", "transport": "sse"}}
        async with guarded_host(home, servers, guard) as host:
            assert body(await host.call("r__add", {"a": 2, "b": 2})) == "4"
            lost = await host.call("r__big_text", {"chars": 1_100_000})
            assert lost.error is not None
            assert lost.error["code"] == "connection_lost"
            with anyio.fail_after(10):
                # The reason stands for the backoff (1 s) before the reconnection.
                await host.wait_until(lambda h: "over 1,048,576 bytes" in reason(h))
            assert "the server sent a response over 1,048,576 bytes (the limit for one message)" in reason(host)
            with anyio.fail_after(30):
                await host.wait_until(lambda h: h.status().servers[0].state == "connected")


async def test_net2_a_call_ends_at_the_deadline_even_while_it_reports_progress(
    home: Home, certs: Certificates, tmp_path: Path
) -> None:
    """NET-2: progress restarts a call's own clock (CALL-2), never the guard's total deadline."""
    async with https_server(certs, tmp_path) as port:
        guard, _, _ = guard_to(certs, port, deadline_secs=3)
        async with guarded_host(home, {"r": {"url": f"https://{NAME}/mcp", "call_timeout_secs": None}}, guard) as host:
            assert host.status().servers[0].state == "connected", reason(host)
            started = anyio.current_time()
            with anyio.fail_after(20):
                result = await host.call("r__slow", {"seconds": 60, "progress_every": 0.2})
            assert anyio.current_time() - started < 15
            assert result.error is not None
            assert result.error["code"] == "timeout"
            assert (
                "did not finish within 3 s, the limit for one call through the outbound guard"
                in (result.error["message"])
            )


async def test_net2_a_person_answering_a_servers_question_is_not_held_to_the_calls_deadline(
    home: Home, certs: Certificates, tmp_path: Path
) -> None:
    """NET-2, CALL-2: the guard's total deadline is paused, like the call's own clock, while a person answers."""
    answered: list[float] = []

    async def slow_person(request: ElicitationRequest) -> ElicitationAnswer:
        del request
        # A person who takes longer than the whole deadline: the time passing is what is tested.
        await anyio.sleep(2.5)
        answered.append(anyio.current_time())
        return ElicitationAnswer.accept({"username": "ada", "password": "pw"})

    async with https_server(certs, tmp_path, script="elicits") as port:
        guard, _, _ = guard_to(certs, port, deadline_secs=2)
        config = home.write_config({"r": {"url": f"https://{NAME}/mcp", "call_timeout_secs": 1}}, mode="auto")
        async with home.open(config, egress=guard, elicitor=slow_person) as host:
            assert host.status().servers[0].state == "connected", reason(host)
            with anyio.fail_after(20):
                result = await host.call("r__sign_in", {})
    assert result.ok, result.text
    assert "action=accept user=ada password_length=2" in body(result)
    assert answered, "the person was asked"


async def test_net2_a_connection_attempt_ends_at_the_deadline(home: Home, certs: Certificates) -> None:
    """NET-2: a server that takes the TCP connection and says nothing fails the attempt at the deadline."""

    async def never(seen: Seen, send: Send) -> bool:
        raise AssertionError("no request gets through a handshake that never happens")

    async with wire_server(never) as silent:
        guard, _, _ = guard_to(certs, silent.port, deadline_secs=1)
        with anyio.fail_after(20):
            async with guarded_host(home, {"r": {"url": f"https://{NAME}/mcp"}}, guard) as host:
                server = host.status().servers[0]
    assert server.state == "failed"
    assert server.reason == "did not finish connecting within 1 s"
    assert silent.connections >= 1


async def test_net1_a_redirect_within_the_origin_is_refused_where_the_sdk_would_follow_it(
    home: Home, certs: Certificates, tmp_path: Path
) -> None:
    """NET-1: a 307 to the same origin (a trailing-slash fix the SDK follows) fails the connection, saying so."""

    async def redirect(seen: Seen, send: Send) -> bool:
        await send(answer(307, headers={"location": f"https://{NAME}/mcp/"}))
        return True

    async with wire_server(redirect, tls=lambda names: certs.server_context(tmp_path, names)) as server:
        guard, _, _ = guard_to(certs, server.port)
        async with guarded_host(home, {"r": {"url": f"https://{NAME}/mcp"}}, guard) as host:
            status = host.status().servers[0]
    assert status.state == "failed"
    assert f"it answered with a redirect (HTTP 307) to https://{NAME}/mcp/" in (status.reason or "")
    assert [seen.target for seen in server.requests] == ["/mcp"]


async def test_net1_websocket_servers_are_refused_through_the_guard(home: Home, certs: Certificates) -> None:
    guard, dialer, resolver = guard_to(certs, 1)
    servers = {"w": {"url": f"wss://{NAME}/ws", "transport": "websocket"}}
    async with guarded_host(home, servers, guard) as host:
        server = host.status().servers[0]
    assert server.state == "failed"
    assert "websocket servers cannot be reached through the outbound guard" in (server.reason or "")
    assert dialer.dialed == []
    assert resolver.queries == []


async def test_net1_development_mode_reaches_this_machine_over_plain_http_and_production_does_not(home: Home) -> None:
    async with serve_http("basic") as url:
        servers = {"r": {"url": url}}
        async with guarded_host(home, servers, EgressGuard(dev=True)) as host:
            assert body(await host.call("r__add", {"a": 3, "b": 4})) == "7"
        async with guarded_host(home, servers, EgressGuard()) as host:
            server = host.status().servers[0]
    assert server.state == "failed"
    assert "plain http is not allowed, only https" in (server.reason or "")


async def test_auth4_sign_in_discovery_goes_through_the_guard(home: Home, certs: Certificates, tmp_path: Path) -> None:
    """AUTH-4: a server that asks for sign-in and names its metadata at a metadata address is refused there."""

    async def needs_sign_in(seen: Seen, send: Send) -> bool:
        metadata = "https://169.254.169.254/latest/meta-data/iam"
        await send(answer(401, headers={"www-authenticate": f'Bearer resource_metadata="{metadata}"'}))
        return True

    async with wire_server(needs_sign_in, tls=lambda names: certs.server_context(tmp_path, names)) as server:
        guard, dialer, _ = guard_to(certs, server.port)
        async with guarded_host(home, {"r": {"url": f"https://{NAME}/mcp"}}, guard) as host:
            status = host.status().servers[0]
    assert status.state == "failed"
    assert status.reason is not None
    assert status.reason == (
        "https://169.254.169.254/latest/meta-data/iam is refused: it is the address of a cloud metadata service "
        "(only public https servers can be reached from here)"
    )
    assert set(dialer.dialed) == {(PUBLIC, 443)}


def handshake_era_server(big: int) -> Respond:
    """Just enough of a handshake-era streamable HTTP server, answering requests as event streams.

    `server/discover` is unknown to it (the client falls back to `initialize`); tool `big`
    answers one event of about `big` bytes, tool `small` a short one.
    """

    async def respond(seen: Seen, send: Send) -> bool:
        if seen.method != "POST":
            await send(answer(405))
            return True
        message = json.loads(seen.body)
        if "id" not in message:
            await send(answer(202))
            return True
        method = message["method"]
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "handshake-era", "version": "1"},
            }
        elif method == "tools/list":
            schema = {"type": "object", "properties": {}}
            hints = {"readOnlyHint": True}
            result = {"tools": [{"name": n, "inputSchema": schema, "annotations": hints} for n in ("big", "small")]}
        elif method == "tools/call":
            text = "z" * big if message["params"]["name"] == "big" else "small answer"
            result = {"content": [{"type": "text", "text": text}]}
        else:
            error = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no such method"}}
            await send(answer(200, json.dumps(error).encode(), {"content-type": "application/json"}))
            return True
        event = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        headers = {"content-type": "text/event-stream", "transfer-encoding": "chunked"}
        await send(answer(200, headers=headers))
        data = b"event: message\ndata: " + event + b"\n\n"
        for start in range(0, len(data), 65536):
            await send(chunk(data[start : start + 65536]))
        await send(chunk(b""))
        return True

    return respond


async def test_net2_an_event_over_one_mebibyte_in_a_call_s_event_stream_fails_that_call_only(
    home: Home, certs: Certificates, tmp_path: Path
) -> None:
    """NET-2: a handshake-era server answers each request as an event stream; the cap is per event."""
    respond = handshake_era_server(1_100_000)
    async with wire_server(respond, tls=lambda names: certs.server_context(tmp_path, names)) as server:
        guard, _, _ = guard_to(certs, server.port)
        async with guarded_host(home, {"r": {"url": f"https://{NAME}/mcp"}}, guard) as host:
            assert host.status().servers[0].state == "connected", reason(host)
            refused = await host.call("r__big", {})
            assert refused.error is not None
            assert refused.error["code"] == "response_too_large"
            assert "over 1,048,576 bytes" in refused.error["message"]
            assert body(await host.call("r__small", {})) == "small answer"
            assert host.status().servers[0].state == "connected"
