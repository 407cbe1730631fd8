"""CALL-8 in the organization service: a call whose server answers with a task (the tasks extension) runs to its
result through `POST /api/v1/calls`, recorded like any call; through `/mcp`, a member's client that takes tasks gets
a task of the service's own, which no other member nor organization finds. (A long call kept in the database, and
taken over by another replica: tests/org/test_long_calls.py.)

The service's API, the fixture server `tasks` over real HTTP in the test's process.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import Home
from tests.gateway.test_task_handles import (
    TASKS,
    CancelTask,
    GetTask,
    KeepsHandles,
    TaskParams,
    TaskState,
    get,
    handle_of,
)
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._served import served_service
from tests.org._service import Service, running_service
from tests.org.test_mcp import mcp_client
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    if database_url.startswith("postgresql"):
        pytest.skip("the task is the host's, whatever the database: once is enough")
    async with running_service(database_url, home.data_home) as running:
        yield running


async def test_call8_a_members_call_answered_with_a_task_runs_to_its_result(service: Service) -> None:
    async with serve_http_in_process("tasks") as url:
        tools = by_tool(await register(service, url, name="jobs", token=None))
        await set_policy(service, tools["slow"], "run_freely")
        with anyio.fail_after(60):
            done = await call(service, "jobs__slow", {"seconds": 2})
        assert done["ok"] is True, done
        assert "slow done after 2 s" in done["text"]
        [used] = await service.get("/api/v1/usage", params={"group_by": "tool"})
        assert (used["key"], used["calls"], used["errors"]) == ("jobs__slow", 1, 0), "recorded like any call"


async def test_call8_a_members_task_over_mcp_is_found_by_that_member_only(database_url: str, home: Home) -> None:
    if database_url.startswith("postgresql"):
        pytest.skip("who finds a task is the face's rule, whatever the database: once is enough")
    keeper = KeepsHandles()
    async with served_service(database_url, home.data_home) as service, serve_http_in_process("tasks") as url:
        tools = by_tool(await register(service, url, name="jobs", token=None))
        await set_policy(service, tools["forever"], "run_freely")
        colleague = await service.add_member("colleague@acme.test")
        globex = await service.add_org("globex", "owner@globex.test")
        async with mcp_client(service, service.org.owner_token, extensions=[keeper]) as mine:
            task_id = await handle_of(mine, keeper, "jobs__forever", {})
            assert (await get(mine, task_id)).status == "working"
            for token in (colleague, globex.owner_token):
                async with mcp_client(service, token, extensions=[KeepsHandles()]) as other:
                    for request, result in (
                        (GetTask(params=TaskParams(task_id=task_id)), TaskState),
                        (CancelTask(params=TaskParams(task_id=task_id)), types.EmptyResult),
                    ):
                        with pytest.raises(MCPError, match=r"^task not found$"):
                            await other.session.send_request(request, result)
            assert (await get(mine, task_id)).status == "working", "no one else changed it"
            await mine.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), types.EmptyResult)
            assert (await get(mine, task_id)).status == "cancelled"


async def test_call8_tasks_over_mcp_refuse_malformed_requests_with_one_error_each(
    database_url: str, home: Home
) -> None:
    """An attacker's variants of `tasks/get`, `tasks/update` and `tasks/cancel`: a misspelt field, a lone surrogate,
    a number for the id, a body cut short, a huge body, no token. Each gets one error, none a traceback, and a
    member's running task is unchanged."""
    if database_url.startswith("postgresql"):
        pytest.skip("the requests are the face's to refuse, whatever the database: once is enough")
    keeper = KeepsHandles()
    async with served_service(database_url, home.data_home) as service, serve_http_in_process("tasks") as url:
        tools = by_tool(await register(service, url, name="jobs", token=None))
        await set_policy(service, tools["forever"], "run_freely")
        async with mcp_client(service, service.org.owner_token, extensions=[keeper]) as mine:
            task_id = await handle_of(mine, keeper, "jobs__forever", {})
            headers = {
                "Authorization": f"Bearer {service.org.owner_token}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "MCP-Protocol-Version": "2026-07-28",
            }
            meta = {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
                "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
            }

            def rpc(method: str, params: dict[str, Any]) -> bytes:
                body = {"jsonrpc": "2.0", "id": 9, "method": method, "params": {**params, "_meta": meta}}
                return json.dumps(body).encode()

            probes = [
                ("tasks/get", rpc("tasks/get", {"taskid": task_id})),
                ("tasks/get", rpc("tasks/get", {"taskId": 12345})),
                ("tasks/cancel", rpc("tasks/cancel", {"taskId": "\ud800"})),
                ("tasks/update", rpc("tasks/update", {"taskId": task_id, "inputResponses": "yes"})),
                ("tasks/update", rpc("tasks/update", {"taskId": task_id, "inputResponses": {"k": {"action": 7}}})),
                ("tasks/get", rpc("tasks/get", {"taskId": task_id})[:-10]),
                ("tasks/update", rpc("tasks/update", {"taskId": task_id, "inputResponses": {"k": "x" * 3_000_000}})),
            ]
            async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
                for method, body in probes:
                    answer = await http.post(
                        f"{service.origin}/mcp", content=body, headers={**headers, "Mcp-Method": method}
                    )
                    assert answer.status_code in (400, 413), (method, answer.status_code, answer.text)
                    assert "Traceback" not in answer.text
                    payload = answer.json()
                    assert "error" in payload, (method, payload)
                    assert task_id not in answer.text, "no answer echoes the task's id to a malformed request"
                unsigned = await http.post(
                    f"{service.origin}/mcp",
                    content=rpc("tasks/get", {"taskId": task_id}),
                    headers={key: value for key, value in headers.items() if key != "Authorization"}
                    | {"Mcp-Method": "tasks/get"},
                )
                assert unsigned.status_code == 401
            assert (await get(mine, task_id)).status == "working", "no probe changed the task"
            await mine.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), types.EmptyResult)
