"""The organization as an MCP server for its members' own clients (ORG-10, API-7): `/mcp` over streamable HTTP, both
protocol eras, signed in with an API token; each member is offered the tools they may use now (never `off`, changed
or removed), named as the API names them, plus `read_result`; calls take the same pipeline as `POST /api/v1/calls`;
a teammate's endpoint offers only its servers' tools; a change through the API tells connected clients; tenancy holds
(another organization's token, a revoked one, a removed member, another member's session).

The service is served for real on 127.0.0.1 (uvicorn in this process) and driven by the SDK's own client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Home
from tests.org._flows import by_tool, register, set_policy
from tests.org._served import served_service
from tests.org._service import Service

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 15


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with served_service(database_url, home.data_home) as served:
        yield served


@asynccontextmanager
async def mcp_client(service: Service, token: str, path: str = "/mcp", **options: Any) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60, trust_env=False) as http,
        Client(streamable_http_client(f"{service.origin}{path}", http_client=http), **options) as client,
    ):
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_org10_a_member_is_offered_the_tools_they_may_use_and_calls_run_through_the_pipeline(
    service: Service, upstream: str, mode: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    await set_policy(service, tools["write"], "ask_first")
    member = await service.add_member("member@acme.test")
    async with mcp_client(service, member, mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"tools__lookup", "tools__write", "read_result"}, "never an off tool"
        ran = await client.call_tool("tools__lookup", {"key": "k"})
        assert not ran.is_error, text_of(ran)
        assert "value of k" in text_of(ran)
        assert text_of(ran).startswith("<mcp-result-"), "fenced as untrusted data, as the API gives it"
        refused = await client.call_tool("tools__destroy", {"target": "x"})
        assert refused.is_error, "an off tool is not offered, and not run"
        invalid = await client.call_tool("tools__lookup", {"key": 3})
        assert invalid.is_error
        assert "input schema" in text_of(invalid)


async def test_org10_a_long_result_is_cut_and_read_on_with_read_result_in_the_same_session(
    service: Service, upstream: str
) -> None:
    await set_policy(service, by_tool(await register(service, upstream))["big"], "run_freely")
    async with mcp_client(service, service.org.owner_token, mode="legacy") as client:
        cut = await client.call_tool("tools__big", {"size": 200_000})
        assert not cut.is_error
        handle = text_of(cut).split("read_result(handle='", 1)[1].split("'", 1)[0]
        window = await client.call_tool("read_result", {"handle": handle, "offset": 100_000, "length": 5})
        assert not window.is_error, text_of(window)
        assert "yyyyy" in text_of(window)


async def test_org10_without_a_valid_token_the_answer_is_401_naming_the_resource_metadata(service: Service) -> None:
    async with httpx2.AsyncClient(trust_env=False) as http:
        for headers in ({}, {"Authorization": "Bearer not-a-token"}):
            refused = await http.post(f"{service.origin}/mcp", json={}, headers=headers)
            assert refused.status_code == 401
            challenge = refused.headers["www-authenticate"]
            assert challenge.startswith("Bearer resource_metadata=")
            assert "/.well-known/oauth-protected-resource/mcp" in challenge
        crafted = await http.post(f"{service.origin}/mcp/teammates/x%22,scope=%22all", json={})
        assert crafted.status_code == 401
        assert crafted.headers["www-authenticate"].count('"') == 4, "a path cannot add to the challenge"
        assert 'scope="mcp"' in crafted.headers["www-authenticate"]


async def test_org10_tenancy_holds_for_tokens_members_and_sessions(service: Service, upstream: str) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    other = await service.add_org("globex", "owner@globex.test")
    async with mcp_client(service, other.owner_token) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"read_result"}, "another organization's token sees none of acme's tools"
        refused = await client.call_tool("tools__lookup", {"key": "k"})
        assert refused.is_error
    leaving = await service.add_member("leaving@acme.test")
    me = (await service.request("GET", "/api/v1/me", token=leaving)).json()
    assert (await service.request("DELETE", f"/api/v1/members/{me['id']}")).status_code == 204
    async with httpx2.AsyncClient(trust_env=False) as http:
        gone = await http.post(f"{service.origin}/mcp", json={}, headers={"Authorization": f"Bearer {leaving}"})
        assert gone.status_code == 401, "a removed member's token is refused at once"
    member = await service.add_member("member@acme.test")
    sessions: list[str] = []

    async def note_session(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            sessions.append(response.headers["mcp-session-id"])

    headers = {"Authorization": f"Bearer {member}"}
    async with (
        httpx2.AsyncClient(
            headers=headers, timeout=60, trust_env=False, event_hooks={"response": [note_session]}
        ) as http,
        Client(streamable_http_client(f"{service.origin}/mcp", http_client=http), mode="legacy") as client,
    ):
        await client.list_tools()
        intruder = await service.add_member("intruder@acme.test")
        async with httpx2.AsyncClient(trust_env=False) as stranger:
            taken = await stranger.post(
                f"{service.origin}/mcp",
                json={"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}},
                headers={
                    "Authorization": f"Bearer {intruder}",
                    "Mcp-Session-Id": sessions[0],
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2025-11-25",
                },
            )
        assert taken.status_code == 404, "another member's session is not found, even in the same organization"
        assert (await client.list_tools()).tools, "its owner goes on using it"


async def test_org10_a_teammates_endpoint_offers_only_its_servers_tools(service: Service, upstream: str) -> None:
    first = by_tool(await register(service, upstream, name="first"))
    second = by_tool(await register(service, upstream, name="second"))
    await set_policy(service, first["lookup"], "run_freely")
    await set_policy(service, second["lookup"], "run_freely")
    teammate = await service.post(
        "/api/v1/teammates",
        {"name": "scribe", "instructions": "", "server_ids": [first["lookup"]["server_id"]]},
        expect=201,
    )
    async with mcp_client(service, service.org.owner_token, f"/mcp/teammates/{teammate['id']}") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"first__lookup", "read_result"}
        refused = await client.call_tool("second__lookup", {"key": "k"})
        assert refused.is_error
    async with httpx2.AsyncClient(trust_env=False) as http:
        missing = await http.post(
            f"{service.origin}/mcp/teammates/nosuch",
            json={},
            headers={"Authorization": f"Bearer {service.org.owner_token}"},
        )
        assert missing.status_code == 404


async def test_org10_a_policy_change_through_the_api_tells_connected_clients_and_the_next_list_shows_it(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with mcp_client(service, service.org.owner_token, mode="legacy", message_handler=on_message) as client:
        assert "tools__whoami" not in {tool.name for tool in (await client.list_tools()).tools}
        await set_policy(service, tools["whoami"], "run_freely")
        with anyio.fail_after(WAIT_SECONDS):
            await changed.wait()
        assert "tools__whoami" in {tool.name for tool in (await client.list_tools()).tools}


async def test_org10_a_new_era_client_listening_hears_that_its_organizations_tools_changed(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    async with mcp_client(service, service.org.owner_token) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            await set_policy(service, tools["whoami"], "run_freely")
            with anyio.fail_after(WAIT_SECONDS):
                async for _event in subscription:
                    break
        assert "tools__whoami" in {tool.name for tool in (await client.list_tools()).tools}


async def test_mod4_the_tools_list_in_the_same_order_on_every_call_and_every_session(
    service: Service, upstream: str
) -> None:
    # Registered, and reviewed, in an order that is neither alphabetical nor the servers' own.
    zeta = by_tool(await register(service, upstream, name="zeta"))
    alpha = by_tool(await register(service, upstream, name="alpha"))
    for tools, names in ((zeta, ("writes", "big", "lookup")), (alpha, ("whoami", "lookup", "big"))):
        for name in names:
            await set_policy(service, tools[name], "run_freely")
    member = await service.add_member("member@acme.test")
    expected = [
        "alpha__big",
        "alpha__lookup",
        "alpha__whoami",
        "zeta__big",
        "zeta__lookup",
        "zeta__writes",
        "read_result",
    ]
    for mode in ("auto", "legacy"):
        async with mcp_client(service, member, mode=mode) as client:
            first = [tool.name for tool in (await client.list_tools()).tools]
            again = [tool.name for tool in (await client.list_tools()).tools]
        assert first == again == expected, "a provider's prompt cache hits only on the same list, byte for byte"
    await set_policy(service, alpha["writes"], "run_freely")
    async with mcp_client(service, member) as client:
        changed = [tool.name for tool in (await client.list_tools()).tools]
    assert changed == [*expected[:3], "alpha__writes", *expected[3:]], "a tool added takes its place, not the end"
