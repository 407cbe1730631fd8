"""PyPI's mcp-server-fetch through the Host and `mcpyard serve`, with no site to reach (CONN-1, CAT-1, GW-1, ERR-1).

The tests fetch from a `.invalid` host (RFC 6761: never resolves), so the failure is the same with
or without a network: the server cannot reach the site, and the user reads that as one clear line.

The official reference servers run as real processes, as people run them: interoperability is the
subject.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import Home
from tests.gateway.test_serve import serve_params, text_of
from tests.interop.conftest import list_all, own_listing_meanwhile

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SERVER_ID = "fetch"
CALL_SECONDS = 15
URL = "https://mcpyard-interop.invalid/page"
PROBLEM = "Failed to fetch robots.txt https://mcpyard-interop.invalid/robots.txt due to a connection issue"
"""The server's own words: it reads the site's robots.txt first, and cannot reach it."""


def server_entry(fetch_server: Path) -> dict[str, Any]:
    return {"command": str(fetch_server), "call_timeout_secs": 10}


def assert_one_clear_line(message: str) -> None:
    assert PROBLEM in message, message
    assert "\n" not in message.strip(), f"more than one line: {message!r}"
    assert "Traceback" not in message
    assert 'File "' not in message, "no stack frames"


async def test_conn1_cat1_err1_fetch_server_has_its_tool_offered_and_an_unreachable_site_is_one_clear_line(
    home: Home, fetch_server: Path
) -> None:
    entry = server_entry(fetch_server)
    config = home.write_config({SERVER_ID: entry})
    # Mode "ask": fetch is read-only, it runs without asking.
    async with own_listing_meanwhile(entry) as listing, home.open(config) as host:
        direct = await listing.tools()
        [status] = host.status().servers
        assert status.state == "connected", status.reason
        tools = {info.tool: info for info in host.server_tools()}
        assert sorted(tools) == sorted(direct) == ["fetch"]
        assert tools["fetch"].name == "fetch__fetch"
        assert tools["fetch"].input_schema == direct["fetch"]["inputSchema"]
        assert tools["fetch"].annotations == direct["fetch"].get("annotations", {})

        with anyio.fail_after(CALL_SECONDS):
            result = await host.call("fetch__fetch", {"url": URL})
        [status] = host.status().servers
    assert not result.ok
    assert result.error is not None
    assert result.error["code"] == "tool_error"
    assert_one_clear_line(result.error["message"])
    [line] = [line for line in result.text.splitlines() if PROBLEM in line]
    assert line == result.error["message"], "the model reads the same line"
    assert "Traceback" not in result.text
    assert status.state == "connected", "a site out of reach must not cost the connection"


async def test_gw1_err1_fetch_through_the_gateway_of_an_unreachable_site_is_one_clear_line(
    home: Home, fetch_server: Path
) -> None:
    entry = server_entry(fetch_server)
    config = str(home.write_config({SERVER_ID: entry}))
    with anyio.fail_after(60):
        async with (
            own_listing_meanwhile(entry) as listing,
            Client(serve_params(home, config, "--share-all")) as client,
        ):
            offered, direct = await list_all(client), await listing.tools()
            assert sorted(offered) == ["fetch__fetch", "read_result"]
            assert offered["fetch__fetch"]["inputSchema"] == direct["fetch"]["inputSchema"]
            assert offered["fetch__fetch"].get("annotations") == direct["fetch"].get("annotations")
            result = await client.call_tool("fetch__fetch", {"url": URL})
    assert result.is_error
    [line] = [line for line in text_of(result).splitlines() if PROBLEM in line]
    assert_one_clear_line(line)
    assert "Traceback" not in text_of(result)
