"""CALL-8 through the gateway, for clients that declare the tasks extension: a call its server answers with a task
is answered with a task of the gateway's own, polled with `tasks/get`, answered with `tasks/update`, cancelled with
`tasks/cancel` (which cancels the server's task too); a call that ends without one is answered as before. A task
id is 192 random bits: a guess hears "task not found" (in the organization, another member does too: see
tests/org/test_org_tasks.py). The gateway in this process, the task fixture server in memory.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError

from mcpyard.gateway import Gateway
from tests._waiting import eventually
from tests.conftest import Home, fixture_server
from tests.gateway.test_serve import in_process_gateway, text_of

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"


class Handle(types.Result):
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class TaskParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskParams):
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"


class TaskState(types.Result):
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class KeepsHandles(ClientExtension):
    """Declares the tasks extension and keeps each handle a call is answered with (the test polls it itself)."""

    identifier = TASKS

    def __init__(self) -> None:
        self.handles: list[Handle] = []

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=Handle, resolve=self.keep),)

    async def keep(self, handle: Handle, ctx: ClaimContext) -> types.CallToolResult:
        del ctx
        self.handles.append(handle)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"task {handle.task_id}")])


async def never_asked(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Declares elicitation: a task's questions come in its `input_required` status, never as requests."""
    raise AssertionError(f"asked directly: {params}")


async def get(client: Client, task_id: str) -> TaskState:
    return await client.session.send_request(GetTask(params=TaskParams(task_id=task_id)), TaskState)


async def until(client: Client, task_id: str, *statuses: str) -> TaskState:
    """The task's state once its status is one of `statuses`: a task announces nothing, it is polled (the protocol)."""
    seen: list[TaskState] = []

    async def reached() -> bool:
        seen.append(await get(client, task_id))
        return seen[-1].status in statuses

    await eventually(reached, within=30, what=f"task {task_id} {' or '.join(statuses)}")
    return seen[-1]


async def handle_of(client: Client, keeper: KeepsHandles, tool: str, arguments: dict[str, Any]) -> str:
    answered = await client.call_tool(tool, arguments)
    assert keeper.handles, f"{tool} was answered at once: {text_of(answered)}"
    return keeper.handles.pop().task_id


async def test_call8_a_client_taking_tasks_gets_the_gateways_task_polls_answers_and_cancels_it(home: Home) -> None:
    keeper = KeepsHandles()
    async with (
        in_process_gateway(home, {"t": fixture_server("tasks"), "basic": fixture_server("basic")}) as (_, gateway),
        Client(gateway.server, extensions=[keeper], elicitation_callback=never_asked) as client,
    ):
        assert TASKS in (client.server_capabilities.extensions or {})
        plain = await client.call_tool("basic__add", {"a": 2, "b": 3})
        assert not keeper.handles, "a call with no task is answered as before"
        assert "\n5\n" in text_of(plain)

        slow = await handle_of(client, keeper, "t__slow", {"seconds": 2})
        done = await until(client, slow, "completed")
        assert done.result is not None
        result = types.CallToolResult.model_validate(done.result)
        assert "slow done after 2 s" in text_of(result)
        assert text_of(result).startswith("<mcp-result-"), "a task's result is shaped like any call's"

        ask = await handle_of(client, keeper, "t__ask", {})
        asking = await until(client, ask, "input_required")
        assert asking.input_requests is not None
        assert len(asking.input_requests) == 1
        [(key, request)] = asking.input_requests.items()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Your name?"
        answer = {"action": "accept", "content": {"name": "Lin"}}
        await client.session.send_request(
            UpdateTask(params=UpdateParams(task_id=ask, input_responses={key: answer})), types.EmptyResult
        )
        greeted = await until(client, ask, "completed")
        assert greeted.result is not None
        assert "hello Lin" in json.dumps(greeted.result)

        forever = await handle_of(client, keeper, "t__forever", {})
        assert (await get(client, forever)).status == "working"
        await client.session.send_request(CancelTask(params=TaskParams(task_id=forever)), types.EmptyResult)
        assert (await until(client, forever, "cancelled", "completed")).status == "cancelled"

        async def cancelled_there() -> bool:  # only the server's own tool says what it was told
            return "[]" not in text_of(await client.call_tool("t__cancelled", {}))

        await eventually(cancelled_there, within=15, what="the server's own task cancelled with it")


async def test_call8_a_task_is_not_found_by_a_guess(home: Home) -> None:
    """With no sign-in, a task's id is the capability to reach it: nothing near it finds it, nor changes it."""
    keeper = KeepsHandles()
    async with (
        in_process_gateway(home, {"t": fixture_server("tasks")}) as (_, gateway),
        Client(gateway.server, extensions=[keeper]) as owner,
    ):
        task_id = await handle_of(owner, keeper, "t__forever", {})
        for guess in ("", "1", task_id[:-1], task_id + "x", "../" + task_id, task_id.upper(), task_id.lower()):
            for request, result in (
                (GetTask(params=TaskParams(task_id=guess)), TaskState),
                (UpdateTask(params=UpdateParams(task_id=guess, input_responses={})), types.EmptyResult),
                (CancelTask(params=TaskParams(task_id=guess)), types.EmptyResult),
            ):
                with pytest.raises(MCPError, match=r"^task not found$"):
                    await owner.session.send_request(request, result)
        assert (await get(owner, task_id)).status == "working", "the guesses changed nothing"
        await owner.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), types.EmptyResult)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_call8_a_client_without_the_extension_is_answered_with_the_result(home: Home, mode: str) -> None:
    """Not declared, the call waits for its task's end."""
    async with (
        in_process_gateway(home, {"t": fixture_server("tasks")}) as (_, gateway),
        Client(gateway.server, mode=mode) as client,
    ):
        assert isinstance(gateway, Gateway)
        with anyio.fail_after(30):
            result = await client.call_tool("t__slow", {"seconds": 1})
        assert "slow done after 1 s" in text_of(result)


async def test_call8_a_handshake_era_servers_task_is_a_task_of_the_gateways_too(home: Home) -> None:
    """The server behind speaks 2025-11-25's tasks; the gateway's client, of the new era, gets the gateway's task."""
    keeper = KeepsHandles()
    async with (
        in_process_gateway(home, {"old": fixture_server("legacy_tasks")}) as (_, gateway),
        Client(gateway.server, extensions=[keeper]) as client,
    ):
        slow = await handle_of(client, keeper, "old__slow", {"seconds": 1})
        done = await until(client, slow, "completed")
        assert done.result is not None
        assert "slow done after 1 s" in text_of(types.CallToolResult.model_validate(done.result))
