"""The official MCP clients list and call the organization's tools at `/mcp` with a member's API token (ORG-10).

npm's Inspector CLI and the TypeScript SDK's `Client`, as real processes, against the service served for real on
127.0.0.1: each sees exactly the tools the member may use, and a call runs through the pipeline (its result
fenced as the API gives it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.conftest import Home
from tests.official_clients import TS_CLIENT, Clients, official_clients, run_client
from tests.org._flows import by_tool, register, set_policy
from tests.org._served import served_service

pytestmark = pytest.mark.anyio

OFFERED = {"tools__lookup", "tools__write", "read_result"}


@pytest.fixture
def clients() -> Clients:
    return official_clients()


@pytest.fixture
async def endpoint(database_url: str, home: Home, upstream: str) -> AsyncIterator[tuple[str, str]]:
    """The service's `/mcp` and a member's API token: `lookup` runs freely, `write` asks first, the rest are off."""
    async with served_service(database_url, home.data_home) as service:
        tools = by_tool(await register(service, upstream))
        await set_policy(service, tools["lookup"], "run_freely")
        await set_policy(service, tools["write"], "ask_first")
        member = await service.add_member("member@acme.test")
        yield f"{service.origin}/mcp", member


def assert_looked_up(tools: list[str], text: str, is_error: bool) -> None:
    assert set(tools) == OFFERED, "the member's tools, named as the API names them, and nothing else"
    assert not is_error, text
    assert "value of k" in text
    assert text.startswith("<mcp-result-"), "fenced as untrusted data"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_org10_the_inspector_cli_lists_and_calls_the_organizations_tools(
    endpoint: tuple[str, str], clients: Clients, home: Home
) -> None:
    url, token = endpoint
    base = [str(clients.inspector), "--cli", url, "--transport", "http", "--header", f"Authorization: Bearer {token}"]
    listed: dict[str, Any] = json.loads(
        await run_client([*base, "--method", "tools/list"], home.environ, clients.inspector_build)
    )
    called: dict[str, Any] = json.loads(
        await run_client(
            [*base, "--method", "tools/call", "--tool-name", "tools__lookup", "--tool-arg", "key=k"],
            home.environ,
            clients.inspector_build,
        )
    )
    texts = [block["text"] for block in called["content"] if block.get("type") == "text"]
    assert_looked_up([tool["name"] for tool in listed["tools"]], "\n".join(texts), bool(called.get("isError")))


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_org10_the_typescript_sdk_client_lists_and_calls_the_organizations_tools(
    endpoint: tuple[str, str], clients: Clients, home: Home
) -> None:
    url, token = endpoint
    env = {
        **home.environ,
        "MCPYARD_TEST_CLIENTS": str(clients.root),
        "MCPYARD_TEST_BEARER": token,
        "MCPYARD_TEST_TOOL": "tools__lookup",
        "MCPYARD_TEST_ARGUMENTS": json.dumps({"key": "k"}),
    }
    out = await run_client([clients.node, str(TS_CLIENT), "http", url], env, TS_CLIENT.parent)
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert_looked_up(report["tools"], report["text"], report["isError"])
