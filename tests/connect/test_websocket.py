"""CONN-1, AUTH-1: servers over websocket, both eras; no headers sent, and the status page says so.

A real websocket server process: the subject is the transport.
"""

from __future__ import annotations

import json
import sys

import httpx2
import pytest

from tests.conftest import SERVERS, Home, body
from tests.servers.http_runner import serve_process

pytestmark = pytest.mark.anyio


async def test_conn1_a_websocket_server_connects_lists_and_calls_without_headers(home: Home) -> None:
    async with serve_process(
        lambda port: [sys.executable, str(SERVERS / "ws_server.py"), "--port", str(port)],
        lambda port: f"http://127.0.0.1:{port}",
    ) as base:
        url = base.replace("http://", "ws://") + "/ws"
        config = home.write_config({"w": {"url": url, "headers": {"Authorization": "Bearer nope-123456"}}})
        async with home.open(
            config,
        ) as host:
            server = host.status().servers[0]
            assert server.state == "connected", server.reason
            assert server.transport == "websocket"
            assert server.protocol_version
            assert server.headers_sent == ()
            assert server.headers_not_sent == ("Authorization",)
            assert server.note is not None
            assert "websocket" in server.note
            assert body(await host.call("w__add", {"a": 20, "b": 22})) == "42"
        async with httpx2.AsyncClient() as client:
            seen = (await client.get(f"{base}/seen-headers")).json()
    assert seen
    assert all("authorization" not in {name.lower() for name in headers} for headers in seen)
    assert all("mcpyard-session-id" not in json.dumps(headers).lower() for headers in seen)
