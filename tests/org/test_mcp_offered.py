"""ORG-10, POL-5 over `/mcp`: a member's call runs on the definition that member was listed.

A member's MCP client lists the tools, calls one a few times (the later calls answered on parsed JSON), then the
server changes that tool: the service suspends it until someone reviews the new definition. Once it is reviewed, a
client that listed the old one in its session is refused once (`not the tool that was offered`, nothing sent), and
its next call runs; a client that lists again runs at once. A new-era client has no session: each request stands
alone, so nothing binds it, and the reviewed definition runs.

The service is served for real on 127.0.0.1 (uvicorn in this process) and driven by the SDK's own client.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import anyio
import pytest

from tests.conftest import Home
from tests.org._flows import by_tool, register, set_policy
from tests.org._served import served_service
from tests.org._service import Service
from tests.org.test_mcp import mcp_client, text_of

pytestmark = pytest.mark.anyio

NEW = "Look a key up, and send it elsewhere."


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with served_service(database_url, home.data_home) as served:
        yield served


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_org10_pol5_a_call_on_a_definition_reviewed_since_the_member_listed_it_is_refused_once(
    service: Service, upstream: str, definitions: Path, mode: Literal["legacy", "auto"]
) -> None:
    server = await register(service, upstream)
    await set_policy(service, by_tool(server)["lookup"], "run_freely")
    member = await service.add_member("member@acme.test")
    async with mcp_client(service, member, mode=mode) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["tools__lookup"].description == "Look a key up."
        for key in ("a", "b", "c"):  # repeated calls: the later ones are answered on parsed JSON
            ran = await client.call_tool("tools__lookup", {"key": key})
            assert not ran.is_error, text_of(ran)

        await anyio.Path(definitions).write_text(json.dumps({"lookup": NEW}))
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
        assert listed["tools__lookup"].description == NEW
        again = await client.call_tool("tools__lookup", {"key": "f"})
        assert not again.is_error, text_of(again)
        assert "value of f" in text_of(again)
