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
from functools import partial

import anyio
import anyio.abc
import mcp_types as types
from mcp.shared.dispatcher import coerce_request_id

from mcpyard.connect import parse_message
from mcpyard.gateway._fast import CLOSE_SECS, Face, FastPath, Taken, Write, cancelled_call, error_answer

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
        self._running: dict[int | str, asyncio.Task[None]] = {}
        """Calls running, by id as the SDK's dispatcher matches ids (`"7"` is 7)."""
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
        for task in self._running.values():
            task.cancel()
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
            value = json.loads(line.decode("utf-8", "surrogatepass"))  # as loads(bytes) would, minus detection
        except (ValueError, RecursionError):
            return False
        taken = self.path.accept(value, None, busy=lambda request_id: coerce_request_id(request_id) in self._running)
        if taken is None or (tg := self._face.task_group) is None:
            return False
        if self._kept_in is not tg:
            self._kept_in = tg
            tg.start_soon(self._keep)
        task = asyncio.get_running_loop().create_task(self._serve(taken, write))
        self._running[coerce_request_id(taken.request_id)] = task
        self._tasks.add(task)
        task.add_done_callback(partial(self._done, taken.request_id, write))
        return True

    def _done(self, request_id: int | str, write: Write, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._running.get(coerce_request_id(request_id)) is task:
            # Cancelled before it began (its own `finally` never ran): answered as one cancelled while running.
            self._release(request_id)
            if self._ended:
                answer = error_answer(request_id, types.CONNECTION_CLOSED, "Connection closed")
                closing = asyncio.get_running_loop().create_task(_send(write, answer))
                self._tasks.add(closing)
                closing.add_done_callback(self._tasks.discard)
        elif not task.cancelled() and (exc := task.exception()) is not None:
            _log.error("a tool call's task failed inside mcpyard: %s", self._face.redact(repr(exc)))

    def _release(self, request_id: int | str) -> None:
        del self._running[coerce_request_id(request_id)]
        if self._ended and not self._running:
            self._drained.set()

    async def _keep(self) -> None:
        """Until the face's task group is cancelled; then the calls still running are cancelled and waited for."""
        try:
            await anyio.sleep_forever()
        finally:
            for task in self._running.values():
                task.cancel()
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECS):
                while self._tasks:
                    await asyncio.wait(set(self._tasks))

    def _take_cancel(self, line: bytes) -> bool:
        # Read by the SDK's models, as its session would read it: a cancel it would not act on is its own.
        request_id = cancelled_call(parse_message(line))
        task = self._running.get(request_id) if request_id is not None else None
        if task is None:
            return False
        task.cancel()
        return True

    async def _serve(self, taken: Taken, write: Write) -> None:
        """Run a call and write its answer. Only this front cancels a call's task: for its client's cancel or the face's
        group ending (then no answer, as on the SDK path), or for the client's input ending (`Connection closed`)."""
        request_id = taken.request_id
        try:
            answer = await self.path.answer(taken)
        except asyncio.CancelledError:
            if (task := asyncio.current_task()) is not None:
                task.uncancel()  # taken back: the cancellation ends here
            if not self._ended:
                return
            answer = error_answer(request_id, types.CONNECTION_CLOSED, "Connection closed")
        finally:
            self._release(request_id)
        await _send(write, answer)


async def _send(write: Write, answer: bytes) -> None:
    try:
        await write(answer)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        return  # the client left
