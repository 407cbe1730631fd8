"""Long calls read and taken over: a call whose server answers with a task outlives its replica (CALL-8, ORG-9).

Any replica's sweep claims the rows whose lease lapsed (`lapsed_tasks`) and follows each task to
its result with the same id (`org_call(..., resumes=…)`): the call is never sent twice. The result
waits in the row until the member who started the call reads it, once (`read_task_call`); then it is
erased. A member's MCP client reads its task's state from here on any replica (`face_task_state`).
The row is written and held by the replica following the task (`_task_keeper.py`).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any, Final, cast

from sqlalchemy import delete, or_, select, update

from mcpyard.errors import ConfigError, Gone
from mcpyard.org._caller import Caller, not_found
from mcpyard.org._words import quoted
from mcpyard.org.keys import task_id_context
from mcpyard.org.services._call_results import Outcome, result_json
from mcpyard.org.services._leases import held_until
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._task_keeper import MAX_AGE_SECONDS, end_task_call
from mcpyard.org.services._views import CallResultView, TaskCallView
from mcpyard.org.store import TaskCall, utcnow
from mcpyard.pipeline import CallResult

__all__ = [
    "end_moved",
    "face_task_cancel",
    "face_task_given",
    "face_task_state",
    "lapsed_tasks",
    "list_task_calls",
    "mark_given",
    "read_task_call",
    "task_call_json",
]

TAKE_AT_ONCE: Final = 16
"""Lapsed tasks one sweep takes over; the next sweep takes more."""
KEPT_READ_SECONDS: Final = 24 * 3600.0
"""A long call read (or given) is forgotten after a day; one never read, after `KEPT_UNREAD_SECONDS`."""
KEPT_UNREAD_SECONDS: Final = 30 * 24 * 3600.0
TIDY_SECONDS: Final = 600.0
MAX_LISTED: Final = 500
"""The newest long calls a listing shows."""


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
                await end_task_call(session, row.id, result_json(lost, row.id))
                continue
            context = task_id_context(row.org_id, row.id)
            try:
                task_id = svc.sealer.unseal(row.key_id, row.sealed_task, context=context, what="a server's task id")
            except ConfigError as exc:  # its key is gone: the call ends, saying so, instead of lapsing for ever
                lost = CallResult.refusal("task_lost", f"{exc.message}; call {row.tool} again", tool=row.tool)
                await end_task_call(session, row.id, result_json(lost, row.id))
                continue
            taken.append((row, task_id))
    return taken


async def end_moved(svc: OrgService, row: TaskCall) -> None:
    """A long call whose server is no longer the one that made its task (deleted, or pointed elsewhere since): ended,
    its task id never sent anywhere."""
    words = (
        f"server {quoted(row.server)} changed (or was deleted) while {row.tool} ran as a task: its task is not asked "
        f"for elsewhere; call {row.tool} again"
    )
    async with svc.db.begin() as session:
        await end_task_call(session, row.id, result_json(CallResult.refusal("task_lost", words, tool=row.tool), row.id))


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


def _plain(face_task_id: str) -> bool:
    """Whether `face_task_id` could be a face's task id (anything else, a lone surrogate say, is not looked up)."""
    return 0 < len(face_task_id) <= 64 and face_task_id.isascii() and face_task_id.isprintable()


def _faced(caller: Caller, face_task_id: str) -> tuple[Any, ...]:
    return (
        TaskCall.face_task_id == face_task_id,
        TaskCall.org_id == caller.org_id,
        TaskCall.member_id == caller.member_id,
    )


async def face_task_state(svc: OrgService, caller: Caller, face_task_id: str) -> TaskCall | None:
    """The long call behind the task an MCP client of `caller` was given, running, not read yet, or cancelled (None:
    none)."""
    if not _plain(face_task_id):
        return None
    async with svc.db.begin() as session:
        row: TaskCall | None = await session.scalar(
            select(TaskCall).where(
                *_faced(caller, face_task_id), or_(TaskCall.status != "read", TaskCall.cancel_requested)
            )
        )
    return row


async def face_task_cancel(svc: OrgService, caller: Caller, face_task_id: str) -> bool:
    """Cancel, through whichever replica follows it, the task an MCP client of `caller` was given; whether it has one.
    That replica cancels the call at its next renewal (the server hears `tasks/cancel`)."""
    if not _plain(face_task_id):
        return False
    async with svc.db.begin() as session:
        asked = await session.execute(
            update(TaskCall)
            .where(*_faced(caller, face_task_id), TaskCall.status != "read")
            .values(cancel_requested=True)
        )
    return bool(getattr(asked, "rowcount", 0))


async def face_task_given(svc: OrgService, caller: Caller, face_task_id: str) -> None:
    """The client was given the result of its task: no one reads it again."""
    row = await face_task_state(svc, caller, face_task_id)
    if row is not None and row.status == "done":
        await mark_given(svc, row.id)
