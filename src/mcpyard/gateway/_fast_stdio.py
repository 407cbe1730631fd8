"""The fast path of the stdio front (one client): tool calls taken off its lines and answered on parsed JSON.

A line holding a `tools/call` the fast path takes (`_fast.py`: its `_meta` as on a call the SDK's
session served) is run through the same pipeline by a task of its own, and its answer written
as one line; every other line goes to the SDK's session. A `notifications/cancelled` of such a
call cancels it (no answer, as on the SDK's path); the client closing its input cancels the calls
still running, each then answered `Connection closed`.
"""

from __future__ import annotations

import asyncio
import json
import logging

import anyio
import anyio.abc
import mcp_types as types

from mcpyard.gateway._fast import CLOSE_SECS, Face, FastPath, Taken, Write, error_answer

__all__ = ["FastCalls"]

_log = logging.getLogger("mcpyard.gateway")


class FastCalls:
    """The fast path of a stdio front (one client): calls taken off its lines, each answered by its own task.

    A call's task is a plain asyncio task (anyio's `start_soon` costs ten times as much, about a tenth of the
    front's time per call), owned by one keeper task in the face's task group: when that group is cancelled,
    the keeper cancels the calls still running and waits for them, as the group would.
    """

    def __init__(self, face: Face) -> None:
        self._face = face
        self.path = FastPath(face, lambda ctx: None)
        self._running: dict[int | str, anyio.CancelScope] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._kept_in: anyio.abc.TaskGroup | None = None
        """The face's task group the keeper runs in."""
        self._ended = False
        self._drained = anyio.Event()

    async def end(self) -> None:
        """The client closed its input: cancel the calls still running, and let them answer so."""
        self._ended = True
        if not self._running:
            return
        for scope in self._running.values():
            scope.cancel()
        with anyio.move_on_after(CLOSE_SECS):
            await self._drained.wait()

    def take(self, line: bytes, write: Write) -> bool:
        """Whether the message on `line` was taken (and will be answered through `write`); else it goes the SDK path."""
        if b'"tools/call"' in line and not self._ended:
            return self._take_call(line, write)
        if b'"notifications/cancelled"' in line and self._running:
            return self._take_cancel(line)
        return False

    def _take_call(self, line: bytes, write: Write) -> bool:
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            return False
        taken = self.path.accept(value, None, busy=self._running.__contains__)
        if taken is None or (tg := self._face.task_group) is None:
            return False
        if self._kept_in is not tg:
            self._kept_in = tg
            tg.start_soon(self._keep)
        scope = self._running[taken.request_id] = anyio.CancelScope()
        task = asyncio.get_running_loop().create_task(self._serve(taken, scope, write))
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return True

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            _log.error("a tool call's task failed inside mcpyard: %s", self._face.redact(repr(exc)))

    async def _keep(self) -> None:
        """Until the face's task group is cancelled; then the calls still running are cancelled and waited for."""
        try:
            await anyio.sleep_forever()
        finally:
            for scope in self._running.values():
                scope.cancel()
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECS):
                while self._tasks:
                    await asyncio.wait(set(self._tasks))

    def _take_cancel(self, line: bytes) -> bool:
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            return False
        params = value.get("params") if isinstance(value, dict) else None
        if not isinstance(params, dict) or value.get("method") != "notifications/cancelled":
            return False
        request_id = params.get("requestId")
        scope = self._running.get(request_id) if isinstance(request_id, int | str) else None
        if scope is None:
            return False
        scope.cancel()
        return True

    async def _serve(self, taken: Taken, scope: anyio.CancelScope, write: Write) -> None:
        request_id = taken.request_id
        try:
            with scope:
                answer = await self.path.answer(taken)
        finally:
            del self._running[request_id]
            if self._ended and not self._running:
                self._drained.set()
        if scope.cancelled_caught:
            if not self._ended:
                return  # cancelled by its client: no answer, as on the SDK path
            answer = error_answer(request_id, types.CONNECTION_CLOSED, "Connection closed")
        try:
            await write(answer)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return  # the client left
