"""A message a server sends that cannot be read fails that server at once, saying why (ERR-1, CONN-3, CONN-4).

THREATS, Robustness: a listing nested 100,000 arrays deep cannot be parsed; the host says so
in well under `connect_timeout_secs` instead of waiting it out, and the other servers connect.

Real processes: the subject is what arrives on the wire, byte for byte.
"""

from __future__ import annotations

import anyio
import pytest

from mcpyard import Host
from tests.conftest import Home, fixture_server
from tests.servers.http_runner import HttpTransport, serve_http

pytestmark = pytest.mark.anyio

CONNECT_TIMEOUT = 30
PROMPTLY = 10
MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest message a stdio server may send: past it, it is flooding, not answering."""
"""Well under `CONNECT_TIMEOUT`: what the host takes to say a server's listing cannot be read."""


def states(host: Host) -> dict[str, tuple[str, str]]:
    return {server.id: (server.state, server.reason or "") for server in host.status().servers}


async def test_err1_conn3_a_listing_nested_too_deeply_fails_that_stdio_server_at_once(home: Home) -> None:
    config = home.write_config(
        {
            "deep": {**fixture_server("deep_listing"), "connect_timeout_secs": CONNECT_TIMEOUT},
            "plain": fixture_server("basic"),
        }
    )
    with anyio.fail_after(PROMPTLY):
        async with home.open(config) as host:
            found = states(host)
    state, reason = found["deep"]
    assert state == "failed"
    assert "nested too deeply" in reason, reason
    assert "within" not in reason, "the host did not wait out the connect timeout"
    assert found["plain"][0] == "connected"


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_err1_conn3_a_listing_nested_too_deeply_fails_that_http_server_at_once(
    home: Home, transport: HttpTransport
) -> None:
    async with serve_http("deep_listing", transport) as url:
        entry = {"url": url, "connect_timeout_secs": CONNECT_TIMEOUT, "transport": transport.replace("-", "_")}
        config = home.write_config({"deep": entry, "plain": fixture_server("basic")})
        with anyio.fail_after(PROMPTLY):
            async with home.open(config) as host:
                found = states(host)
    state, reason = found["deep"]
    assert state == "failed"
    assert "nested too deeply" in reason, reason
    assert found["plain"][0] == "connected"


async def test_err1_a_line_that_is_not_json_is_stray_output_and_the_server_still_connects(home: Home) -> None:
    config = home.write_config({"noisy": fixture_server("deep_listing", "--depth", "1", "--banner")})
    with anyio.fail_after(PROMPTLY):
        async with home.open(config) as host:
            assert states(host)["noisy"] == ("connected", "")
            assert [tool.name for tool in host.server_tools()] == ["noisy__deep"]


async def test_err1_conn4_an_answer_nested_too_deeply_stops_a_connected_server_at_once(home: Home) -> None:
    entry = {**fixture_server("deep_listing", "--depth", "1", "--call-depth", "100000"), "call_timeout_secs": 60}
    config = home.write_config({"deep": entry})
    with anyio.fail_after(PROMPTLY):
        async with home.open(config, mode="auto") as host:
            result = await host.call("deep__deep", {})
            state, reason = states(host)["deep"]
            assert host.server_tools() == [], "its tools left the catalog at once"
    assert result.error is not None
    assert result.error["code"] == "connection_lost", result.error
    assert "nested too deeply" in result.error["message"], result.error
    assert state == "stopped"
    assert "nested too deeply" in reason, reason


async def test_err1_conn4_a_message_that_never_ends_stops_the_server_naming_the_limit(home: Home) -> None:
    entry = {**fixture_server("deep_listing", "--depth", "1", "--flood"), "call_timeout_secs": 60}
    config = home.write_config({"flood": entry})
    with anyio.fail_after(PROMPTLY * 3):
        async with home.open(config, mode="auto") as host:
            result = await host.call("flood__deep", {})
            state, reason = states(host)["flood"]
            assert host.server_tools() == [], "its tools left the catalog at once"
    assert result.error is not None
    assert result.error["code"] == "connection_lost", result.error
    assert result.error["message"].startswith("server 'flood' stopped during the call"), result.error
    assert f"the server sent a message over {MAX_LINE_BYTES:,} bytes" in result.error["message"], result.error
    assert state == "stopped"
    assert f"the server sent a message over {MAX_LINE_BYTES:,} bytes" in reason, reason
