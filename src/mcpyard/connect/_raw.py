"""Tool calls to a stdio server written and read as JSON lines beside the SDK's session (the fast path).

The SDK's client session costs about as much per call as a small server's whole answer (the
request built and the result read through models, a memory stream and a task switch per
message), so once the session has sent a server one `tools/call`, later calls go out as one
JSON line carrying the same `_meta` (the protocol version, client and capabilities the session
declared, with a progress token of their own), and their answers are picked off the pipe by id
before the session would read them, each handed over in its line's turn (once the session has
received what the server sent before it, so an answer never overtakes a log message).
Everything else on the pipe (the server's requests, log messages, other answers) still goes to
the session, so a server's questions during such a call reach whoever answers the call's
questions, as before.

What comes back is read as the session reads it: a result is checked as a `CallToolResult`, and
against the tool's output schema by the session's own check; an error is the server's error; a
task handle is followed by the tasks extension's own code; an `input_required` result (a
server of 2026-07-28 asking for input) sends the call again through the session, which answers
the questions and carries the call on. A call given up (its timeout, a cancel) sends
`notifications/cancelled`; a pipe that ends fails every call in flight as `Connection closed`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from mcpyard.connect._tasks import finish_task

__all__ = ["RawCalls"]

_PREFIX = "mcpyard-raw-"
_MARK = _PREFIX.encode()
_STAMP_KEYS = frozenset(
    {
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/clientCapabilities",
        "io.modelcontextprotocol/logLevel",
        "progressToken",
    }
)
"""What the session puts in every request's `_meta`; a call whose `_meta` holds anything else is not copied."""

CANCEL_SECS = 1.0
"""How long a call given up may take to tell the server so."""

Write = Callable[[bytes], Awaitable[None]]


class _Waiting:
    """One call's answer, and progress before it, as the pipe brings them."""

    __slots__ = ("items", "waiter")

    def __init__(self) -> None:
        self.items: deque[dict[str, Any]] = deque()
        self.waiter: asyncio.Future[None] | None = None

    def put(self, item: dict[str, Any]) -> None:
        if self.items and "method" in item and "method" in self.items[-1]:
            self.items[-1] = item  # progress not yet reported gives way to newer progress: what waits stays bounded
            return
        self.items.append(item)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def get(self) -> dict[str, Any]:
        while not self.items:
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        return self.items.popleft()


class RawCalls:
    """The fast path of one stdio connection: armed by the session's first `tools/call`."""

    def __init__(self) -> None:
        self.write: Write | None = None
        """Where a serialized message goes (the session's writer, whose lock keeps lines whole)."""
        self._meta: dict[str, Any] | None = None
        """The `_meta` of the session's last `tools/call`, without its progress token; None: not armed."""
        self._ids = itertools.count(1)
        self._waiting: dict[str, _Waiting] = {}
        self._ended = False

    @property
    def armed(self) -> bool:
        """Whether calls may take the fast path: the session sent one, and the pipe is open."""
        return self._meta is not None and not self._ended and self.write is not None

    def sent(self, message: SessionMessage) -> None:
        """The session sent `message`: a `tools/call` arms the fast path with its `_meta` (or disarms it)."""
        request = message.message
        if not isinstance(request, types.JSONRPCRequest) or request.method != "tools/call":
            return
        meta = (request.params or {}).get("_meta") or {}
        if not isinstance(meta, Mapping) or not meta.keys() <= _STAMP_KEYS:
            self._meta = None
            return
        self._meta = {key: value for key, value in meta.items() if key != "progressToken"}

    # ----------------------------------------------------------------- the pipe's side

    def take(self, line: bytes) -> Callable[[], None] | None:
        """If `line` is an answer to, or progress of, a call of ours: its delivery to that call (then the session never
        sees the line), to be called once what the server sent before it reached the session."""
        if not self._waiting or _MARK not in line:
            return None
        try:
            value = json.loads(line.decode("utf-8", "surrogatepass"))  # as loads(bytes) would, minus detection
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        if "method" in value:
            params = value.get("params")
            if value["method"] != "notifications/progress" or not isinstance(params, dict):
                return None
            token = params.get("progressToken")
            waiting = self._waiting.get(token) if isinstance(token, str) else None
        else:
            request_id = value.get("id")
            waiting = self._waiting.get(request_id) if isinstance(request_id, str) else None
        if waiting is None:
            return None
        return partial(waiting.put, value)

    def end(self) -> None:
        """The pipe ended: every call in flight fails as the session's would."""
        self._ended = True
        for waiting in self._waiting.values():
            waiting.put({"error": {"code": types.CONNECTION_CLOSED, "message": "Connection closed"}})

    # ----------------------------------------------------------------- calls

    async def call(
        self, client: Client, tool: str, arguments: dict[str, Any], progress: ProgressFnT | None
    ) -> types.CallToolResult:
        """Call `tool` as the session would, answered on the fast path (see the module's words)."""
        assert self._meta is not None
        assert self.write is not None
        request_id = f"{_PREFIX}{next(self._ids)}"
        meta = {**self._meta, "progressToken": request_id}
        params = {"name": tool, "arguments": arguments, "_meta": meta}
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        waiting = self._waiting[request_id] = _Waiting()
        answered = False
        try:
            await self.write(line.encode() + b"\n")
            while True:
                item = await waiting.get()
                if "method" not in item:
                    answered = True
                    break
                if progress is not None:
                    try:
                        given = types.ProgressNotificationParams.model_validate(item["params"], by_name=False)
                    except ValidationError:
                        continue  # as the session does with progress it cannot read
                    await progress(given.progress, given.total, given.message)
        finally:
            del self._waiting[request_id]
            if not answered and not self._ended:
                await self._cancel(request_id)
        return await self._read(client, tool, arguments, item, progress)

    async def _cancel(self, request_id: str) -> None:
        assert self.write is not None
        notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
        with anyio.move_on_after(CANCEL_SECS, shield=True):
            try:
                await self.write(json.dumps(notice).encode() + b"\n")
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return  # the pipe is gone: nothing to cancel any more

    async def _read(
        self,
        client: Client,
        tool: str,
        arguments: dict[str, Any],
        answer: dict[str, Any],
        progress: ProgressFnT | None,
    ) -> types.CallToolResult:
        error = answer.get("error")
        if error is not None:
            error = types.ErrorData.model_validate(error)
            raise MCPError(error.code, error.message, error.data)
        result = answer.get("result")
        kind = result.get("resultType") if isinstance(result, dict) else None
        if kind == "task":
            return await finish_task(client, tool, result)
        if kind == "input_required":
            # The session answers the questions (its callbacks) and carries the call on from the start.
            return await client.call_tool(tool, arguments, progress_callback=progress)
        checked = types.CallToolResult.model_validate(result, by_name=False)
        if not checked.is_error:
            await client.session.validate_tool_result(tool, checked)
        return checked
