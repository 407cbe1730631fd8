"""The 2026-07-28 routing headers at the HTTP gateway: a request whose `Mcp-Method` or `Mcp-Name` header says other
than its body is refused before anything runs (400, the protocol's header-mismatch error), one that agrees runs.
`mcpyard serve --transport http` as a process, driven with plain HTTP.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from mcp_types.jsonrpc import HEADER_MISMATCH

from tests.conftest import Home, fixture_server
from tests.gateway.test_serve import http_gateway

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
    }
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    }


async def test_call8_a_routing_header_that_disagrees_with_the_body_is_refused(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with (
        http_gateway(home, config, "--share-all") as url,
        httpx2.AsyncClient(trust_env=False, timeout=30) as http,
    ):
        base = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN}
        body = call("basic__add", {"a": 2, "b": 3})
        agreed = await http.post(url, json=body, headers={**base, "Mcp-Method": "tools/call", "Mcp-Name": "basic__add"})
        assert agreed.status_code == 200, agreed.text
        assert "5" in agreed.text
        for method, name in (("tools/call", "basic__echo"), ("tools/list", "basic__add"), ("tools/call", "")):
            refused = await http.post(url, json=body, headers={**base, "Mcp-Method": method, "Mcp-Name": name})
            assert refused.status_code == 400, (method, name, refused.text)
            error = refused.json()["error"]
            assert error["code"] == HEADER_MISMATCH, error
            assert "does not match the request body" in error["message"]
