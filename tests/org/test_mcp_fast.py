"""ORG-10 with a member's repeated calls over `/mcp` (answered on parsed JSON once the first was served the usual way):
every rule still holds for whoever sends each call: another organization's token, a policy changed meanwhile, a
teammate's endpoint, a member removed meanwhile.

The service is served for real on 127.0.0.1 (uvicorn in this process) and driven by the SDK's own client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from tests.conftest import Home
from tests.org._flows import by_tool, register, set_policy
from tests.org._served import served_service
from tests.org._service import Service
from tests.org.test_mcp import mcp_client, text_of

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with served_service(database_url, home.data_home) as served:
        yield served


async def test_org10_repeated_calls_over_mcp_keep_every_rule_for_whoever_sends_them(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    member = await service.add_member("member@acme.test")
    other = await service.add_org("globex", "owner@globex.test")
    async with mcp_client(service, member) as client:
        for key in ("a", "b", "c"):
            ran = await client.call_tool("tools__lookup", {"key": key})
            assert not ran.is_error, text_of(ran)
            assert f"value of {key}" in text_of(ran)
        async with mcp_client(service, other.owner_token) as stranger:
            for _ in range(3):
                refused = await stranger.call_tool("tools__lookup", {"key": "a"})
                assert refused.is_error, "another organization's member is never offered acme's tool"
        await set_policy(service, tools["lookup"], "off")
        switched_off = await client.call_tool("tools__lookup", {"key": "d"})
        assert switched_off.is_error, "a policy changed since is applied to the next call"
        assert "value of d" not in text_of(switched_off)


async def test_org10_a_teammates_endpoint_stays_its_own_for_repeated_calls(service: Service, upstream: str) -> None:
    first = by_tool(await register(service, upstream, name="first"))
    second = by_tool(await register(service, upstream, name="second"))
    await set_policy(service, first["lookup"], "run_freely")
    await set_policy(service, second["lookup"], "run_freely")
    teammate = await service.post(
        "/api/v1/teammates",
        {"name": "scribe", "instructions": "", "server_ids": [first["lookup"]["server_id"]]},
        expect=201,
    )
    owner = service.org.owner_token
    async with mcp_client(service, owner) as everything:
        for _ in range(3):
            assert not (await everything.call_tool("second__lookup", {"key": "k"})).is_error
    async with mcp_client(service, owner, f"/mcp/teammates/{teammate['id']}") as scribe:
        for _ in range(3):
            assert (await scribe.call_tool("second__lookup", {"key": "k"})).is_error, "not the teammate's server"
            assert not (await scribe.call_tool("first__lookup", {"key": "k"})).is_error


async def test_org10_a_member_removed_after_repeated_calls_is_refused_at_once(service: Service, upstream: str) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    leaving = await service.add_member("leaving@acme.test")
    async with mcp_client(service, leaving) as client:
        for key in ("a", "b"):
            assert not (await client.call_tool("tools__lookup", {"key": key})).is_error
    me = (await service.request("GET", "/api/v1/me", token=leaving)).json()
    assert (await service.request("DELETE", f"/api/v1/members/{me['id']}")).status_code == 204
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "tools__lookup", "arguments": {"key": "z"}, "_meta": meta},
    }
    headers = {
        "Authorization": f"Bearer {leaving}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "tools__lookup",
    }
    async with httpx2.AsyncClient(trust_env=False) as http:
        gone = await http.post(f"{service.origin}/mcp", json=body, headers=headers)
    assert gone.status_code == 401, gone.text
