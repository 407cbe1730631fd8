"""Fixture server of the handshake era whose tools must run as tasks (the experimental tasks of 2025-11-25).

Run as `python tests/servers/legacy_tasks.py [--transport stdio|streamable-http] [--port N]`.

It speaks only the handshake era (it answers `server/discover` as an unknown method, as servers of
that era do), declares the `tasks` capability for `tools/call`, and lists each task tool with
`execution.taskSupport: "required"`. A `tools/call` that carries `task` is answered with the task
(`CreateTaskResult`, its id a random uuid4); one that does not is refused (-32601), as the spec says.
`tasks/get` says how a task is going, `tasks/result` waits for its end and gives its result (or
error), `tasks/cancel` cancels it. A task's state follows from the time since it was made:

- `slow(seconds, poll_ms)`: working for `seconds` (at most 60), its status message counting the
  seconds, then completed ("slow done after N s"); polls asked for every `poll_ms` (default 1000).
- `ask()`: input required until `tasks/result` comes: it then asks its client for a name (an
  elicitation related to the task, on that request) and completes with "hello NAME" (or the action
  when the answer was not accept).
- `fail()`: failed; `tasks/result` answers the error (-32603, "the fixture task failed on purpose").
- `forever(poll_ms, ttl_ms)`: working until cancelled; the task's `ttl` is `ttl_ms` when given (else
  the one the client asked for).
- `cancelled()`: the ids of the tasks cancelled so far (a plain tool).
- `polls()`: polls so far over every task, and the shortest gap between two polls of one task (plain).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from starlette.types import ASGIApp

RELATED: Final = "io.modelcontextprotocol/related-task"
POLL_MS: Final = 1000
TASK_TOOLS: Final = frozenset({"slow", "ask", "fail", "forever"})
TASKS: Final = types.ServerTasksCapability(
    cancel=types.TasksCancelCapability(),
    requests=types.ServerTasksRequestsCapability(tools=types.TasksToolsCapability(call=types.TasksCallCapability())),
)
NAME_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


@dataclass
class Task:
    tool: str
    arguments: dict[str, Any]
    ttl_ms: int | None
    made: float = field(default_factory=time.monotonic)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    cancelled: bool = False
    ended: anyio.Event = field(default_factory=anyio.Event)
    """Set when the task is cancelled (a task that runs out of time ends without it)."""
    greeting: str | None = None
    """What `ask` says once its client answered."""
    polls: list[float] = field(default_factory=list)

    def status(self) -> tuple[str, str | None]:
        """The task's status and status message now."""
        if self.cancelled:
            return "cancelled", "cancelled by the client"
        if self.tool == "slow":
            elapsed = time.monotonic() - self.made
            if elapsed < self.seconds:
                return "working", f"{int(elapsed)} of {self.seconds:g} s"
            return "completed", None
        if self.tool == "ask":
            return ("input_required", "waiting for a name") if self.greeting is None else ("completed", None)
        if self.tool == "fail":
            return "failed", "failed on purpose"
        return "working", "working until cancelled"

    @property
    def seconds(self) -> float:
        return min(float(self.arguments.get("seconds", 3)), 60.0)

    def state(self, task_id: str) -> dict[str, Any]:
        status, message = self.status()
        state: dict[str, Any] = {
            "taskId": task_id,
            "status": status,
            "createdAt": self.created_at,
            "lastUpdatedAt": datetime.now(UTC).isoformat(),
            "ttl": self.ttl_ms,
            "pollInterval": int(self.arguments.get("poll_ms", POLL_MS)),
        }
        if message is not None:
            state["statusMessage"] = message
        return state


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _tool(name: str, description: str, properties: Mapping[str, Any] | None = None) -> types.Tool:
    return types.Tool(
        name=name,
        description=description,
        input_schema={"type": "object", "properties": dict(properties or {})},
        execution=types.ToolExecution(task_support="required") if name in TASK_TOOLS else None,
    )


TOOLS: Final = [
    _tool(
        "slow",
        "Works for `seconds`, reporting how far it got, then finishes. Runs as a task.",
        {"seconds": {"type": "number"}, "poll_ms": {"type": "integer"}},
    ),
    _tool("ask", "Asks for a name while it runs, then greets it. Runs as a task."),
    _tool("fail", "Fails while it runs. Runs as a task."),
    _tool(
        "forever",
        "Works until it is cancelled. Runs as a task.",
        {"poll_ms": {"type": "integer"}, "ttl_ms": {"type": "integer"}},
    ),
    _tool("cancelled", "The ids of the tasks cancelled so far."),
    _tool("polls", "Polls so far, over every task, and the shortest gap between two polls of one task (s)."),
]


class LegacyTaskServer(Server[Any]):
    """A low-level server of the handshake era only, declaring task-augmented `tools/call`."""

    def __init__(self) -> None:
        super().__init__("legacy_tasks", version="1.0", on_list_tools=self.list_tools, on_call_tool=self.call_tool)
        self.tasks: dict[str, Task] = {}
        self.add_request_handler("tasks/get", types.GetTaskRequestParams, self.get)
        self.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, self.result)
        self.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, self.cancel)
        self.middleware.append(self.make_task)

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        capabilities = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        return capabilities.model_copy(update={"tasks": TASKS})

    async def run(
        self,
        read_stream: Any,
        write_stream: Any,
        initialization_options: Any,
        raise_exceptions: bool = False,
    ) -> None:
        """Serve one connection; `server/discover` is answered "method not found" before the SDK sees it."""
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](16)

        async def sift() -> None:
            async with send:
                async for item in read_stream:
                    message = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(message, types.JSONRPCRequest) and message.method == "server/discover":
                        error = types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found")
                        answer = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                        await write_stream.send(SessionMessage(answer))
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as tg, receive:
            tg.start_soon(sift)
            await super().run(receive, write_stream, initialization_options, raise_exceptions)
            tg.cancel_scope.cancel()

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name in TASK_TOOLS:
            raise MCPError(types.METHOD_NOT_FOUND, f"tool {params.name!r} runs only as a task")
        if params.name == "cancelled":
            ids = sorted(task_id for task_id, task in self.tasks.items() if task.cancelled)
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(ids))])
        if params.name == "polls":
            gaps = [
                later - earlier
                for task in self.tasks.values()
                for earlier, later in zip(task.polls, task.polls[1:], strict=False)
            ]
            count = sum(len(task.polls) for task in self.tasks.values())
            said = {"polls": count, "shortest_gap": min(gaps) if gaps else None}
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(said))])
        return types.CallToolResult(content=[types.TextContent(text=f"unknown tool {params.name!r}")], is_error=True)

    async def make_task(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """A `tools/call` of a task tool carrying `task` is answered with a new task (the SDK knows no such result)."""
        params = ctx.params or {}
        requested = params.get("task")
        if ctx.method != "tools/call" or params.get("name") not in TASK_TOOLS or not isinstance(requested, dict):
            return await call_next(ctx)
        arguments = params.get("arguments") or {}
        ttl = arguments.get("ttl_ms", requested.get("ttl"))
        task_id = str(uuid.uuid4())
        task = self.tasks[task_id] = Task(str(params["name"]), dict(arguments), ttl)
        state = task.state(task_id)
        state["status"], state["statusMessage"] = "working", "started"
        return {"task": state}

    def find(self, task_id: str) -> Task:
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(types.INVALID_PARAMS, "Failed to retrieve task: Task not found")
        return task

    async def get(self, ctx: ServerRequestContext[Any], params: types.GetTaskRequestParams) -> dict[str, Any]:
        task = self.find(params.task_id)
        task.polls.append(time.monotonic())
        return task.state(params.task_id)

    async def result(self, ctx: ServerRequestContext[Any], params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        task_id = params.task_id
        task = self.find(task_id)
        if task.tool == "ask" and task.greeting is None and not task.cancelled:
            ask = types.ElicitRequest(
                params=types.ElicitRequestFormParams(
                    message="Your name?", requested_schema=NAME_SCHEMA, meta={RELATED: {"taskId": task_id}}
                )
            )
            related = ServerMessageMetadata(related_request_id=ctx.request_id)
            answer = await ctx.session.send_request(ask, types.ElicitResult, metadata=related)
            name = (answer.content or {}).get("name")
            task.greeting = f"hello {name}" if answer.action == "accept" else f"action={answer.action}"
        if task.status()[0] in ("working", "input_required"):  # tasks/result waits for the task's end
            left = task.seconds - (time.monotonic() - task.made) if task.tool == "slow" else math.inf
            with anyio.move_on_after(left):
                await task.ended.wait()
        status, _ = task.status()
        meta = {RELATED: {"taskId": task_id}}
        if status == "failed":
            raise MCPError(types.INTERNAL_ERROR, "the fixture task failed on purpose")
        if status == "cancelled":
            raise MCPError(types.INVALID_PARAMS, "the task was cancelled")
        if task.tool == "slow":
            return {**_text(f"slow done after {task.seconds:g} s"), "_meta": meta}
        return {**_text(task.greeting or ""), "_meta": meta}

    async def cancel(self, ctx: ServerRequestContext[Any], params: types.CancelTaskRequestParams) -> dict[str, Any]:
        task = self.find(params.task_id)
        if task.status()[0] in ("completed", "failed", "cancelled"):
            raise MCPError(types.INVALID_PARAMS, f"Cannot cancel task: already in terminal status {task.status()[0]!r}")
        task.cancelled = True
        task.ended.set()
        return task.state(params.task_id)


def build_server() -> LegacyTaskServer:
    return LegacyTaskServer()


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    return parser


def http_app(args: argparse.Namespace) -> ASGIApp:
    """The streamable HTTP app, answering `server/discover` with "method not found" (the handshake era only)."""
    from tests.servers._handshake import handshake_only

    return handshake_only(build_server().streamable_http_app(host=args.host))


async def _serve_stdio() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.transport == "stdio":
        anyio.run(_serve_stdio)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    serve(http_app(args), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
