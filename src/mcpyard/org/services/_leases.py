"""Leases on work one process runs for a while (an approved run, a turn): renewed while it runs, swept once lapsed.

Whoever claims such work sets `held_until` a little ahead and keeps moving it while the work runs;
a process that dies stops renewing, and the sweep, on any replica, ends what it held as failed:
the work is never left `running` for ever, and never run twice (ORG-9).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

import anyio
from sqlalchemy import update

from mcpyard.org.hosts import CALL_DEADLINE_SECS
from mcpyard.org.services._call_results import result_json
from mcpyard.org.services._service import OrgService
from mcpyard.org.store import Approval, TurnRow, utcnow
from mcpyard.pipeline import CallResult

__all__ = ["held_until", "holding", "sweep"]

INTERRUPTED = "the service stopped while this ran"
_log = logging.getLogger("mcpyard.org")

Held = type[Approval] | type[TurnRow]


def held_until(svc: OrgService) -> datetime:
    """The lease a claim takes (`OrgService.hold_seconds` ahead)."""
    return utcnow() + timedelta(seconds=svc.hold_seconds)


@contextlib.asynccontextmanager
async def holding(svc: OrgService, table: Held, row_id: str) -> AsyncIterator[None]:
    """Keep holding the row while the block runs (a renewal the database refuses is tried again next round)."""

    async def renew() -> None:
        while True:
            await anyio.sleep(svc.hold_seconds / 3)
            try:
                async with svc.db.begin() as session:
                    await session.execute(update(table).where(table.id == row_id).values(held_until=held_until(svc)))
            except Exception as exc:  # the database is away for a moment: the lease has time left
                _log.warning("renewing a lease failed (%s)", type(exc).__name__)

    async with anyio.create_task_group() as tg:
        tg.start_soon(renew)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()


async def sweep(svc: OrgService) -> int:
    """End the approved runs and turns whose process stopped holding them: runs `failed` (`interrupted`), turns
    `interrupted`; how many. A row from before leases (none held) counts as lapsed twice a call's deadline after it
    was claimed."""
    now = utcnow()
    legacy = now - timedelta(seconds=CALL_DEADLINE_SECS * 2)
    interrupted = result_json(CallResult.refusal("interrupted", f"{INTERRUPTED} approved call; call it again"), None)
    async with svc.db.begin() as session:
        runs = await session.execute(
            update(Approval)
            .where(
                Approval.status == "running",
                (Approval.held_until < now)
                | (Approval.held_until.is_(None) & (Approval.decided_at.is_(None) | (Approval.decided_at < legacy))),
            )
            .values(status="failed", result=interrupted, held_until=None)
        )
        turns = await session.execute(
            update(TurnRow)
            .where(
                TurnRow.status == "running",
                (TurnRow.held_until < now) | (TurnRow.held_until.is_(None) & (TurnRow.created_at < legacy)),
            )
            .values(
                status="interrupted",
                error=f"{INTERRUPTED} turn; send the message again",
                state=None,
                finished_at=now,
                held_until=None,
            )
        )
    return int(getattr(runs, "rowcount", 0) or 0) + int(getattr(turns, "rowcount", 0) or 0)
