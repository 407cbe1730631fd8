"""Limits on calls per member, per API token and per teammate, per fixed UTC minute and day (ORG-11), through the
service served on 127.0.0.1 over real HTTP, on SQLite and PostgreSQL: a call over a limit is refused before it runs
(nothing reaches the server): 429 with `Retry-After` from `POST /api/v1/calls`, an error result naming the limit
over `/mcp` and to the model in a teammate's turn. A call refused by a limit counts nowhere; a call refused by policy
counts. Two replicas on one database count together. Only owners and admins read and set the limits, validated and
audited.

The service runs on a clock the test holds (`Clock`), so a window's reset is a step of the test, not a wait.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent
from sqlalchemy import select

from mcpyard.org.store import LimitCount, open_database
from tests.conftest import Home
from tests.model.openai_fixture import ModelFixture, serve_model
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._served import served_service, serving
from tests.org._service import Service, service_app

pytestmark = pytest.mark.anyio

START = datetime(2026, 12, 5, 12, 0, 30, tzinfo=UTC)
"""Half a minute into a minute, eleven and a half hours before the day ends (UTC)."""
WAIT_SECONDS = 30


class Clock:
    """The time the service counts calls at: moved by the test."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
async def service(database_url: str, home: Home, clock: Clock) -> AsyncIterator[Service]:
    async with served_service(database_url, home.data_home, clock=clock) as served:
        yield served


@pytest.fixture
def model() -> Iterator[ModelFixture]:
    with serve_model() as fixture:
        yield fixture


async def _tools(service: Service, upstream: str) -> dict[str, dict[str, Any]]:
    tools = by_tool(await register(service, upstream))
    for name in ("lookup", "write", "writes"):
        await set_policy(service, tools[name], "run_freely")
    return tools


async def _limits(service: Service, body: dict[str, Any], token: str | None = None) -> httpx2.Response:
    return await service.request("PUT", "/api/v1/limits", json=body, token=token)


async def _set(service: Service, **limits: int | None) -> dict[str, Any]:
    response = await _limits(service, limits)
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()
    return shown


async def _writes(service: Service) -> str:
    """How many times the fixture's `write` ran, asked by the owner."""
    return str((await call(service, "tools__writes"))["content"][0]["text"])


def _refusal(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 429, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "limit_reached"
    return error


async def _two_replicas(stack: AsyncExitStack, database_url: str, home: Home, clock: Clock) -> tuple[Service, Service]:
    """Two replicas of the service on one database, each with its own client (B's organization is A's)."""
    a = await stack.enter_async_context(served_service(database_url, home.data_home / "a", clock=clock))
    app = service_app(database_url, home.data_home / "b", clock=clock)
    origin = await stack.enter_async_context(serving(app))
    client = await stack.enter_async_context(httpx2.AsyncClient(base_url=origin, timeout=60, trust_env=False))
    return a, Service(client, a.org, database_url, home.data_home / "b", app=app)


async def test_org11_a_member_over_the_per_minute_limit_gets_429_with_retry_after_and_nothing_is_sent(
    service: Service, upstream: str, clock: Clock
) -> None:
    await _tools(service, upstream)
    assert (await _set(service, member_per_minute=2))["member_per_minute"] == 2
    member = await service.add_member("member@acme.test")
    for note in ("one", "two"):
        assert (await call(service, "tools__write", {"note": note}, token=member))["ok"] is True
    refused = await service.request(
        "POST", "/api/v1/calls", json={"tool": "tools__write", "arguments": {"note": "three"}}, token=member
    )
    error = _refusal(refused)
    assert refused.headers["retry-after"] == "30", "the minute resets at 12:01:00"
    assert "member limit" in error["message"]
    assert "2 calls per minute" in error["message"]
    assert "12:01:00 UTC" in error["message"]
    assert error["limit"] == "member_per_minute"
    assert await _writes(service) == "2", "the refused call never reached the server"

    clock.now += timedelta(seconds=30)
    assert (await call(service, "tools__write", {"note": "four"}, token=member))["ok"] is True, "a new minute"


async def test_org11_a_per_day_quota_resets_at_midnight_utc(service: Service, upstream: str, clock: Clock) -> None:
    await _tools(service, upstream)
    await _set(service, member_per_day=1)
    assert (await call(service, "tools__lookup", {"key": "k"}))["ok"] is True
    refused = await service.request("POST", "/api/v1/calls", json={"tool": "tools__lookup", "arguments": {"key": "k"}})
    error = _refusal(refused)
    assert refused.headers["retry-after"] == str(11 * 3600 + 59 * 60 + 30)
    assert "per day" in error["message"]
    assert "2026-12-06 00:00 UTC" in error["message"]
    clock.now = datetime(2026, 12, 6, 0, 0, 1, tzinfo=UTC)
    assert (await call(service, "tools__lookup", {"key": "k"}))["ok"] is True


async def test_org11_each_api_token_has_its_own_limit(service: Service, upstream: str) -> None:
    await _tools(service, upstream)
    await _set(service, token_per_minute=1)
    first = (await service.post("/api/v1/tokens", {"label": "first"}, expect=201))["token"]
    second = (await service.post("/api/v1/tokens", {"label": "second"}, expect=201))["token"]
    assert (await call(service, "tools__lookup", {"key": "k"}, token=first))["ok"] is True
    error = _refusal(
        await service.request(
            "POST", "/api/v1/calls", json={"tool": "tools__lookup", "arguments": {"key": "k"}}, token=first
        )
    )
    assert "token limit" in error["message"]
    assert error["limit"] == "token_per_minute"
    assert (await call(service, "tools__lookup", {"key": "k"}, token=second))["ok"] is True, "another token"


async def test_org11_a_call_refused_by_policy_counts_and_one_refused_by_a_limit_does_not(
    service: Service, upstream: str
) -> None:
    tools = await _tools(service, upstream)
    await set_policy(service, tools["destroy"], "off")
    await _set(service, member_per_minute=1)
    refused = await call(service, "tools__destroy", {"target": "x"})
    assert refused["error"]["code"] == "policy_off"
    for _ in range(2):
        _refusal(
            await service.request("POST", "/api/v1/calls", json={"tool": "tools__lookup", "arguments": {"key": "k"}})
        )
    await _set(service, member_per_minute=2)
    assert (await call(service, "tools__lookup", {"key": "k"}))["ok"] is True, "the two refusals did not count"


async def test_org11_an_mcp_tool_call_over_a_limit_gets_an_error_result_naming_it(
    service: Service, upstream: str
) -> None:
    await _tools(service, upstream)
    await _set(service, token_per_minute=1)
    member = await service.add_member("member@acme.test")
    headers = {"Authorization": f"Bearer {member}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60, trust_env=False) as http,
        Client(streamable_http_client(f"{service.origin}/mcp", http_client=http)) as client,
    ):
        ran = await client.call_tool("tools__write", {"note": "one"})
        assert not ran.is_error
        refused = await client.call_tool("tools__write", {"note": "two"})
        assert refused.is_error
        text = "\n".join(block.text for block in refused.content if isinstance(block, TextContent))
        assert "token limit" in text
        assert "1 calls per minute" in text
        assert "resets in 30 s" in text
    assert await _writes(service) == "1", "the refused call never reached the server"


async def test_org11_a_teammates_call_over_its_limit_is_refused_to_the_model(
    service: Service, upstream: str, model: ModelFixture
) -> None:
    tools = await _tools(service, upstream)
    set_model = await service.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
    assert set_model.status_code == 200, set_model.text
    await _set(service, teammate_per_minute=1, member_per_minute=0)
    teammate = await service.post(
        "/api/v1/teammates",
        {"name": "helper", "instructions": "", "server_ids": [tools["write"]["server_id"]]},
        expect=201,
    )
    conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
    model.replies.extend(
        [
            {"tool_calls": [{"name": "tools__write", "arguments": {"note": "one"}}]},
            {"tool_calls": [{"name": "tools__write", "arguments": {"note": "two"}}]},
            {"text": "Done what I could."},
        ]
    )
    with anyio.fail_after(WAIT_SECONDS):
        turn = await service.post(f"/api/v1/conversations/{conversation['id']}/turns", {"message": "write twice"})
    assert turn["status"] == "done", "a member limit of 0 does not touch the teammate's own calls"
    assert [item["status"] for item in turn["calls"]] == ["ran", "refused"]
    [told] = model.tool_messages(2)[-1:]
    assert "teammate limit" in str(told["content"])
    assert "resets in 30 s" in str(told["content"])
    traced = await service.get(f"/api/v1/turns/{turn['id']}")
    steps = [(step["tool"], step["status"], step["error"]) for step in traced["trace"]]
    assert steps == [("tools__write", "ran", None), ("tools__write", "refused", "limit_reached")], (
        "the trace shows both"
    )
    assert "teammate limit" in traced["trace"][1]["summary"]
    usage = await service.get("/api/v1/usage?group_by=tool")
    assert [(item["key"], item["calls"], item["errors"]) for item in usage] == [("tools__write", 1, 0)], "never ran"
    await _set(service)
    assert await _writes(service) == "1", "the refused call never reached the server"


async def test_org11_two_replicas_count_together_on_one_database(
    database_url: str, home: Home, upstream: str, clock: Clock
) -> None:
    async with AsyncExitStack() as stack:
        a, b = await _two_replicas(stack, database_url, home, clock)
        await _tools(a, upstream)
        await _set(a, member_per_minute=4)
        member = await a.add_member("member@acme.test")
        answers: list[int] = []

        async def one(replica: Service, note: str) -> None:
            body = {"tool": "tools__write", "arguments": {"note": note}}
            answers.append((await replica.request("POST", "/api/v1/calls", json=body, token=member)).status_code)

        with anyio.fail_after(WAIT_SECONDS):
            async with anyio.create_task_group() as tg:
                for index in range(5):
                    tg.start_soon(one, a, f"a{index}")
                    tg.start_soon(one, b, f"b{index}")
        assert sorted(answers) == [200] * 4 + [429] * 6, "four calls in all, whichever replica answered"
        for replica in (a, b):
            _refusal(await replica.request("POST", "/api/v1/calls", json={"tool": "tools__writes"}, token=member))
        assert await _writes(b) == "4", "each refused call reached no server"


async def test_org11_limits_set_through_one_replica_hold_at_once_on_another_that_called_before(
    database_url: str, home: Home, upstream: str, clock: Clock
) -> None:
    """A replica remembers an organization's limits while nothing of the organization changes: setting them is a
    change, so the other replica's next call reads them again."""
    async with AsyncExitStack() as stack:
        a, b = await _two_replicas(stack, database_url, home, clock)
        await _tools(a, upstream)
        member = await a.add_member("member@acme.test")
        for note in ("before", "still before"):  # no limit yet: B has read (and kept) that there is none
            assert (await call(b, "tools__write", {"note": note}, token=member))["ok"] is True
        await _set(a, member_per_minute=1)
        assert (await call(b, "tools__write", {"note": "counted"}, token=member))["ok"] is True
        body = {"tool": "tools__write", "arguments": {"note": "over"}}
        _refusal(await b.request("POST", "/api/v1/calls", json=body, token=member))
        await _set(a)  # lifted: B runs the call again at once
        assert (await call(b, "tools__write", {"note": "after"}, token=member))["ok"] is True
        assert await _writes(b) == "4", "the refused call reached no server"


async def test_org11_only_owners_and_admins_read_and_set_limits(service: Service) -> None:
    member = await service.add_member("member@acme.test")
    admin = await service.add_member("admin@acme.test", "admin")
    assert (await service.request("GET", "/api/v1/limits", token=member)).status_code == 403
    assert (await _limits(service, {"member_per_minute": 1}, member)).status_code == 403
    assert (await service.get("/api/v1/limits", token=admin)) == dict.fromkeys(
        [f"{kind}_per_{period}" for kind in ("member", "token", "teammate") for period in ("minute", "day")]
    )
    shown = await _set(service, member_per_minute=10, teammate_per_day=1000)
    assert shown["member_per_minute"] == 10
    assert shown["teammate_per_day"] == 1000
    assert shown["token_per_day"] is None
    assert (await service.get("/api/v1/limits", token=admin)) == shown
    [entry] = await service.get("/api/v1/audit", params={"action": "limits.set"})
    assert entry["actor"] == "owner@acme.test"
    assert entry["old"]["member_per_minute"] is None
    assert entry["new"]["member_per_minute"] == 10


@pytest.mark.parametrize(
    "body",
    [
        {"member_per_minute": -1},
        {"member_per_minute": "5"},
        {"member_per_minute": True},
        {"member_per_minute": 1.5},
        {"token_per_minute": 100_001},
        {"teammate_per_day": 10**12},
        {"member_per_hour": 5},
    ],
)
async def test_org11_a_limit_that_cannot_be_one_is_refused_naming_it(service: Service, body: dict[str, Any]) -> None:
    refused = await _limits(service, body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "invalid_request"
    assert next(iter(body)) in refused.json()["error"]["message"]
    assert (await service.get("/api/v1/limits"))["member_per_minute"] is None, "nothing was set"


async def test_org11_the_counts_of_ended_windows_are_deleted_as_new_windows_start(
    service: Service, upstream: str, clock: Clock
) -> None:
    await _tools(service, upstream)
    await _set(service, member_per_minute=5, member_per_day=100)
    me = (await service.get("/api/v1/me"))["id"]
    assert (await call(service, "tools__lookup", {"key": "k"}))["ok"] is True
    clock.now += timedelta(minutes=3)
    assert (await call(service, "tools__lookup", {"key": "k"}))["ok"] is True
    async with open_database(service.database_url) as db, db.sessions.begin() as session:
        counts = {row.key: row.count for row in await session.scalars(select(LimitCount))}
    minute, day = int(clock.now.timestamp()) // 60 * 60, int(START.timestamp()) // 86_400 * 86_400
    assert counts == {f"member:{me}|minute|{minute}": 1, f"member:{me}|day|{day}": 2}, "the first minute's is gone"


async def test_org11_of_two_limits_reached_the_refusal_names_the_one_that_resets_last(
    service: Service, upstream: str
) -> None:
    await _tools(service, upstream)
    await _set(service, member_per_day=1, token_per_minute=1)
    assert (await call(service, "tools__lookup", {"key": "k"}))["ok"] is True
    refused = await service.request("POST", "/api/v1/calls", json={"tool": "tools__lookup", "arguments": {"key": "k"}})
    assert _refusal(refused)["limit"] == "member_per_day"
    assert refused.headers["retry-after"] == str(11 * 3600 + 59 * 60 + 30), "not before the day ends"
