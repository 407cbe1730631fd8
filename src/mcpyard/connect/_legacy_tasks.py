"""Tool calls run as tasks of the 2025-11-25 protocol (experimental there), for handshake-era servers (CALL-8).

A handshake-era server marks a tool that must run as a task with `execution.taskSupport:
"required"`, and declares task-augmented `tools/call` in its `tasks` capability. mcpyard then
sends the call with `task` (the lifetime it asks for), gets the task back (`CreateTaskResult`)
and finishes it inside the call, so to the rest of the host it is one call like any other:

- it polls `tasks/get` at the interval the server asks for, within the bounds of the tasks
  extension (never more than once a second, at least every `MAX_POLL_SECS`), each poll reported
  as the call's progress (which moves the call's timeout on, as for the extension);
- once the task needs input (`input_required`) or has ended, it asks for the result with
  `tasks/result`, which the server answers at the task's end; a question the server asks
  meanwhile comes as a request of its own and reaches whoever answers the call's questions, as
  during any call; polls go on while a task that needed input works on;
- `completed` gives the result `tasks/result` answered (shaped like any other by the pipeline),
  `failed` the server's error, `cancelled` an error result saying so;
- a task not ended within its lifetime (what mcpyard asked for, or less if the server granted
  less; past it the server may forget the task) is given up: a `timeout` error;
- a call or task given up (its timeout, a cancel, Ctrl-C, its lifetime) sends `tasks/cancel`.

A tool the server merely offers as a task (`taskSupport: "optional"`) is called plainly: its
result comes as soon as it is ready, with no poll in between. New-era servers' tasks are the
tasks extension's (`_tasks.py`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Mapping
from typing import Any, Final

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import CallOptions, Outbound, ProgressFnT
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpyard.connect._tasks import (
    CANCEL_SECS,
    MAX_STATUS_CHARS,
    MadeTask,
    poll_secs,
    progress_report,
    task_made,
)
from mcpyard.errors import CallError

__all__ = [
    "TASK_TTL_SECS",
    "call_as_task",
    "lifetime_secs",
    "requires_task",
    "runs_as_task",
    "takes_task_calls",
    "takes_tasks",
]

TASK_TTL_SECS: Final = 3600.0
"""The lifetime mcpyard asks for a task (the call's timeout when that is longer; none asked when the call has
no timeout): a task not ended by then is cancelled."""
STATUSES: Final = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
ENDED: Final = frozenset({"completed", "failed", "cancelled"})
ANSWERED_AT: Final = frozenset({"input_required", "completed", "failed"})
"""Statuses at which `tasks/result` is asked for (the server sends a task's questions while it waits)."""

Outcome = types.CallToolResult | Exception


class _TaskState(types.Result):
    """A task as `tasks/get` (and `CreateTaskResult.task`) describes it; fields mcpyard does not use are ignored."""

    task_id: str
    status: str
    status_message: str | None = None
    ttl: int | None = None
    poll_interval: int | None = None


class _Created(types.Result):
    task: _TaskState


def requires_task(tool: Mapping[str, Any]) -> bool:
    """A listed tool (wire form) that can run only as a task: `execution.taskSupport` is `required`."""
    execution = tool.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") == "required"


def takes_task_calls(client: Client) -> bool:
    """A handshake-era server that declares task-augmented `tools/call` (2025-11-25)."""
    if client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return False
    tasks = client.server_capabilities.tasks
    requests = tasks.requests if tasks is not None else None
    return requests is not None and requests.tools is not None and requests.tools.call is not None


def takes_tasks(client: Client) -> bool:
    """Whether the server can run a tool that requires tasks: a new-era one answers its call with a task of the
    tasks extension (which mcpyard declares to it), a handshake-era one must declare task calls."""
    return client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS or takes_task_calls(client)


def runs_as_task(client: Client, tools: Iterable[Mapping[str, Any]], tool: str) -> bool:
    """Whether a call of `tool` goes as a 2025-11-25 task: the server takes task calls and lists it as requiring one."""
    return takes_task_calls(client) and any(listed.get("name") == tool and requires_task(listed) for listed in tools)


def lifetime_secs(asked_secs: float | None, granted_ms: int | None) -> float:
    """How long a task is followed: the lifetime asked for, or the server's `ttl` when shorter (one not above 0 is
    no lifetime; infinity when neither says one)."""
    granted = granted_ms / 1000 if granted_ms is not None and granted_ms > 0 else None
    said = [secs for secs in (asked_secs, granted) if secs is not None]
    return min(said) if said else math.inf


async def call_as_task(
    client: Client,
    server_id: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    timeout_secs: float | None,
    progress: ProgressFnT | None,
) -> types.CallToolResult:
    """Call `tool` as a task and follow the task to its end.

    Raises:
        MCPError: the server's error (for the call, a poll, or the failed task's result).
        CallError: `timeout`, the task did not end within its lifetime (it was cancelled).
        RuntimeError, ValidationError: the server sent something the protocol does not define.
    """
    asked = None if timeout_secs is None else max(TASK_TTL_SECS, timeout_secs)
    task = {} if asked is None else {"ttl": round(asked * 1000)}
    raw = await _send_call(client, {"name": tool, "arguments": arguments, "task": task}, progress)
    if "task" in raw:
        created = _Created.model_validate(raw, by_name=False).task
        task_made(MadeTask(created.task_id, "2025-11-25"))
        result = await _TaskRun(client.session, created).follow(server_id, tool, lifetime_secs(asked, created.ttl))
    else:  # the server ran the call plainly after all
        result = types.CallToolResult.model_validate(raw, by_name=False)
    if not result.is_error:
        await client.session.validate_tool_result(tool, result)
    return result


async def _send_call(client: Client, params: dict[str, Any], progress: ProgressFnT | None) -> dict[str, Any]:
    """Send the `tools/call` through the session's own channel, its answer unchecked.

    The SDK checks an answer to `tools/call` against the protocol's `CallToolResult`, which a task
    is not, and has no other way to send it: its dispatcher is reached here (mcp is pinned to 2.3).
    """
    outbound = getattr(client.session, "_dispatcher", None)
    if not isinstance(outbound, Outbound):
        # A RuntimeError, as the SDK's own checks: the call fails with it (not a type error of mcpyard's).
        raise RuntimeError("this version of the MCP SDK cannot send a call as a task")  # noqa: TRY004
    opts: CallOptions = {"headers": {MCP_PROTOCOL_VERSION_HEADER: client.protocol_version}}
    if progress is not None:
        opts["on_progress"] = progress
    return await outbound.send_raw_request("tools/call", params, opts)


class _TaskRun:
    """One task followed to its end: polled, its result asked for, cancelled when given up."""

    def __init__(self, session: ClientSession, created: _TaskState) -> None:
        self._session = session
        self._id = created.task_id
        self._state = created
        self._outcome: Outcome | None = None
        """What `tasks/result` answered (or the error that ended following the task)."""
        self._asked = False

    async def follow(self, server_id: str, tool: str, lifetime: float) -> types.CallToolResult:
        try:
            with anyio.move_on_after(lifetime) as life:
                async with anyio.create_task_group() as tg:
                    try:
                        await self._poll(tg)
                    except Exception as exc:  # kept, and raised outside the task group (which would wrap it)
                        self._outcome = exc
                        tg.cancel_scope.cancel()
        except BaseException:
            await self._cancel()
            raise
        outcome, status = self._outcome, self._state.status
        if isinstance(outcome, Exception):
            await self._cancel()
            raise outcome
        if outcome is not None:
            return outcome
        if life.cancelled_caught:
            await self._cancel()
            raise CallError(
                "timeout",
                f"tool {tool!r} on server {server_id!r} ran as a task that did not end within its lifetime "
                f"({lifetime:g} s); mcpyard cancelled it",
            )
        if status == "cancelled":
            text = f"the server cancelled the task ({self._state.status_message or 'no reason given'})"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        raise RuntimeError(f"the task ended {status!r} without a result")  # pragma: no cover - the loop never does

    async def _poll(self, tg: anyio.abc.TaskGroup) -> None:
        """Poll until the task ends, asking for its result once it needs input or has ended."""
        report = progress_report()
        polls = 0
        while True:
            status = _known(self._state.status)
            if status in ANSWERED_AT and not self._asked:
                self._asked = True
                tg.start_soon(self._fetch, tg.cancel_scope)
            if status == "cancelled":
                tg.cancel_scope.cancel()
            if status in ENDED:
                return  # no polls while the result comes: a server that never sends it meets the call's timeout
            await anyio.sleep(poll_secs(self._state.poll_interval))
            request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=self._id))
            self._state = await self._session.send_request(request, _TaskState)
            polls += 1
            if report is not None:
                await report(float(polls), None, _said(self._state))

    async def _fetch(self, scope: anyio.CancelScope) -> None:
        """Ask for the task's result (the server answers at the task's end); polling ends with it."""
        request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=self._id))
        try:
            self._outcome = await self._session.send_request(request, types.CallToolResult)
        except Exception as exc:  # the failed task's error, or a result the protocol does not define
            self._outcome = exc
        scope.cancel()

    async def _cancel(self) -> None:
        """Tell the server the task is no longer wanted (shielded: the call may be on its way out, cancelled)."""
        if self._state.status in ENDED:
            return
        request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=self._id))
        with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_SECS), contextlib.suppress(Exception):
            await self._session.send_request(request, types.EmptyResult)


def _known(status: str) -> str:
    if status not in STATUSES:
        raise RuntimeError(f"the task's status {status[:40]!r} is not one the 2025-11-25 protocol defines")
    return status


def _said(state: _TaskState) -> str:
    status = state.status[:40]
    return f"task {status}: {state.status_message[:MAX_STATUS_CHARS]}" if state.status_message else f"task {status}"
