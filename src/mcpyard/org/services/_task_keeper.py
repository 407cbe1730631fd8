"""Long calls kept in the database while a replica follows their task: the row, its lease, its end (CALL-8, ORG-9).

When a member's call (or a call of a member's turn) is answered with a task of the tasks
extension, the replica running it writes a row (`TaskCall`): the server's task id sealed to it, a
lease renewed while the replica follows the task, the task's latest status (`TaskKeeper`). A
replica that stops leaves its tasks running on their servers and lets their leases lapse at once
(`hand_on_tasks`); one that dies stops renewing them. Either way any replica's sweep takes the task
over (`_task_calls.py`) and follows it with the same id: the call is never sent twice.

A member's request waits `TASK_WAIT_SECONDS` for a task to end (no wait with `Prefer:
respond-async`), then answers 202 with the call's id. A 2025-11-25 task is bound to the connection
that made it (that protocol's rule): it is not kept, and ends with its replica like any call.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
import anyio.abc
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.connect import FACE_TASK, MadeTask
from mcpyard.org.keys import task_id_context
from mcpyard.org.services._call_results import result_json
from mcpyard.org.services._leases import held_until
from mcpyard.org.services._questions import Asker
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import CallResultView
from mcpyard.org.store import TaskCall, utcnow
from mcpyard.pipeline import CallResult

if TYPE_CHECKING:
    from mcpyard import Host

__all__ = ["AGAIN", "MAX_AGE_SECONDS", "TASK_WAIT_SECONDS", "TaskKeeper", "end_task_call", "hand_on_tasks"]

TASK_WAIT_SECONDS: Final = 20.0
"""How long a member's request waits for its call's task to end before it answers 202 with the call's id."""
MAX_MESSAGE: Final = 300
WRITE_SECONDS: Final = 5.0
"""How long a call's row may take to write once begun, even when the call ends meanwhile (a database that takes
longer: the call goes on unkept, as when the write fails)."""
AGAIN: Final = frozenset({"server_unavailable", "connection_lost"})
"""How a followed call may end that says nothing of its task: it is followed again (until `MAX_AGE_SECONDS`)."""
MAX_AGE_SECONDS: Final = 24 * 3600.0
"""A long call not ended after a day is given up (`task_lost`): followed again no more."""
_log = logging.getLogger("mcpyard.org")


class TaskKeeper:
    """One call's task, kept in the database while this process follows it: the row written when the server answers
    with a task (`notice`), its lease and status renewed while this process holds it, its end written (`finish`).

    A row another process took meanwhile (this one was thought gone) is not this one's any more: the call here
    stops following the task, leaves it running on the server, and writes nothing (`lost`).
    """

    def __init__(
        self,
        svc: OrgService,
        asker: Asker,
        call: tuple[str, Host, Mapping[str, Any]],
        conversation: str,
        call_id: str,
        *,
        resumed: bool,
    ) -> None:
        """`call`: the tool (the name the model sees), the host it runs on, and the arguments as given (kept
        redacted)."""
        self._svc, self._asker = svc, asker
        (self._tool, self._host, self._arguments) = call
        self._conversation, self.call_id = conversation, call_id
        self.kept = self._resumed = resumed
        """Whether the call's row is written (a call taken over has one already, held by this process)."""
        self.lost = False
        """Whether another process follows the task now (this one stopped following it)."""
        self.cancel_asked = False
        """Whether its client cancelled the task through another replica (this one then cancelled the call)."""
        self._made: MadeTask | None = None
        self._message = ""
        self._said = ""
        self._scope: anyio.CancelScope | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        """The call's own task group while it runs (`keeping`): the row is held from it once there is one."""

    def notice(self, made: MadeTask) -> None:
        """The call was answered with a task (`noticing_tasks`): only an extension's task outlives this process."""
        if made.era == "extension" and self._made is None:
            self._made = made
            if self.kept:  # a call taken over: handed on again if this process stops
                self._svc.kept.add(self.call_id, made)
            elif self._tg is not None:
                self._tg.start_soon(self._hold)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The task's latest status (already cleaned and redacted by the pipeline), written at the next renewal."""
        del progress, total
        if message:
            self._message = message[:MAX_MESSAGE]

    @contextlib.asynccontextmanager
    async def keeping(self) -> AsyncIterator[None]:
        """While the call runs: once its task is noticed, its row is written and held (a call taken over: held from
        the start). Should another process take the row, the call is cancelled here (its task left running)."""
        async with anyio.create_task_group() as tg:
            self._scope, self._tg = tg.cancel_scope, tg
            if self.kept:
                tg.start_soon(self._hold)
            try:
                yield
            finally:
                self._tg = None
                if self.kept or self._made is not None:  # its row's holder stops (a call without a task has none)
                    tg.cancel_scope.cancel()

    async def _hold(self) -> None:
        svc = self._svc
        try:
            async with anyio.create_task_group() as tg:
                if not self.kept:
                    assert self._made is not None  # started once it was noticed
                    # Written and noted as one step: a call that ends while its row is being written waits for it,
                    # then ends the row (cancelled between the commit and the note, it would stay `running`).
                    with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_SECONDS):
                        self.kept = await self._write(self._made)
                    if not self.kept:
                        return
                    svc.kept.add(self.call_id, self._made)
                    self._asker.tasked = True
                    tg.start_soon(self._answer_later)
                while True:
                    held = await self._renew()
                    if held == "lost":
                        self._lose()
                        return
                    if held == "cancel" and self._scope is not None:
                        self.cancel_asked = True  # cancelled here: the server hears `tasks/cancel` on the way out
                        self._scope.cancel()
                        return
                    await anyio.sleep(svc.hold_seconds / 3)
        finally:
            svc.kept.remove(self.call_id)

    def _lose(self) -> None:
        """Another process holds the row now: stop following the task here, leaving it running on the server."""
        self.lost = True
        if self._made is not None:
            self._made.detach()
        if self._scope is not None:
            self._scope.cancel()

    async def _answer_later(self) -> None:
        """The member's request answers 202 once the task ran this long (at once with `Prefer: respond-async`)."""
        if (wait := self._asker.task_wait) is not None:
            await anyio.sleep(wait)
            self._asker.task_answered = True
            self._asker.settled.set()

    async def _write(self, made: MadeTask) -> bool:
        """The row, held by this process; whether it was written (if not, the call goes on as any call)."""
        svc, asker, task_id = self._svc, self._asker, made.task_id
        assert asker.member_id is not None
        view = self._host.view  # the call is under way: its server is listed
        server = view.server_of(self._tool) or ""
        key_id, sealed = svc.sealer.seal(task_id, context=task_id_context(asker.org_id, self.call_id))
        row = TaskCall(
            id=self.call_id,
            org_id=asker.org_id,
            member_id=asker.member_id,
            conversation=self._conversation,
            turn_id=asker.turn_id,
            face_task_id=made.labels.get(FACE_TASK),
            tool=self._tool,
            server=server,
            target=view.task_target(server) or "",
            arguments=view.redactor.redact_json(dict(self._arguments)),  # only a call that made a task pays this
            key_id=key_id,
            sealed_task=sealed,
            status="running",
            held_until=held_until(svc),
            holder=svc.kept.holder,
        )
        try:
            async with svc.db.begin() as session:
                session.add(row)
        except Exception as exc:  # the database is away: the call goes on here, only not kept beyond this process
            _log.warning("keeping a long call failed (%s); it runs on in this process only", type(exc).__name__)
            return False
        return True

    async def _renew(self) -> Literal["held", "lost", "cancel"]:
        """Move the lease on (and write the latest status): still held, held by another process now, or cancelled
        by its client through another replica."""
        values: dict[str, Any] = {"held_until": held_until(self._svc)}
        if self._message != self._said:
            values |= {"message": self._message, "updated_at": utcnow()}
        try:
            async with self._svc.db.begin() as session:
                asked = await session.scalar(
                    update(TaskCall).where(*self._mine()).values(**values).returning(TaskCall.cancel_requested)
                )
        except Exception as exc:  # the database is away for a moment: the lease has time left
            _log.warning("renewing a long call's lease failed (%s)", type(exc).__name__)
            return "held"
        self._said = self._message
        return "lost" if asked is None else "cancel" if asked else "held"

    def _mine(self) -> tuple[Any, ...]:
        return (TaskCall.id == self.call_id, TaskCall.status == "running", TaskCall.holder == self._svc.kept.holder)

    async def finish(self, body: CallResultView) -> None:
        """The call ended: the server's task id is erased; its result waits in the row for its member when no one
        waits for it any more (the request answered 202, the call was taken over, an MCP client's task), else it is
        given now. A call that lost its server's connection is left running, for a sweep to follow it again."""
        if not self.kept or self.lost:
            return
        # A task given to an MCP client stays readable here: its client may poll any replica.
        faced = self._made is not None and FACE_TASK in self._made.labels
        waited = self._asker.task_answered or self._resumed or faced
        error = body["error"]
        async with self._svc.db.begin() as session:
            if waited and error is not None and error["code"] in AGAIN:
                fresh = utcnow() - timedelta(seconds=MAX_AGE_SECONDS)
                again = await session.execute(
                    update(TaskCall)
                    .where(*self._mine(), TaskCall.created_at > fresh)
                    .values(held_until=held_until(self._svc), holder=None)
                )
                if getattr(again, "rowcount", 0) == 1:
                    return  # followed again by the next sweep, once this lease lapses
            await end_task_call(session, self.call_id, body, given=not waited, holder=self._svc.kept.holder)

    async def cancelled(self) -> None:
        """The call was cancelled here (its client, a timeout), not handed on: the row ends, with nothing to read."""
        if not self.kept or self.lost or (self._made is not None and self._made.detached):
            return
        stopped = CallResult.refusal("cancelled", f"{self._tool} was cancelled before its task ended", tool=self._tool)
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            async with self._svc.db.begin() as session:
                body = result_json(stopped, self.call_id)
                await end_task_call(session, self.call_id, body, given=True, holder=self._svc.kept.holder)


async def end_task_call(
    session: AsyncSession, call_id: str, body: CallResultView, *, given: bool = False, holder: str | None = None
) -> None:
    """`running` → `done` with `body` (or straight to `read`, `given`), the task id erased; only by `holder`, when
    given."""
    now = utcnow()
    held = () if holder is None else (TaskCall.holder == holder,)
    await session.execute(
        update(TaskCall)
        .where(TaskCall.id == call_id, TaskCall.status == "running", *held)
        .values(
            status="read" if given else "done",
            result=None if given else dict(body),
            read_at=now if given else None,
            finished_at=now,
            updated_at=now,
            held_until=None,
            key_id="",
            sealed_task=b"",
        )
    )


async def hand_on_tasks(svc: OrgService) -> int:
    """This process stops: its tasks stay running on their servers, and their leases end now, so another replica (or
    this one, started again) takes them over at its next sweep; how many. A database away now only delays that until
    the leases lapse."""
    call_ids = svc.kept.detach_all()
    if not call_ids:
        return 0
    with anyio.CancelScope(shield=True), anyio.move_on_after(5):
        try:
            async with svc.db.begin() as session:
                await session.execute(
                    update(TaskCall)
                    .where(TaskCall.id.in_(call_ids), TaskCall.status == "running", TaskCall.holder == svc.kept.holder)
                    .values(held_until=utcnow(), holder=None)
                )
        except Exception as exc:
            _log.warning("handing on the long calls failed (%s); they are taken over once their leases lapse", exc)
    return len(call_ids)
