"""Tool calls a server answers with a task: the `io.modelcontextprotocol/tasks` extension (2026-07-28, CALL-8).

mcpyard declares the extension to every server of the new era. A server may then answer a
`tools/call` with a task handle (`resultType: "task"`) instead of the result; `TaskCalls` finishes
such a call inside `Client.call_tool`, so to the rest of the host it is one call like any other:

- it polls `tasks/get` at the interval the server asks for, never more often than once a second
  (nor less than every `MAX_POLL_SECS`), each poll reported as the call's progress (which also
  moves the call's timeout on: a task that keeps answering is not cut short, the call's overall
  limit still holds);
- a task that needs input (`input_required`) has each request it lists put to whoever answers the
  call's questions, through the same callbacks as a question asked within a call, once per key,
  and the answers sent back with `tasks/update`;
- `completed` gives the call's result (shaped like any other by the pipeline); `failed` is the
  server's error; `cancelled` an error result saying so;
- a call that is given up (its timeout, a cancel, Ctrl-C) sends `tasks/cancel` on its way out, unless whoever
  noticed the task detached it (`MadeTask.detach`: a service stopping hands the task to another process);
- a call made `resuming_task(task_id)` sends nothing new: it follows a task an earlier call (of this process or of
  another one that stopped) was answered with, to its result.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio
import mcp_types as types
from mcp.client.context import ClientRequestContext
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

__all__ = [
    "FACE_TASK",
    "MAX_POLL_SECS",
    "MIN_POLL_SECS",
    "TASKS_EXTENSION",
    "TASK_CALLS",
    "MadeTask",
    "TaskCalls",
    "finish_task",
    "noticing_tasks",
    "progress_report",
    "reporting_progress",
    "resume_task",
    "resumed_task",
    "resuming_task",
    "task_made",
]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
MIN_POLL_SECS: Final = 1.0
MAX_POLL_SECS: Final = 30.0
CANCEL_SECS: Final = 5.0
"""How long a call given up waits for the server to acknowledge `tasks/cancel`."""
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
MAX_INPUTS: Final = 64
"""Input requests one task may put to the call's answerer; a task asking for more is cancelled (a hostile server
would otherwise keep a person answering forever)."""
MAX_STATUS_CHARS: Final = 300
"""A task's status message, as reported for progress, is cut here."""
FACE_TASK: Final = "face_task"
"""The label (`MadeTask.labels`) under which a face names its own task for a server's task."""

ProgressReport = Callable[[float, float | None, str | None], Awaitable[None]]
_PROGRESS: ContextVar[ProgressReport | None] = ContextVar("mcpyard_task_progress", default=None)
_MADE: ContextVar[tuple[Callable[[MadeTask], None], ...]] = ContextVar("mcpyard_task_made", default=())
_RESUMED: ContextVar[str | None] = ContextVar("mcpyard_task_resumed", default=None)
_INPUTS: TypeAdapter[types.InputRequests] = TypeAdapter(types.InputRequests)


class reporting_progress:
    """Within this block, a task that answers the call reports each poll to `report` (the call's progress).

    A class rather than a generator: every tool call opens one, and this costs a third as much.
    """

    __slots__ = ("_report", "_token")

    def __init__(self, report: ProgressReport | None) -> None:
        self._report = report

    def __enter__(self) -> None:
        self._token = _PROGRESS.set(self._report)

    def __exit__(self, *exc_info: object) -> None:
        _PROGRESS.reset(self._token)


@dataclass(eq=False, slots=True)
class MadeTask:
    """A task a server answered a call with, as those who notice it (`noticing_tasks`) see it."""

    task_id: str
    """The server's id for it: whoever holds it may read the task's result (keep it as a secret)."""
    era: Literal["extension", "2025-11-25"]
    """The tasks extension (any connection to the server may follow it), or the 2025-11-25 protocol's."""
    detached: bool = False
    labels: dict[str, str] = field(default_factory=dict)
    """What those noticing it call it, for each other (a gateway: the id of its own task for it)."""

    def detach(self) -> None:
        """Leave the task running on the server when the call ends unfinished (no `tasks/cancel`): another
        process takes it over (`resuming_task`)."""
        self.detached = True


@contextlib.contextmanager
def noticing_tasks(made: Callable[[MadeTask], None]) -> Iterator[None]:
    """Within this block, `made` is called when a server answers the call with a task, before it is polled
    (a gateway then answers its own client with a task of its own). Blocks nest: everyone noticing hears."""
    token = _MADE.set((*_MADE.get(), made))
    try:
        yield
    finally:
        _MADE.reset(token)


@contextlib.contextmanager
def resuming_task(task_id: str) -> Iterator[None]:
    """Within this block, a tool call sends nothing: it follows the server's task `task_id` (of the tasks
    extension) to its result, as if the call had just been answered with it."""
    token = _RESUMED.set(task_id)
    try:
        yield
    finally:
        _RESUMED.reset(token)


def resumed_task() -> str | None:
    """The task the call under way follows instead of calling (`resuming_task`), if any."""
    return _RESUMED.get()


def progress_report() -> ProgressReport | None:
    """Where the call under way reports a task's polls (`reporting_progress`), if anywhere."""
    return _PROGRESS.get()


def task_made(made: MadeTask) -> None:
    """Tell whoever notices (`noticing_tasks`) that the call under way was answered with a task."""
    for notice in _MADE.get():
        notice(made)


class CreatedTask(types.Result):
    """A `tools/call` answered with a task handle."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class _TaskParams(types.RequestParams):
    task_id: str


class _UpdateParams(_TaskParams):
    input_responses: dict[str, Any]


class _GetTask(types.Request[_TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"  # streamable HTTP routes a task's requests by `Mcp-Name`


class _UpdateTask(types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class _CancelTask(types.Request[_TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class _TaskState(types.Result):
    """What `tasks/get` answers: the task's status and, by status, its result, error or input requests."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskCalls(ClientExtension):
    """The tasks extension as a client: declared to the server, and each task a call is answered with finished."""

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=_finish),)


TASK_CALLS = TaskCalls()
"""The tasks extension as every connection declares it (it keeps nothing between calls)."""


async def finish_task(client: Any, tool: str, handle: Any) -> types.CallToolResult:
    """Follow the task a `tools/call` of `tool` was answered with (its handle, as JSON) to the call's result, as the
    extension's claim does inside `Client.call_tool`.

    Raises:
        ValidationError: the handle is not one.
        MCPError: the task failed.
        RuntimeError: the result does not match the tool's output schema.
    """
    created = CreatedTask.model_validate(handle, by_name=False)
    result = await _finish(created, ClaimContext(session=client.session, tool_name=tool, read_timeout_seconds=None))
    if not result.is_error:
        await client.session.validate_tool_result(tool, result)
    return result


async def resume_task(client: Any, tool: str, task_id: str) -> types.CallToolResult:
    """Follow the server's task `task_id`, made for a call of `tool` earlier (here or by another process), to the
    call's result; raises as `finish_task`."""
    return await finish_task(client, tool, {"resultType": "task", "taskId": task_id, "status": "working"})


async def _finish(created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
    state = await _until_ended(created, ctx)
    if state.status == "completed":
        return _result(state)
    if state.status == "failed":
        error = state.error or {}
        code = error.get("code")
        message = error.get("message") or state.status_message or "the task failed"
        raise MCPError(code if isinstance(code, int) else types.INTERNAL_ERROR, str(message))
    if state.status == "cancelled":
        text = f"the server cancelled the task ({state.status_message or 'no reason given'})"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
    raise RuntimeError(f"the task's status {state.status!r} is not one the tasks extension defines")


async def _until_ended(created: CreatedTask, ctx: ClaimContext) -> _TaskState:
    """Poll the task until it ends (or its status is one we do not know), answering what it asks meanwhile."""
    task_id, status = created.task_id, created.status
    interval, polls = poll_secs(created.poll_interval_ms), 0
    report = progress_report()
    made = MadeTask(task_id, "extension")
    task_made(made)
    answered: set[str] = set()
    try:
        while True:
            if polls or status not in TERMINAL:  # a task made already finished is read at once
                await anyio.sleep(interval)
            state = await ctx.session.send_request(
                _GetTask(params=_TaskParams(task_id=task_id)), _TaskState, ctx.read_timeout_seconds
            )
            polls += 1
            status, interval = state.status, poll_secs(state.poll_interval_ms)
            if report is not None:
                await report(float(polls), None, _said(state))
            if status == "input_required":
                await _answer(ctx, task_id, state.input_requests or {}, answered)
            elif status != "working":
                break
    except BaseException:
        if status not in TERMINAL and not made.detached:
            await _cancel(ctx, task_id)
        raise
    if status not in TERMINAL:
        await _cancel(ctx, task_id)
    return state


async def _cancel(ctx: ClaimContext, task_id: str) -> None:
    """Tell the server the task is no longer wanted (shielded: the call may be on its way out, cancelled)."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_SECS), contextlib.suppress(Exception):
        await ctx.session.send_request(_CancelTask(params=_TaskParams(task_id=task_id)), types.EmptyResult)


def poll_secs(poll_interval_ms: float | None) -> float:
    """Seconds to a task's next poll: the server's wish (either era), within `MIN_POLL_SECS` and `MAX_POLL_SECS`."""
    if poll_interval_ms is None or not math.isfinite(poll_interval_ms):
        return MIN_POLL_SECS
    return min(max(poll_interval_ms / 1000, MIN_POLL_SECS), MAX_POLL_SECS)


def _said(state: _TaskState) -> str:
    status = state.status[:40]
    return f"task {status}: {state.status_message[:MAX_STATUS_CHARS]}" if state.status_message else f"task {status}"


def _result(state: _TaskState) -> types.CallToolResult:
    if state.result is None:
        raise RuntimeError("the task completed without a result")
    return types.CallToolResult.model_validate(state.result, by_name=False)


async def _answer(ctx: ClaimContext, task_id: str, listed: dict[str, Any], answered: set[str]) -> None:
    """Put each input request not answered yet to the call's answerer; send the answers with `tasks/update`."""
    try:
        requests = _INPUTS.validate_python({key: value for key, value in listed.items() if key not in answered})
    except ValidationError:
        raise RuntimeError("the task asked for input in a shape the protocol does not define") from None
    if not requests:
        return
    if len(answered) + len(requests) > MAX_INPUTS:
        raise RuntimeError(f"the task asked for more than {MAX_INPUTS} inputs; it was cancelled")
    responses: dict[str, Any] = {}
    for key, request in requests.items():
        meta = request.params.meta if request.params is not None else None
        asked = ClientRequestContext(session=ctx.session, request_id=key, meta=meta)
        response = await ctx.session.dispatch_input_request(asked, request)
        if isinstance(response, types.ErrorData):
            # No one could answer: an elicitation is declined; for anything else the server hears the error.
            responses[key] = (
                {"action": "decline"}
                if isinstance(request, types.ElicitRequest)
                else response.model_dump(by_alias=True, mode="json", exclude_none=True)
            )
        else:
            responses[key] = response.model_dump(by_alias=True, mode="json", exclude_none=True)
        answered.add(key)
    update = _UpdateTask(params=_UpdateParams(task_id=task_id, input_responses=responses))
    await ctx.session.send_request(update, types.EmptyResult, ctx.read_timeout_seconds)
