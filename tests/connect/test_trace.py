"""CALL-3, AUTH-1: the host session on every HTTP request, a fresh W3C trace per tool call, configured headers sent.

Real HTTP servers: the subject is the headers on the wire.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import Home, body
from tests.servers.http_runner import HttpTransport, serve_http

pytestmark = pytest.mark.anyio

TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-01")


def header(text: str, name: str) -> str:
    """The plain value the echo server reports for a header (the line after `name:`)."""
    lines = text.splitlines()
    return lines[lines.index(f"{name}:") + 1]


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_call3_requests_carry_the_session_and_each_call_a_fresh_trace(
    home: Home, transport: HttpTransport
) -> None:
    async with serve_http("echo_secrets", transport) as url:
        entry = {"url": url, "headers": {"TraceParent": "00-forged-by-config", "mcpyard-session-id": "x", "X-Ok": "1"}}
        config = home.write_config({"e": entry})
        async with home.open(
            config,
            mode="auto",
        ) as host:
            server = host.status().servers[0]
            assert server.state == "connected", server.reason
            assert server.headers_sent == ("X-Ok",)
            assert set(server.headers_not_sent) == {"TraceParent", "mcpyard-session-id"}
            first = body(await host.call("e__headers", {}))
            second = body(await host.call("e__headers", {}))
    for text in (first, second):
        assert header(text, "mcpyard-session-id") == host.session_id
        assert TRACEPARENT.fullmatch(header(text, "traceparent"))
        assert "forged-by-config" not in text
        assert header(text, "x-ok") == "1"
    first_trace = TRACEPARENT.fullmatch(header(first, "traceparent"))
    second_trace = TRACEPARENT.fullmatch(header(second, "traceparent"))
    assert first_trace is not None
    assert second_trace is not None
    assert first_trace.group(1) != second_trace.group(1)
