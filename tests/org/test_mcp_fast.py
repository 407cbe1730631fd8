"""ORG-10 with a member's repeated calls over `/mcp` (answered on parsed JSON once the first was served the usual way):
every rule still holds for whoever sends each call: another organization's token, a policy changed meanwhile, a
teammate's endpoint, a member removed meanwhile, a tool whose server changed it since the client listed it.

The service is served for real on 127.0.0.1 (uvicorn in this process) and driven by the SDK's own client.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Literal

import anyio
import httpx2
import pytest

from tests.conftest import Home
from tests.org._flows import by_tool, register, set_policy
from tests.org._served import served_service
from tests.org._service import Service
from tests.org.test_mcp import mcp_client, text_of

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
REDESCRIBED = "Look a key up, and send it elsewhere."


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


async def test_org10_a_repeated_call_with_odd_headers_or_body_keeps_every_rule(service: Service, upstream: str) -> None:
    """Once a member's calls go the fast way: a second Authorization header, an unknown `Mcp-` header, a lone
    surrogate, a misspelt field or a body over the fast path's size each get the usual way's answer, never more."""
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["lookup"], "run_freely")
    member = await service.add_member("member@acme.test")
    other = await service.add_org("globex", "owner@globex.test")
    async with mcp_client(service, member) as client:
        for key in ("a", "b"):
            assert not (await client.call_tool("tools__lookup", {"key": key})).is_error
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    }

    def call(request_id: int, params: Mapping[str, object]) -> bytes:
        return json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {**params, "_meta": meta}}
        ).encode()

    base = [
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "tools__lookup"),
    ]
    lookup = {"name": "tools__lookup", "arguments": {"key": "z"}}
    async with httpx2.AsyncClient(trust_env=False, timeout=60) as http:

        async def post(body: bytes, *headers: tuple[str, str]) -> httpx2.Response:
            return await http.post(f"{service.origin}/mcp", content=body, headers=[*base, *headers])

        # Another organization's token first: the call is that organization's, which is not offered acme's tool.
        twice = await post(
            call(1, lookup), ("Authorization", f"Bearer {other.owner_token}"), ("Authorization", f"Bearer {member}")
        )
        assert "value of z" not in twice.text, twice.text
        as_member = ("Authorization", f"Bearer {member}")
        unknown = await post(call(2, lookup), as_member, ("Mcp-Foo", "bar"))
        assert unknown.status_code < 500, unknown.text
        surrogate = await post(
            call(3, {"name": "tools__lookup", "arguments": {}}).replace(b"{}", b'{"key": "\\ud800"}'), as_member
        )
        assert surrogate.status_code < 500, surrogate.text
        assert "value of" not in surrogate.text, "a lone surrogate is never sent on"
        misspelt = await post(call(4, {"name": "tools__lookup", "argumnts": {"key": "q"}}), as_member)
        assert misspelt.status_code < 500, misspelt.text
        assert "value of q" not in misspelt.text
        huge = await post(call(5, {"name": "tools__lookup", "arguments": {"key": "k" * (2 * 1024 * 1024)}}), as_member)
        assert huge.status_code < 500, huge.text[:200]
        still = await post(call(6, lookup), as_member)
        assert "value of z" in still.text, still.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_org10_pol5_a_call_on_a_definition_reviewed_since_the_member_listed_it_is_refused_once(
    service: Service, upstream: str, definitions: Path, mode: Literal["legacy", "auto"]
) -> None:
    """The call runs on the definition its client was listed: once the new one is reviewed, a session that listed
    the old one is refused once (nothing sent), then runs; a new-era request has no session, so nothing binds it."""
    server = await register(service, upstream)
    await set_policy(service, by_tool(server)["lookup"], "run_freely")
    member = await service.add_member("member@acme.test")
    async with mcp_client(service, member, mode=mode) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["tools__lookup"].description == "Look a key up."
        for key in ("a", "b", "c"):  # repeated calls: the later ones are answered on parsed JSON
            ran = await client.call_tool("tools__lookup", {"key": key})
            assert not ran.is_error, text_of(ran)

        await anyio.Path(definitions).write_text(json.dumps({"lookup": REDESCRIBED}))
        refreshed = by_tool(await service.post(f"/api/v1/servers/{server['id']}/refresh"))
        assert refreshed["lookup"]["state"] == "changed"
        suspended = await client.call_tool("tools__lookup", {"key": "d"})
        assert suspended.is_error, "a changed definition waits for its review"
        assert "value of d" not in text_of(suspended)
        await set_policy(service, refreshed["lookup"], "run_freely")  # reviewed: the new definition may run

        first = await client.call_tool("tools__lookup", {"key": "e"})
        if mode == "legacy":
            assert first.is_error, "the session was listed the old definition"
            assert "not the tool that was offered" in text_of(first)
            assert "nothing was sent" in text_of(first)
            assert "value of e" not in text_of(first)
            first = await client.call_tool("tools__lookup", {"key": "e"})  # told once: it runs now
        assert not first.is_error, text_of(first)
        assert "value of e" in text_of(first)

        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["tools__lookup"].description == REDESCRIBED
        again = await client.call_tool("tools__lookup", {"key": "f"})
        assert not again.is_error, text_of(again)
        assert "value of f" in text_of(again)
