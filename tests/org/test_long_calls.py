"""CALL-8 and ORG-9 in the organization service: a long call (its server answered with a task) is kept in the
database. The member's request answers 202 with the call's id when the task does not end in time (at once with
`Prefer: respond-async`); the result is read once, by that member only; the server's questions meanwhile reach the
inbox; and a replica that dies or stops while the task runs hands it to another, which follows the same task to its
result: the call is never sent twice, and the server's task is never cancelled by a replica going away.

The fixture server `tasks` over real HTTP in the test's process; replicas as processes of their own
(`tests/org/_replica.py`, leases of 2 s, sweeps every 0.5 s).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcpyard.org.services import COOKIE
from mcpyard.org.store import TaskCall, new_id, open_database, utcnow
from tests._waiting import eventually
from tests.conftest import Home
from tests.gateway.test_task_handles import CancelTask, KeepsHandles, TaskParams, get, handle_of, until
from tests.model.openai_fixture import serve_model
from tests.org._flows import by_tool, register, set_policy
from tests.org._replica import Replica, replica
from tests.org._service import KEY, Org, Service, running_service, set_up
from tests.org.test_replica_faults import _member as new_member
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio

ASYNC = {"Prefer": "respond-async"}
TAKEN_OVER_SECONDS = 30
"""How soon another replica ends a long call whose replica went away (lease 2 s, sweep 0.5 s, the task 6 s; a loaded
machine)."""


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


async def _start(client: httpx2.AsyncClient, token: str, tool: str, arguments: dict[str, Any]) -> str:
    """A long call started with `Prefer: respond-async`: its id, from the 202."""
    headers = {"Authorization": f"Bearer {token}", **ASYNC}
    response = await client.post("/api/v1/calls", json={"tool": tool, "arguments": arguments}, headers=headers)
    assert response.status_code == 202, response.text
    started = response.json()
    call_id = started["call_id"]
    assert started == {"call_id": call_id, "task": {"id": call_id, "status": "running"}}
    return str(call_id)


async def _read(client: httpx2.AsyncClient, token: str, call_id: str) -> httpx2.Response:
    return await client.get(f"/api/v1/calls/{call_id}", headers={"Authorization": f"Bearer {token}"})


async def _result(client: httpx2.AsyncClient, token: str, call_id: str, *, within: float) -> dict[str, Any]:
    """Read the call until it ended: its result (read once)."""
    read: list[dict[str, Any]] = []

    async def ended() -> bool:
        response = await _read(client, token, call_id)
        assert response.status_code in (200, 202), response.text
        if response.status_code == 200:
            read.append(response.json())
        return bool(read)

    # The task runs on the server; nothing here hears when it ends, so the call is read until it has.
    await eventually(ended, within=within, what="the long call ended")
    return read[0]


async def test_call8_a_long_call_answers_202_and_only_its_member_reads_its_result_once(service: Service) -> None:
    async with serve_http_in_process("tasks") as url:
        tools = by_tool(await register(service, url, name="jobs", token=None))
        await set_policy(service, tools["slow"], "run_freely")
        member = await service.add_member("member@acme.test")
        colleague = await service.add_member("colleague@acme.test")
        globex = await service.add_org("globex", "owner@globex.test")
        call_id = await _start(service.client, member, "jobs__slow", {"seconds": 2})

        [listed] = await service.get("/api/v1/calls", token=member)
        assert (listed["call_id"], listed["status"], listed["tool"], listed["server"]) == (
            call_id,
            "running",
            "jobs__slow",
            "jobs",
        )
        assert "result" not in listed, "a listing never shows a result"
        assert [item["call_id"] for item in await service.get("/api/v1/calls")] == [call_id], "the owner sees it"
        assert await service.get("/api/v1/calls", token=colleague) == [], "a colleague does not"

        async def done_for_the_owner() -> bool:
            return [item["status"] for item in await service.get("/api/v1/calls")] == ["done"]

        # The task ends on the server: the listing is read until it says so.
        await eventually(done_for_the_owner, within=30, what="the long call ended")
        for token in (service.org.owner_token, colleague, globex.owner_token):
            other = await _read(service.client, token, call_id)
            assert other.status_code == 404, other.text  # even an owner: only the member who started it reads it
            assert other.json()["error"]["code"] == "not_found"

        result = await _result(service.client, member, call_id, within=5)
        assert result["ok"] is True, result
        assert "slow done after 2 s" in result["text"]
        assert result["call_id"] == call_id
        again = await _read(service.client, member, call_id)
        assert again.status_code == 410, again.text
        assert again.json()["error"]["code"] == "already_read"
        assert await service.get("/api/v1/calls") == [], "read once: nothing is left to list"
        [used] = await service.get("/api/v1/usage", params={"group_by": "tool"})
        assert (used["key"], used["calls"], used["errors"]) == ("jobs__slow", 1, 0), "recorded once, like any call"


async def test_call8_a_task_that_ends_in_time_is_answered_on_the_request_and_not_kept(service: Service) -> None:
    async with serve_http_in_process("tasks") as url:
        tools = by_tool(await register(service, url, name="jobs", token=None))
        await set_policy(service, tools["quick"], "run_freely")
        await set_policy(service, tools["slow"], "run_freely")
        quick = await service.post("/api/v1/calls", {"tool": "jobs__quick", "arguments": {}})
        slow = await service.post("/api/v1/calls", {"tool": "jobs__slow", "arguments": {"seconds": 1}})
        assert "quick done" in quick["text"]
        assert "slow done after 1 s" in slow["text"]
        assert await service.get("/api/v1/calls") == [], "a result given on its request is not kept for another read"
        gone = await _read(service.client, service.org.owner_token, slow["call_id"])
        assert gone.status_code == 410, gone.text


async def test_call8_a_long_calls_question_reaches_the_inbox_and_its_answer_the_task(service: Service) -> None:
    async with serve_http_in_process("tasks") as url:
        tools = by_tool(await register(service, url, name="jobs", token=None))
        await set_policy(service, tools["ask"], "run_freely")
        call_id = await _start(service.client, service.org.owner_token, "jobs__ask", {})
        asked: list[dict[str, Any]] = []

        async def question_waits() -> bool:
            asked[:] = await service.get("/api/v1/questions", params={"status": "pending"})
            return bool(asked)

        # The server asks at its first poll, a second after the task was made.
        await eventually(question_waits, within=30, what="the task's question reached the inbox")
        [question] = asked
        assert (question["tool"], question["message"]) == ("jobs__ask", "Your name?")
        await service.post(
            f"/api/v1/questions/{question['id']}/answer", {"action": "accept", "content": {"name": "Ada"}}
        )
        result = await _result(service.client, service.org.owner_token, call_id, within=30)
        assert "hello Ada" in result["text"], result


async def test_call8_malformed_reads_of_a_long_call_get_one_clear_error_each(service: Service) -> None:
    for path in ("/api/v1/calls/nope", "/api/v1/calls/%00", f"/api/v1/calls/{'x' * 5000}", "/api/v1/calls/%2e%2e"):
        response = await service.request("GET", path)
        assert response.status_code == 404, (path, response.text)
        assert response.json()["error"]["code"] == "not_found"
    for prefer in ("respond-async; wait=0", "RESPOND-ASYNC", "handling=lenient, respond-async", "wait=abc"):
        body = {"tool": "nope__missing", "arguments": {}}
        headers = {**service.headers(), "Prefer": prefer}
        response = await service.client.post("/api/v1/calls", json=body, headers=headers)
        assert response.status_code == 200, response.text  # refused as any unknown tool: no task was made
        assert response.json()["ok"] is False
    for path in ("/api/v1/calls", "/api/v1/calls/nope"):  # signed out, or with a cookie the service never signed
        for headers in ({}, {"Cookie": f"{COOKIE}=forged.value"}, {"Authorization": "Bearer not-a-token"}):
            response = await service.client.get(path, headers=headers)
            assert response.status_code == 401, (path, headers, response.text)
    asking_async = {**service.headers(), "Prefer": "respond-async", "Content-Type": "application/json"}
    for sent, status in (
        (b'{"tol": "jobs__slow"}', 422),  # a misspelt field
        (b'{"tool": "jobs__slow", "arguments": {', 400),  # a body cut short
        (b'{"tool": "\\ud800"}', 422),  # a lone surrogate, named in the answer
        (b'{"tool": "x", "arguments": {"k": "' + b"x" * (2 * 1024 * 1024) + b'"}}', 413),
    ):
        response = await service.client.post("/api/v1/calls", content=sent, headers=asking_async)
        assert response.status_code == status, (sent[:40], response.text[:300])
        assert "Traceback" not in response.text
    assert await service.get("/api/v1/calls") == [], "no probe made a long call"


@dataclass
class Replicas:
    """Replicas A and B of one service, an API client for each, the owner's headers, and the server `jobs` (the
    fixture `tasks`) registered with every tool run freely."""

    a: Replica
    b: Replica
    on_a: httpx2.AsyncClient
    on_b: httpx2.AsyncClient
    owner: dict[str, str]
    server_id: str


async def _replicas(stack: AsyncExitStack, database_url: str, home: Home, org: Org, url: str) -> Replicas:
    a = await stack.enter_async_context(replica(database_url, home.data_home / "a", KEY))
    b = await stack.enter_async_context(replica(database_url, home.data_home / "b", KEY))
    on_a, on_b = [
        await stack.enter_async_context(httpx2.AsyncClient(base_url=r.origin, timeout=60, trust_env=False))
        for r in (a, b)
    ]
    owner = {"Authorization": f"Bearer {org.owner_token}"}
    created = await on_a.post("/api/v1/servers", json={"name": "jobs", "url": url}, headers=owner)
    assert created.status_code == 201, created.text
    for tool in created.json()["tools"]:
        policy = {"policy": "run_freely", "definition_hash": tool["definition_hash"]}
        set_ = await on_a.put(f"/api/v1/tools/{tool['id']}/policy", json=policy, headers=owner)
        assert set_.status_code == 200, set_.text
    return Replicas(a, b, on_a, on_b, owner, created.json()["id"])


async def _tool_text(client: httpx2.AsyncClient, owner: dict[str, str], tool: str) -> Any:
    """What a fixture tool of `jobs` answers, read as JSON."""
    response = await client.post("/api/v1/calls", json={"tool": tool, "arguments": {}}, headers=owner)
    assert response.status_code == 200, response.text
    return json.loads(response.json()["content"][0]["text"])


@pytest.mark.long
@pytest.mark.parametrize("how", ["killed", "stopped"])
async def test_call8_org9_a_long_call_outlives_its_replica_and_is_never_sent_twice(
    database_url: str, home: Home, how: str
) -> None:
    if how == "stopped" and database_url.startswith("postgresql"):
        pytest.skip("a replica stopping hands its tasks on the same way whatever the database: once is enough")
    org = await set_up(database_url)
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serve_http_in_process("tasks"))
        two = await _replicas(stack, database_url, home, org, url)
        call_id = await _start(two.on_a, org.owner_token, "jobs__slow", {"seconds": 6})
        if how == "killed":
            await two.a.kill()  # SIGKILL: A renews nothing and tidies nothing
        else:
            two.a.process.terminate()  # SIGTERM: A stops as a deploy stops it
            await two.a.process.wait()
        result = await _result(two.on_b, org.owner_token, call_id, within=TAKEN_OVER_SECONDS)
        assert result["ok"] is True, result
        assert "slow done after 6 s" in result["text"], "B followed the same task to its end"
        made = await _tool_text(two.on_b, two.owner, "jobs__made")
        assert made.get("slow") == 1, "the call was sent once, never again by B"
        cancelled = await _tool_text(two.on_b, two.owner, "jobs__cancelled")
        assert cancelled == [], "no replica cancelled the server's task on its way out"
        [used] = [
            row
            for row in (await two.on_b.get("/api/v1/usage", params={"group_by": "tool"}, headers=two.owner)).json()
            if row["key"] == "jobs__slow"
        ]
        assert used["calls"] == 1, "one record of the call: B's, when it ended"
        assert "Traceback" not in two.b.log


async def test_call8_a_turns_long_call_shows_running_in_its_trace_until_it_ends(service: Service) -> None:
    with serve_model() as model:
        async with serve_http_in_process("tasks") as url:
            tools = by_tool(await register(service, url, name="jobs", token=None))
            await set_policy(service, tools["slow"], "run_freely")
            endpoint = {"base_url": model.base_url, "model": "scripted"}
            assert (await service.request("PUT", "/api/v1/model", json=endpoint)).status_code == 200
            teammate = await service.post(
                "/api/v1/teammates", {"name": "helper", "server_ids": [tools["slow"]["server_id"]]}, expect=201
            )
            conversation = await service.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
            model.replies.extend(
                [{"tool_calls": [{"name": "jobs__slow", "arguments": {"seconds": 4}}]}, {"text": "It is done."}]
            )
            running: list[dict[str, Any]] = []
            turns: list[dict[str, Any]] = []

            async def trace_says_running() -> bool:
                shown = await service.get(f"/api/v1/conversations/{conversation['id']}")
                if not shown["turns"]:
                    return False
                turn = await service.get(f"/api/v1/turns/{shown['turns'][0]['id']}")
                running[:] = [step for step in turn["trace"] if step["status"] == "running"]
                return bool(running)

            async def take_turn() -> None:
                path = f"/api/v1/conversations/{conversation['id']}/turns"
                turns.append(await service.post(path, {"message": "run the slow job"}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(take_turn)
                # The turn waits on the server's task; nothing here hears its steps, so the trace is read.
                await eventually(trace_says_running, within=30, what="the turn's trace shows the long call running")
            [step] = running
            assert (step["server"], step["tool"], step["arguments"]) == ("jobs", "jobs__slow", {"seconds": 4})
            [turn] = turns
            assert (turn["status"], turn["reply"]) == ("done", "It is done.")
            ended = await service.get(f"/api/v1/turns/{turn['id']}")
            assert [(step["tool"], step["status"]) for step in ended["trace"]] == [("jobs__slow", "ran")]
            assert await service.get("/api/v1/calls") == [], "the turn took the result: nothing is kept to read"


@asynccontextmanager
async def _mcp(origin: str, token: str, keeper: KeepsHandles) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60, trust_env=False) as http,
        Client(streamable_http_client(f"{origin}/mcp", http_client=http), extensions=[keeper]) as client,
    ):
        yield client


@pytest.mark.long
async def test_call8_org9_a_members_mcp_task_is_polled_on_any_replica_and_outlives_the_one_that_made_it(
    database_url: str, home: Home
) -> None:
    org = await set_up(database_url)
    member = await new_member(database_url, org, "member@acme.test", "member")
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serve_http_in_process("tasks"))
        two = await _replicas(stack, database_url, home, org, url)
        keeper = KeepsHandles()
        on_a = await stack.enter_async_context(_mcp(two.a.origin, org.owner_token, keeper))
        task_id = await handle_of(on_a, keeper, "jobs__slow", {"seconds": 6})
        on_b = await stack.enter_async_context(_mcp(two.b.origin, org.owner_token, KeepsHandles()))
        assert (await get(on_b, task_id)).status == "working", "B answers for the task A made"
        colleague = await stack.enter_async_context(_mcp(two.b.origin, member, KeepsHandles()))
        with pytest.raises(MCPError, match=r"^task not found$"):
            await get(colleague, task_id)  # the owner's task, not a colleague's
        await two.a.kill()  # the call's replica dies; B takes the call over and follows the same task
        done = await until(on_b, task_id, "completed")
        assert done.result is not None
        assert "slow done after 6 s" in json.dumps(done.result)
        with pytest.raises(MCPError, match=r"^task not found$"):
            await get(on_b, task_id)  # its result is given once
        made = await _tool_text(two.on_b, two.owner, "jobs__made")
        assert made.get("slow") == 1, "sent once, never again by B"
        assert "Traceback" not in two.b.log


@pytest.mark.long
async def test_call8_a_long_call_whose_server_was_pointed_elsewhere_is_never_asked_for_there(
    database_url: str, home: Home
) -> None:
    """The sealed task id goes only to the server that made the task: an admin points the server at another address
    while the call's replica is dead; the replica taking the call over ends it, saying why, and the other address
    never hears of the task."""
    if database_url.startswith("postgresql"):
        pytest.skip("which server may be asked is the take-over's rule, whatever the database: once is enough")
    org = await set_up(database_url)
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serve_http_in_process("tasks"))
        elsewhere = await stack.enter_async_context(serve_http_in_process("tasks"))
        two = await _replicas(stack, database_url, home, org, url)
        call_id = await _start(two.on_a, org.owner_token, "jobs__slow", {"seconds": 6})
        await two.a.kill()
        edit = {"url": elsewhere}
        moved = await two.on_b.patch(f"/api/v1/servers/{two.server_id}", json=edit, headers=two.owner)
        assert moved.status_code == 200, moved.text
        result = await _result(two.on_b, org.owner_token, call_id, within=TAKEN_OVER_SECONDS)
        assert result["ok"] is False
        assert result["error"]["code"] == "task_lost"
        assert "server 'jobs' changed" in result["error"]["message"]
        polls = await _tool_text(two.on_b, two.owner, "jobs__polls")
        assert polls["polls"] == 0, "the other address never heard of it"


async def test_call8_a_long_call_no_replica_could_follow_for_a_day_is_given_up_saying_so(
    database_url: str, home: Home
) -> None:
    """A long call whose replicas kept failing to follow it (its lease lapsed, again and again) ends after a day:
    `task_lost`, read once by its member like any result; its task id is never asked for again."""
    async with running_service(database_url, home.data_home, sweep_seconds=0.2) as service:
        me = await service.get("/api/v1/me")
        call_id, long_ago = new_id(), utcnow() - timedelta(days=2)
        async with open_database(database_url) as db, db.sessions.begin() as session:
            session.add(
                TaskCall(
                    id=call_id,
                    org_id=service.org.org_id,
                    member_id=me["id"],
                    conversation="c",
                    tool="jobs__slow",
                    server="jobs",
                    target="t",
                    arguments={},
                    key_id="k",
                    sealed_task=b"not a sealed value",
                    created_at=long_ago,
                    held_until=long_ago,
                )
            )
        result = await _result(service.client, service.org.owner_token, call_id, within=30)
        assert result["error"]["code"] == "task_lost", result
        assert "within a day" in result["error"]["message"]


async def test_call8_org9_a_members_mcp_task_is_cancelled_through_a_replica_not_following_it(
    database_url: str, home: Home
) -> None:
    """`tasks/cancel` reaches the server's task from any replica: B marks it, A (which follows it) cancels the call at
    its next renewal and the server hears `tasks/cancel`; B then says `cancelled`."""
    if database_url.startswith("postgresql"):
        pytest.skip("how a cancel travels between replicas is the same whatever the database: once is enough")
    org = await set_up(database_url)
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serve_http_in_process("tasks"))
        two = await _replicas(stack, database_url, home, org, url)
        keeper = KeepsHandles()
        on_a = await stack.enter_async_context(_mcp(two.a.origin, org.owner_token, keeper))
        task_id = await handle_of(on_a, keeper, "jobs__forever", {})
        on_b = await stack.enter_async_context(_mcp(two.b.origin, org.owner_token, KeepsHandles()))
        assert (await get(on_b, task_id)).status == "working"
        await on_b.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), types.EmptyResult)
        assert (await until(on_b, task_id, "cancelled")).status == "cancelled"

        async def cancelled_on_the_server() -> bool:
            return len(await _tool_text(two.on_b, two.owner, "jobs__cancelled")) == 1

        # A cancels at its next renewal (every third of its 2 s lease); nothing here hears it, so the server is asked.
        await eventually(cancelled_on_the_server, within=20, what="the server's task was cancelled by A")
        assert "Traceback" not in two.a.log + two.b.log
