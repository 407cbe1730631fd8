"""Long calls as tasks for the clients that take them: the `io.modelcontextprotocol/tasks` extension, served (CALL-8).

A client that declared the extension and calls a tool whose server answers with a task gets a
task of the face's own in answer to its `tools/call` (the server's task id never leaves mcpyard:
the face polls it, and the pipeline shapes its result as any other). The client polls with
`tasks/get`; questions asked meanwhile (the server's task's input requests, or a question within
the call) show as `input_required` and are answered with `tasks/update`; `tasks/cancel` cancels
the call, and with it the server's task. A call that ends without the server making a task, or
any call of a client that did not declare the extension, is answered on its `tools/call` as before.

A task belongs to whoever started it: the face's audience (in the organization, the member) and
the HTTP session of a handshake-era client. To anyone else `tasks/get`, `tasks/update` and
`tasks/cancel` say "task not found", as for an id that never was; ids are 192 random bits besides.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Protocol

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import Field

from mcpyard.connect import FACE_TASK, TASKS_EXTENSION, MadeTask
from mcpyard.gateway._rounds import RoundTrip

__all__ = ["FACE_TASK", "KEPT_SECS", "MAX_TASKS", "POLL_MS", "FaceTask", "TaskBoard", "TaskElsewhere", "declares_tasks"]


POLL_MS: Final = 1000
"""How often a client is asked to poll a task."""
KEPT_SECS: Final = 600.0
"""How long a task's result is kept once it ended (the TTL the client is told)."""
MAX_TASKS: Final = 256
"""Tasks kept at once (running or ended and not yet expired); a call past this is answered on its request."""
MAX_STATUS_CHARS: Final = 300


def declares_tasks(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client of `ctx` declared the tasks extension."""
    capabilities = ctx.session.client_capabilities
    extensions = capabilities.extensions if capabilities is not None else None
    return bool(extensions) and TASKS_EXTENSION in (extensions or {})


def _now() -> str:
    return datetime.now(UTC).isoformat()


def task_state(task_id: str, created_at: str, updated_at: str) -> dict[str, Any]:
    """What every state of a face's task says, whatever its status: its id, times, lifetime and poll interval."""
    return {
        "taskId": task_id,
        "createdAt": created_at,
        "lastUpdatedAt": updated_at,
        "ttlMs": int(KEPT_SECS * 1000),
        "pollIntervalMs": POLL_MS,
    }


class TaskParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskParams):
    input_responses: dict[str, types.InputResponse] = Field(default_factory=dict)


@dataclass(eq=False)
class FaceTask:
    """One call the face runs as a task: its questions and result are its round trip's."""

    trip: RoundTrip
    owner: Hashable
    tool: str = ""
    """The tool called, by its catalog name."""
    board: TaskBoard | None = None
    server_task: MadeTask | None = None
    """The server's task behind it, once the server made one."""
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    message: str | None = None
    cancelled: bool = False
    ended: float | None = None
    """When the call ended (monotonic), once it has."""

    @property
    def task_id(self) -> str:
        return self.trip.token

    def note(self, message: str | None) -> None:
        """The call's latest progress, as the task's status message."""
        self.message = message[:MAX_STATUS_CHARS] if message else self.message
        self.updated_at = _now()

    def made(self, made: MadeTask) -> None:
        """The server answered the call with a task: named for those noticing it, and kept where the board keeps."""
        made.labels[FACE_TASK] = self.task_id
        self.server_task = made
        if self.board is not None and self.board.elsewhere is not None:
            self.board.elsewhere.made(self)

    def end(self) -> None:
        self.ended = time.monotonic()
        self.updated_at = _now()
        if self.board is not None and self.board.elsewhere is not None:
            self.board.elsewhere.ended(self)

    def state(self) -> dict[str, Any]:
        """What `tasks/get` answers, and the handle `tools/call` answers with."""
        base = task_state(self.task_id, self.created_at, self.updated_at)
        result = self.trip.result
        if self.cancelled:
            return {**base, "status": "cancelled", "statusMessage": "cancelled by the client"}
        if result is not None:
            dumped = result.model_dump(by_alias=True, exclude_none=True, mode="json")
            return {**base, "status": "completed", "result": dumped}
        if requests := self.trip.open_requests():
            asked = {
                key: request.model_dump(by_alias=True, exclude_none=True, mode="json")
                for key, request in requests.items()
            }
            return {**base, "status": "input_required", "inputRequests": asked}
        return {**base, "status": "working", **({"statusMessage": self.message} if self.message else {})}


class TaskElsewhere(Protocol):
    """Tasks the face keeps beyond this process (the organization's database: any replica answers for them)."""

    async def state(self, ctx: ServerRequestContext[Any], task_id: str) -> dict[str, Any] | None:
        """The state of the client's task `task_id` kept elsewhere (None: not the client's, or none)."""
        ...

    async def given(self, ctx: ServerRequestContext[Any], task_id: str) -> None:
        """The task's result was given to its client here: no one reads it again elsewhere."""
        ...

    async def cancel(self, ctx: ServerRequestContext[Any], task_id: str) -> bool:
        """Cancel the client's task `task_id` kept elsewhere; whether there was one."""
        ...

    def made(self, task: FaceTask) -> None:
        """A task of this process now has a server's task behind it."""
        ...

    def ended(self, task: FaceTask) -> None:
        """A task of this process ended (its state says how)."""
        ...


class TaskBoard:
    """The face's tasks, each found only by its owner; with `elsewhere`, also those kept beyond this process."""

    def __init__(self, owner_of: Callable[[ServerRequestContext[Any]], Hashable]) -> None:
        self._owner_of = owner_of
        self._tasks: dict[str, FaceTask] = {}
        self.elsewhere: TaskElsewhere | None = None

    def has_room(self) -> bool:
        self._sweep()
        return len(self._tasks) < MAX_TASKS

    def new(self, ctx: ServerRequestContext[Any], trip: RoundTrip, tool: str) -> FaceTask:
        """A task for `trip` (a call of `tool`), owned by the client of `ctx`; kept once `keep` is called."""
        return FaceTask(trip, self._owner_of(ctx), tool, self)

    def keep(self, task: FaceTask) -> dict[str, Any]:
        """Keep `task` for its owner to poll; the handle `tools/call` answers with."""
        self._tasks[task.task_id] = task
        return {"resultType": "task", **task.state()}

    def _sweep(self) -> None:
        now = time.monotonic()
        for task_id, task in list(self._tasks.items()):
            if task.ended is not None and now - task.ended > KEPT_SECS:
                del self._tasks[task_id]

    def _find(self, ctx: ServerRequestContext[Any], task_id: str) -> FaceTask:
        self._sweep()
        task = self._tasks.get(task_id)
        if task is None or task.owner != self._owner_of(ctx):
            raise MCPError(types.INVALID_PARAMS, "task not found")
        return task

    async def get(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        elsewhere = self.elsewhere
        if elsewhere is None:
            return self._find(ctx, params.task_id).state()
        try:
            state = self._find(ctx, params.task_id).state()
        except MCPError:
            kept = await elsewhere.state(ctx, params.task_id)
            if kept is None:
                raise
            return kept
        if state["status"] == "completed":
            await elsewhere.given(ctx, params.task_id)
        return state

    async def update(self, ctx: ServerRequestContext[Any], params: UpdateParams) -> dict[str, Any]:
        self._find(ctx, params.task_id).trip.answer(params.input_responses)
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any], params: TaskParams) -> dict[str, Any]:
        elsewhere = self.elsewhere
        if elsewhere is not None and params.task_id not in self._tasks and await elsewhere.cancel(ctx, params.task_id):
            return {}
        task = self._find(ctx, params.task_id)
        if task.ended is None:
            task.cancelled = True
            task.trip.scope.cancel()
        return {}
