"""Ask-first calls over MCP (ORG-10, ORG-5): the call parks in the inbox as through the API, and the MCP request waits
for the decision, telling the client where to approve (progress messages; a URL elicitation when it declared one).
Approved, it runs once and its result is the MCP result; declined, an error result says who declined; not decided in
time, an error result says it still waits in the inbox. A server's question during a call goes to the client when it
declared elicitation, else to the inbox. Both protocol eras, on SQLite and PostgreSQL."""

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

from tests._waiting import eventually
from tests.conftest import Home
from tests.org._flows import by_tool, register, set_policy
from tests.org._served import served_service
from tests.org._service import Service
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30


@asynccontextmanager
async def member_client(service: Service, token: str, **options: Any) -> AsyncIterator[Client]:
    base = str(service.client.base_url).rstrip("/")
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60, trust_env=False) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), **options) as client,
    ):
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def _pending(service: Service) -> list[dict[str, Any]]:
    return list(await service.get("/api/v1/approvals?status=pending"))


async def _decide_when_parked(service: Service, verb: str, seen: list[str]) -> None:
    # The call parks in another task's request: its approval is read until it is there (no event crosses).
    await eventually(lambda: _has_pending(service), within=WAIT_SECONDS, what="the call is parked in the inbox")
    [approval] = await _pending(service)
    seen.append(approval["id"])
    await service.post(f"/api/v1/approvals/{approval['id']}/{verb}")


async def _has_pending(service: Service) -> bool:
    return bool(await _pending(service))


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with served_service(database_url, home.data_home) as served:
        yield served


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_org10_an_ask_first_call_waits_for_approval_then_runs_once_and_its_result_is_the_mcp_result(
    service: Service, upstream: str, mode: str
) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["write"], "ask_first")
    await set_policy(service, tools["writes"], "run_freely")
    member = await service.add_member("member@acme.test")
    told: list[str] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        told.append(message or "")

    seen: list[str] = []
    async with member_client(service, member, mode=mode) as client, anyio.create_task_group() as tg:
        tg.start_soon(_decide_when_parked, service, "approve", seen)
        with anyio.fail_after(WAIT_SECONDS):
            result = await client.call_tool("tools__write", {"note": "hello"}, progress_callback=progress)
        assert not result.is_error, text_of(result)
        assert "wrote hello" in text_of(result)
        counted = await client.call_tool("tools__writes", {})
        assert "1" in text_of(counted), "it ran exactly once"
    [approval_id] = seen
    [decided] = [item for item in await service.get("/api/v1/approvals") if item["id"] == approval_id]
    assert decided["status"] == "done"
    assert decided["client"], "the inbox names the MCP client that asked"
    assert any(f"/inbox#approval-{approval_id}" in message for message in told), "progress says where to approve"


async def test_org10_a_declined_call_is_an_error_result_naming_who_declined(service: Service, upstream: str) -> None:
    await set_policy(service, by_tool(await register(service, upstream))["write"], "ask_first")
    member = await service.add_member("member@acme.test")
    seen: list[str] = []
    async with member_client(service, member, mode="legacy") as client, anyio.create_task_group() as tg:
        tg.start_soon(_decide_when_parked, service, "decline", seen)
        with anyio.fail_after(WAIT_SECONDS):
            result = await client.call_tool("tools__write", {"note": "hello"})
    assert result.is_error
    assert "declined by owner@acme.test" in text_of(result)


async def test_org10_a_call_not_decided_in_time_says_it_still_waits_in_the_inbox(
    database_url: str, home: Home, upstream: str
) -> None:
    async with served_service(database_url, home.data_home, approval_wait_seconds=1.0) as service:
        await set_policy(service, by_tool(await register(service, upstream))["write"], "ask_first")
        async with member_client(service, service.org.owner_token, mode="legacy") as client:
            with anyio.fail_after(WAIT_SECONDS):
                result = await client.call_tool("tools__write", {"note": "hello"})
        assert result.is_error
        assert "not decided within" in text_of(result)
        assert "still waits in the inbox" in text_of(result)
        [pending] = await _pending(service)
        assert pending["status"] == "pending", "a client that stops waiting leaves the approval in the inbox"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_org10_a_client_that_declared_url_elicitation_is_asked_to_open_the_approvals_page(
    service: Service, upstream: str, mode: str
) -> None:
    await set_policy(service, by_tool(await register(service, upstream))["write"], "ask_first")
    asked: list[types.ElicitRequestParams] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        del context
        asked.append(params)
        return types.ElicitResult(action="accept")

    seen: list[str] = []
    async with (
        member_client(service, service.org.owner_token, mode=mode, elicitation_callback=person) as client,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_decide_when_parked, service, "approve", seen)
        with anyio.fail_after(WAIT_SECONDS):
            result = await client.call_tool("tools__write", {"note": "hello"})
    assert not result.is_error, text_of(result)
    [approval_id] = seen
    [link] = asked
    assert isinstance(link, types.ElicitRequestURLParams)
    assert link.url.endswith(f"/inbox#approval-{approval_id}")


@pytest.fixture
async def asking() -> AsyncIterator[str]:
    """The `elicits` fixture server over streamable HTTP."""
    async with serve_http_in_process("elicits", "streamable-http") as url:
        yield url


async def _asks(service: Service, url: str) -> None:
    for tool in by_tool(await register(service, url, name="asks", token=None)).values():
        await set_policy(service, tool, "run_freely")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_org10_a_servers_question_goes_to_the_client_that_declared_elicitation(
    service: Service, asking: str, mode: str
) -> None:
    await _asks(service, asking)
    asked: list[str] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        del context
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada", "email": "ada@example.org", "age": 36})

    async with member_client(service, service.org.owner_token, mode=mode, elicitation_callback=person) as client:
        with anyio.fail_after(WAIT_SECONDS):
            result = await client.call_tool("asks__sign_up", {})
    assert not result.is_error, text_of(result)
    assert asked == ["Sign up for the fixture service"]
    assert "action=accept" in text_of(result)
    assert await service.get("/api/v1/questions?status=pending") == [], "nothing went to the inbox"


async def test_org10_a_servers_question_waits_in_the_inbox_when_the_client_cannot_answer_it(
    service: Service, asking: str
) -> None:
    await _asks(service, asking)

    async def answer_in_inbox() -> None:
        # The question is written by the call's request in another task: read until it is there.
        await eventually(lambda: _has_question(service), within=WAIT_SECONDS, what="the question waits in the inbox")
        [question] = await service.get("/api/v1/questions?status=pending")
        await service.post(f"/api/v1/questions/{question['id']}/answer", {"action": "decline"})

    async with (
        member_client(service, service.org.owner_token, mode="legacy") as client,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(answer_in_inbox)
        with anyio.fail_after(WAIT_SECONDS):
            result = await client.call_tool("asks__sign_up", {})
    assert "action=decline" in text_of(result), text_of(result)


async def _has_question(service: Service) -> bool:
    return bool(await service.get("/api/v1/questions?status=pending"))
