"""Fixture server whose tools answer with a task (the `io.modelcontextprotocol/tasks` extension, 2026-07-28).

Run as `python tests/servers/tasks.py [--transport stdio|streamable-http] [--port N]`.

To a client that declares the extension, each task tool answers `tools/call` with a task handle
(`resultType: "task"`), polled with `tasks/get`; a client that does not gets the error the
extension names (-32021, missing required client capability), except from `quick`, which then
answers at once. A task's state follows from the time since it was made and what the client sent,
so the server keeps no work running between requests:

- `quick()`: completed at once ("quick done").
- `slow(seconds)`: working for `seconds` (at most 60), its status message counting the seconds, then
  completed ("slow done after N s").
- `ask()`: input required (an elicitation form asking for a name) until `tasks/update` answers it,
  then completed ("hello NAME", or the action when the answer was not accept).
- `fail()`: failed, with a JSON-RPC error (-32603, "the fixture task failed on purpose").
- `forever()`: working until `tasks/cancel`, then cancelled.
- `nosy()`: asks a hundred new questions on every poll, for ever (a hostile server).
- `cancelled()`: the ids of the tasks cancelled so far (a plain tool), to prove a cancel arrived.
- `routed_names()`: over streamable HTTP, the `Mcp-Name` header each `tasks/*` request came with.
- `made()`: how many tasks each tool made so far (a call sent twice makes two).
- `polls()`: polls so far over every task, and the shortest gap between two polls of one task.

Every task asks to be polled every `POLL_MS` milliseconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, RequestParams
from pydantic import Field
from starlette.types import ASGIApp, Receive, Scope, Send

TASKS: Final = "io.modelcontextprotocol/tasks"
MISSING_CAPABILITY: Final = -32021
POLL_MS: Final = 1000
TASK_TOOLS: Final = frozenset({"quick", "slow", "ask", "fail", "forever", "nosy"})


class TaskParams(RequestParams):
    task_id: str


class UpdateParams(TaskParams):
    input_responses: dict[str, Any] = Field(default_factory=dict)


@dataclass
class Task:
    tool: str
    arguments: dict[str, Any]
    made: float = field(default_factory=time.monotonic)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    answer: dict[str, Any] | None = None
    cancelled: bool = False
    polls: list[float] = field(default_factory=list)

    def state(self, task_id: str) -> dict[str, Any]:
        base: dict[str, Any] = {
            "taskId": task_id,
            "createdAt": self.created_at,
            "lastUpdatedAt": datetime.now(UTC).isoformat(),
            "ttlMs": 600_000,
            "pollIntervalMs": POLL_MS,
        }
        if self.cancelled:
            return {**base, "status": "cancelled", "statusMessage": "cancelled by the client"}
        elapsed = time.monotonic() - self.made
        if self.tool == "quick":
            return {**base, "status": "completed", "result": _text("quick done")}
        if self.tool == "slow":
            seconds = min(float(self.arguments.get("seconds", 3)), 60.0)
            if elapsed < seconds:
                return {**base, "status": "working", "statusMessage": f"{int(elapsed)} of {seconds:g} s"}
            return {**base, "status": "completed", "result": _text(f"slow done after {seconds:g} s")}
        if self.tool == "ask":
            if self.answer is None:
                schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
                ask = {
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": "Your name?", "requestedSchema": schema},
                }
                return {**base, "status": "input_required", "inputRequests": {"name": ask}}
            if self.answer.get("action") != "accept":
                return {**base, "status": "completed", "result": _text(f"action={self.answer.get('action')}")}
            name = (self.answer.get("content") or {}).get("name")
            return {**base, "status": "completed", "result": _text(f"hello {name}")}
        if self.tool == "nosy":  # a hundred new questions on every poll, answered or not, for ever
            polled = len(self.polls)
            asks = {
                f"q{polled}-{n}": {
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": f"Question {n}?", "requestedSchema": {"type": "object"}},
                }
                for n in range(100)
            }
            return {**base, "status": "input_required", "inputRequests": asks}
        if self.tool == "fail":
            error = {"code": -32603, "message": "the fixture task failed on purpose"}
            return {**base, "status": "failed", "statusMessage": "failed on purpose", "error": error}
        return {**base, "status": "working", "statusMessage": "working until cancelled"}


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class TaskTools(Extension):
    """The extension's side of the task tools: handles, polls, answers and cancels."""

    identifier = TASKS

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskParams, self.get),
            MethodBinding("tasks/update", UpdateParams, self.update),
            MethodBinding("tasks/cancel", TaskParams, self.cancel),
        )

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if params.name not in TASK_TOOLS:
            return await call_next(ctx)
        if not _declared(ctx):
            if params.name == "quick":
                return await call_next(ctx)
            required: dict[str, Any] = {"requiredCapabilities": {"extensions": {TASKS: {}}}}
            raise MCPError(MISSING_CAPABILITY, "Missing required client capability", data=required)
        task_id = str(uuid.uuid4())
        task = self.tasks[task_id] = Task(params.name, dict(params.arguments or {}))
        seed = task.state(task_id)
        if seed["status"] not in ("completed",):
            seed = {key: value for key, value in seed.items() if key not in ("inputRequests", "error")}
            seed["status"] = "working"
        return {"resultType": "task", **seed}

    def find(self, params: TaskParams) -> Task:
        task = self.tasks.get(params.task_id)
        if task is None:
            raise MCPError(-32602, "Failed to retrieve task: Task not found")
        return task

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        task = self.find(params)
        task.polls.append(time.monotonic())
        return task.state(params.task_id)

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> HandlerResult:
        task = self.find(params)
        if task.tool == "ask" and task.answer is None and "name" in params.input_responses:
            answer = params.input_responses["name"]
            task.answer = answer if isinstance(answer, dict) else {"action": "decline"}
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        self.find(params).cancelled = True
        return {}


def _declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    extensions = getattr(capabilities, "extensions", None) if capabilities is not None else None
    return isinstance(extensions, dict) and TASKS in extensions


def build_server(routed: list[str] | None = None) -> MCPServer:
    tools = TaskTools()
    server = MCPServer("tasks", instructions="Task tools fixture server.", extensions=[tools])

    @server.tool(description="Finishes at once (as a task when the client takes tasks).", structured_output=False)
    def quick() -> str:
        return "quick done"

    @server.tool(
        description="Works for `seconds`, reporting how far it got, then finishes. Needs tasks.",
        structured_output=False,
    )
    def slow(seconds: float = 3) -> str:
        return "needs tasks"

    @server.tool(description="Asks for a name while it runs, then greets it. Needs tasks.", structured_output=False)
    def ask() -> str:
        return "needs tasks"

    @server.tool(description="Fails with a protocol error while it runs. Needs tasks.", structured_output=False)
    def fail() -> str:
        return "needs tasks"

    @server.tool(
        description="Asks a hundred new questions on every poll, for ever. Needs tasks.", structured_output=False
    )
    def nosy() -> str:
        return "needs tasks"

    @server.tool(description="Works until it is cancelled. Needs tasks.", structured_output=False)
    def forever() -> str:
        return "needs tasks"

    @server.tool(description="The ids of the tasks cancelled so far.")
    def cancelled() -> str:
        return json.dumps(sorted(task_id for task_id, task in tools.tasks.items() if task.cancelled))

    @server.tool(description="Polls so far, over every task, and the shortest gap between two polls of one task (s).")
    def polls() -> str:
        gaps = [
            later - earlier
            for task in tools.tasks.values()
            for earlier, later in zip(task.polls, task.polls[1:], strict=False)
        ]
        count = sum(len(task.polls) for task in tools.tasks.values())
        return json.dumps({"polls": count, "shortest_gap": min(gaps) if gaps else None})

    @server.tool(description="How many tasks each tool made so far.")
    def made() -> str:
        counts: dict[str, int] = {}
        for task in tools.tasks.values():
            counts[task.tool] = counts.get(task.tool, 0) + 1
        return json.dumps(counts)

    @server.tool(description="The Mcp-Name header of each tasks/* request so far (streamable HTTP only).")
    def routed_names() -> str:
        return json.dumps(routed or [])

    return server


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    return parser


def http_app(args: argparse.Namespace) -> ASGIApp:
    """The streamable HTTP app, noting the `Mcp-Name` header of each `tasks/*` request (the `routed` tool says)."""
    routed: list[str] = []
    server = build_server(routed)
    app = server.streamable_http_app(host=args.host)

    async def noting(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            headers = dict(scope["headers"])
            if headers.get(b"mcp-method", b"").startswith(b"tasks/"):
                routed.append(headers.get(b"mcp-name", b"").decode("latin-1"))
        await app(scope, receive, send)

    return noting


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.transport == "stdio":
        build_server().run("stdio")
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    serve(http_app(args), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
