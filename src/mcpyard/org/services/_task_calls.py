"""Long calls kept in the database: a call whose server answers with a task outlives its replica (CALL-8, ORG-9).

When a member's call (or a call of a member's turn) is answered with a task of the tasks
extension, the replica running it writes a row (`TaskCall`): the server's task id sealed to it, a
lease renewed while the replica follows the task, the task's latest status. A replica that stops
leaves its tasks running on their servers and lets their leases lapse at once; one that dies stops
renewing them. Either way any replica's sweep takes the task over (`take_over_tasks`) and follows
it to its result with the same id: the call is never sent twice. The result waits in the row until
the member who started the call reads it, once (`read_task_call`); then it is erased.

A member's request waits `TASK_WAIT_SECONDS` for a task to end (no wait with `Prefer:
respond-async`), then answers 202 with the call's id. A 2025-11-25 task is bound to the connection
that made it (that protocol's rule): it is not kept, and ends with its replica like any call.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.connect import FACE_TASK, MadeTask
from mcpyard.errors import ConfigError, Gone
from mcpyard.org._caller import Caller, not_found
from mcpyard.org.keys import task_id_context
from mcpyard.org.services._call_results import Outcome, result_json
from mcpyard.org.services._leases import held_until
from mcpyard.org.services._questions import Asker
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import CallResultView, TaskCallView
from mcpyard.org.store import TaskCall, utcnow
from mcpyard.pipeline import CallResult

if TYPE_CHECKING:
    from mcpyard import Host

__all__ = [
    "TASK_WAIT_SECONDS",
    "TaskKeeper",
    "end_moved",
    "face_task_given",
    "face_task_state",
    "hand_on_tasks",
    "lapsed_tasks",
    "list_task_calls",
    "mark_given",
    "read_task_call",
    "task_call_json",
]

TASK_WAIT_SECONDS: Final = 20.0
"""How long a member's request waits for its call's task to end before it answers 202 with the call's id."""
MAX_MESSAGE: Final = 300
TAKE_AT_ONCE: Final = 16
"""Lapsed tasks one sweep takes over; the next sweep takes more."""
AGAIN: Final = frozenset({"server_unavailable", "connection_lost"})
"""How a followed call may end that says nothing of its task: it is followed again (until `MAX_AGE_SECONDS`)."""
MAX_AGE_SECONDS: Final = 24 * 3600.0
"""A long call not ended after a day is given up (`task_lost`): followed again no more."""
KEPT_READ_SECONDS: Final = 24 * 3600.0
"""A long call read (or given) is forgotten after a day; one never read, after `KEPT_UNREAD_SECONDS`."""
KEPT_UNREAD_SECONDS: Final = 30 * 24 * 3600.0
TIDY_SECONDS: Final = 600.0
MAX_LISTED: Final = 500
"""The newest long calls a listing shows."""
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
        call: tuple[str, Host, dict[str, Any]],
        conversation: str,
        call_id: str,
        *,
        resumed: bool,
    ) -> None:
        """`call`: the tool (the name the model sees), the host it runs on, and the arguments as sent, redacted."""
        self._svc, self._asker = svc, asker
        (self._tool, self._host, self._arguments) = call
        self._conversation, self.call_id = conversation, call_id
        self.kept = self._resumed = resumed
        """Whether the call's row is written (a call taken over has one already, held by this process)."""
        self.lost = False
        """Whether another process follows the task now (this one stopped following it)."""
        self._made: MadeTask | None = None
        self._noticed = anyio.Event()
        self._message = ""
        self._said = ""
        self._scope: anyio.CancelScope | None = None

    def notice(self, made: MadeTask) -> None:
        """The call was answered with a task (`noticing_tasks`): only an extension's task outlives this process."""
        if made.era == "extension" and self._made is None:
            self._made = made
            self._noticed.set()
            if self.kept:  # a call taken over: handed on again if this process stops
                self._svc.kept.add(self.call_id, made)

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
            self._scope = tg.cancel_scope
            tg.start_soon(self._hold)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _hold(self) -> None:
        svc = self._svc
        try:
            async with anyio.create_task_group() as tg:
                if not self.kept:
                    await self._noticed.wait()
                    assert self._made is not None
                    if not await self._write(self._made):
                        return
                    self.kept = True
                    svc.kept.add(self.call_id, self._made)
                    self._asker.tasked = True
                    tg.start_soon(self._answer_later)
                while True:
                    if not await self._renew():
                        self._lose()
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
            arguments=self._arguments,
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

    async def _renew(self) -> bool:
        """Move the lease on (and write the latest status); False once another process holds the row."""
        values: dict[str, Any] = {"held_until": held_until(self._svc)}
        if self._message != self._said:
            values |= {"message": self._message, "updated_at": utcnow()}
        try:
            async with self._svc.db.begin() as session:
                renewed = await session.execute(update(TaskCall).where(*self._mine()).values(**values))
        except Exception as exc:  # the database is away for a moment: the lease has time left
            _log.warning("renewing a long call's lease failed (%s)", type(exc).__name__)
            return True
        self._said = self._message
        return getattr(renewed, "rowcount", 1) == 1

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
            await _end(session, self.call_id, body, given=not waited, holder=self._svc.kept.holder)

    async def cancelled(self) -> None:
        """The call was cancelled here (its client, a timeout), not handed on: the row ends, with nothing to read."""
        if not self.kept or self.lost or (self._made is not None and self._made.detached):
            return
        stopped = CallResult.refusal("cancelled", f"{self._tool} was cancelled before its task ended", tool=self._tool)
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            async with self._svc.db.begin() as session:
                body = result_json(stopped, self.call_id)
                await _end(session, self.call_id, body, given=True, holder=self._svc.kept.holder)


async def _end(
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


async def mark_given(svc: OrgService, call_id: str) -> dict[str, Any] | None:
    """`done` → `read`, the result erased from the row; the result, when this read is the one that took it."""
    async with svc.db.begin() as session:
        result: dict[str, Any] | None = await session.scalar(
            select(TaskCall.result).where(TaskCall.id == call_id, TaskCall.status == "done")
        )
        if result is None:
            return None
        taken = await session.execute(
            update(TaskCall)
            .where(TaskCall.id == call_id, TaskCall.status == "done")
            .values(status="read", result=None, read_at=utcnow())
        )
    return result if getattr(taken, "rowcount", 0) == 1 else None  # else another read took it first


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


async def lapsed_tasks(svc: OrgService) -> list[tuple[TaskCall, str]]:
    """Claim the running tasks whose replica stopped holding them (one replica wins each): the rows and the servers'
    task ids, for this process to follow. Long calls past `MAX_AGE_SECONDS` are given up instead, and ended ones
    forgotten once kept long enough (`_tidy`)."""
    now = utcnow()
    await _tidy(svc, now)
    async with svc.db.begin() as session:
        lapsed = list(
            await session.scalars(
                select(TaskCall.id)
                .where(TaskCall.status == "running", or_(TaskCall.held_until.is_(None), TaskCall.held_until < now))
                .limit(TAKE_AT_ONCE)
            )
        )
    taken: list[tuple[TaskCall, str]] = []
    for call_id in lapsed:
        async with svc.db.begin() as session:
            row = await session.scalar(
                update(TaskCall)
                .where(
                    TaskCall.id == call_id,
                    TaskCall.status == "running",
                    or_(TaskCall.held_until.is_(None), TaskCall.held_until < now),
                )
                .values(held_until=held_until(svc), holder=svc.kept.holder)
                .returning(TaskCall)
            )
            if row is None:
                continue  # another replica took it first
            if row.created_at < now - timedelta(seconds=MAX_AGE_SECONDS):  # its followers kept failing: given up
                words = f"its task could not be followed to its end within a day; call {row.tool} again if still wanted"
                lost = CallResult.refusal("task_lost", words, tool=row.tool)
                await _end(session, row.id, result_json(lost, row.id))
                continue
            context = task_id_context(row.org_id, row.id)
            try:
                task_id = svc.sealer.unseal(row.key_id, row.sealed_task, context=context, what="a server's task id")
            except ConfigError as exc:  # its key is gone: the call ends, saying so, instead of lapsing for ever
                lost = CallResult.refusal("task_lost", f"{exc.message}; call {row.tool} again", tool=row.tool)
                await _end(session, row.id, result_json(lost, row.id))
                continue
            taken.append((row, task_id))
    return taken


async def end_moved(svc: OrgService, row: TaskCall) -> None:
    """A long call whose server is no longer the one that made its task (deleted, or pointed elsewhere since): ended,
    its task id never sent anywhere."""
    words = (
        f"server {row.server!r} changed (or was deleted) while {row.tool} ran as a task: its task is not asked for "
        f"elsewhere; call {row.tool} again"
    )
    async with svc.db.begin() as session:
        await _end(session, row.id, result_json(CallResult.refusal("task_lost", words, tool=row.tool), row.id))


async def _tidy(svc: OrgService, now: datetime) -> None:
    """Forget the long calls read a day ago or never read in thirty; at most every `TIDY_SECONDS` per process (it
    writes)."""
    if time.monotonic() - svc.kept.tidied_at < TIDY_SECONDS:
        return
    svc.kept.tidied_at = time.monotonic()
    async with svc.db.begin() as session:
        await session.execute(
            delete(TaskCall).where(
                or_(
                    (TaskCall.status == "read") & (TaskCall.read_at < now - timedelta(seconds=KEPT_READ_SECONDS)),
                    (TaskCall.status == "done") & (TaskCall.finished_at < now - timedelta(seconds=KEPT_UNREAD_SECONDS)),
                )
            )
        )


def _at(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def task_call_json(row: TaskCall) -> TaskCallView:
    """A long call as the API lists it: never its result nor its server's task id."""
    return {
        "call_id": row.id,
        "status": "running" if row.status == "running" else "done",
        "tool": row.tool,
        "server": row.server,
        "message": row.message,
        "member_id": row.member_id,
        "turn_id": row.turn_id,
        "created_at": _at(row.created_at) or "",
        "updated_at": _at(row.updated_at) or "",
        "finished_at": _at(row.finished_at),
    }


async def list_task_calls(svc: OrgService, caller: Caller, *, turn_id: str | None = None) -> list[TaskCallView]:
    """Long calls still running or with a result not read yet, oldest first (the newest `MAX_LISTED`): a member's own;
    owners and admins see every one (only the member who started a call reads its result)."""
    query = select(TaskCall).where(TaskCall.org_id == caller.org_id, TaskCall.status != "read")
    if not caller.is_admin:
        query = query.where(TaskCall.member_id == caller.member_id)
    if turn_id is not None:
        query = query.where(TaskCall.turn_id == turn_id)
    newest = query.order_by(TaskCall.created_at.desc()).limit(MAX_LISTED)
    async with svc.db.begin() as session:
        return [task_call_json(row) for row in await session.scalars(newest)][::-1]


async def read_task_call(svc: OrgService, caller: Caller, call_id: str) -> Outcome[TaskCallView | CallResultView]:
    """A long call of the caller's: still running (202, its status), or its result, given once (then 410)."""
    async with svc.db.begin() as session:
        row = await session.scalar(
            select(TaskCall).where(
                TaskCall.id == call_id, TaskCall.org_id == caller.org_id, TaskCall.member_id == caller.member_id
            )
        )
    if row is None:
        raise not_found("long call")  # another member's is not theirs to see: the same answer
    if row.status == "running":
        return Outcome(task_call_json(row), waiting=True)
    taken = await mark_given(svc, call_id)
    if taken is None:
        raise Gone("already_read", f"the result of call {call_id} was read already: a long call's result is given once")
    return Outcome(cast("CallResultView", taken))


async def face_task_state(svc: OrgService, caller: Caller, face_task_id: str) -> TaskCall | None:
    """The long call behind the task an MCP client of `caller` was given, running or not read yet (None: none)."""
    async with svc.db.begin() as session:
        row: TaskCall | None = await session.scalar(
            select(TaskCall).where(
                TaskCall.face_task_id == face_task_id,
                TaskCall.org_id == caller.org_id,
                TaskCall.member_id == caller.member_id,
                TaskCall.status != "read",
            )
        )
    return row


async def face_task_given(svc: OrgService, caller: Caller, face_task_id: str) -> None:
    """The client was given the result of its task: no one reads it again."""
    row = await face_task_state(svc, caller, face_task_id)
    if row is not None and row.status == "done":
        await mark_given(svc, row.id)
