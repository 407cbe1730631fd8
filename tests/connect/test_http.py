"""Remote servers: failure reasons, SSE fallback, reconnecting, big results (CONN-1, CONN-3, CONN-4, CALL-4).

Real server processes over real HTTP: failures, fallback and reconnects are the wire's and the
process's.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpyard import Host
from tests.conftest import SERVERS, Home, body
from tests.servers.http_runner import HttpTransport, free_port, listening_process, serve_http

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def open_host(home: Home, servers: dict[str, dict[str, Any]]) -> AsyncIterator[Host]:
    async with home.open(
        home.write_config(servers),
    ) as host:
        yield host


async def test_conn3_a_remote_failure_names_the_http_status(home: Home) -> None:
    async with serve_http("basic", "streamable-http") as url:
        wrong = url.replace("/mcp", "/nothing-here")
        async with open_host(home, {"r": {"url": wrong, "transport": "streamable_http"}}) as host:
            server = host.status().servers[0]
    assert server.state == "failed"
    assert server.reason is not None
    assert "HTTP 404" in server.reason


async def test_conn3_a_refused_connection_is_named(home: Home) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with open_host(home, {"r": {"url": url}}) as host:
        server = host.status().servers[0]
    assert server.state == "failed"
    assert server.reason is not None
    assert "cannot connect" in server.reason
    assert url in server.reason


def basic_over_http(port: int) -> list[str]:
    return [sys.executable, str(SERVERS / "basic.py"), "--transport", "streamable-http", "--port", str(port)]


async def test_conn4_a_dropped_remote_connection_keeps_its_tools_refuses_calls_and_reconnects(home: Home) -> None:
    port = free_port()
    async with (
        listening_process(basic_over_http(port), port=port) as first,
        open_host(home, {"r": {"url": f"http://127.0.0.1:{port}/mcp"}}) as host,
    ):
        assert body(await host.call("r__add", {"a": 1, "b": 1})) == "2"
        first.kill()
        with anyio.fail_after(10):
            await first.wait()
        with anyio.fail_after(30):
            lost = await host.call("r__echo", {"text": "still there?"})
        assert not lost.ok
        assert lost.error is not None
        assert lost.error["code"] in ("connection_lost", "server_unavailable", "server_error")
        with anyio.fail_after(10):
            await host.wait_until(lambda h: h.status().servers[0].state != "connected")
        # Its tools stay listed while it is away, and calls are refused with a clear error.
        assert "r__add" in {tool.name for tool in host.tools()}
        refused = await host.call("r__echo", {"text": "now?"})
        assert refused.error is not None
        assert refused.error["code"] == "server_unavailable"
        async with listening_process(basic_over_http(port), port=port):
            with anyio.fail_after(30):
                await host.wait_until(lambda h: h.status().servers[0].state == "connected")
            assert body(await host.call("r__add", {"a": 2, "b": 2})) == "4"


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_call4_a_result_near_one_mebibyte_arrives_over_http_and_is_cut(
    home: Home, transport: HttpTransport
) -> None:
    async with (
        serve_http("basic", transport) as url,
        open_host(home, {"r": {"url": url}}) as host,
    ):
        result = await host.call("r__big_text", {"chars": 1_000_000})
        assert result.ok, result.error
        assert result.handle is not None
        assert "the full result is 1000000 bytes" in result.text
        assert host.status().servers[0].state == "connected"
