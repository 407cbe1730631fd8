"""Limits on calls per member, API token and teammate: their settings, and each call counted in the database (ORG-11).

Every replica counts in the same rows, so a member limited to N calls a minute gets N in all, whichever
replicas answer. A call is counted before it runs, in one transaction: for each window it falls in
(`rules.windows_of`), one `INSERT … ON CONFLICT (key) DO UPDATE SET count = count + 1 RETURNING count`;
if any count goes over its limit the transaction rolls back, so a refused call counts nowhere and the
others see the counts as they were (PostgreSQL holds each counter's row lock until then; SQLite has one
writer at a time). What counts: every call a member, a program or a teammate asks for that reaches the
pipeline, whatever its outcome (refused by policy, parked for approval, failed); not reading a stored
result (`read_result`), not the run of an approved call (counted when it was asked for), not a call
refused by a limit. Published assistants' visitors have their own limit (`turns.RateLimits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import Invalid, TooMany
from mcpyard.org._caller import ADMINS, Caller, require
from mcpyard.org.rules import LIMIT_FIELDS, Reached, Subject, Window, checked_limits, windows_of
from mcpyard.org.services._events import audit
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import LimitsView
from mcpyard.org.store import LimitCount, OrgLimits, note_change, utcnow

__all__ = ["LIMIT_REACHED", "LimitReached", "caller_subjects", "charge", "get_limits", "set_limits"]

SWEEP_ROWS = 500
"""Counters of ended windows deleted at most per sweep (one sweep each time a new window starts)."""
SWEEP_GRACE = 60
"""Seconds a window's counter is kept after it ended: a replica whose clock lags a little still finds it."""


LIMIT_REACHED = "limit_reached"
"""The error code of a call refused by a limit (a turn's such call is in its trace, never in the usage)."""


class LimitReached(TooMany):
    """429: a limit of the organization is reached; `Retry-After` says when its window resets."""

    def __init__(self, reached: Reached) -> None:
        super().__init__(LIMIT_REACHED, reached.message, retry_after=reached.retry_after)
        self.reached = reached
        self.details = {"limit": reached.field, "resets_at": reached.resets_at}


def _view(row: OrgLimits | None) -> LimitsView:
    if row is None:
        return LimitsView(
            member_per_minute=None,
            member_per_day=None,
            token_per_minute=None,
            token_per_day=None,
            teammate_per_minute=None,
            teammate_per_day=None,
        )
    return LimitsView(
        member_per_minute=row.member_per_minute,
        member_per_day=row.member_per_day,
        token_per_minute=row.token_per_minute,
        token_per_day=row.token_per_day,
        teammate_per_minute=row.teammate_per_minute,
        teammate_per_day=row.teammate_per_day,
    )


async def _limits_of(session: AsyncSession, org_id: str) -> dict[str, int | None]:
    row = await session.get(OrgLimits, org_id)
    return {name: getattr(row, name) if row is not None else None for name in LIMIT_FIELDS}


async def get_limits(svc: OrgService, caller: Caller) -> LimitsView:
    """The organization's limits (owner, admin); null: no limit."""
    require(caller, *ADMINS)
    async with svc.db.begin() as session:
        return _view(await session.get(OrgLimits, caller.org_id))


async def set_limits(svc: OrgService, caller: Caller, body: dict[str, Any]) -> LimitsView:
    """Replace the organization's limits whole (owner, admin): a setting left out or null is no limit; audited as
    `limits.set` with the old and new values. Counts already made in the current windows stay."""
    require(caller, *ADMINS)
    try:
        wanted = checked_limits(body)
    except ValueError as exc:
        raise Invalid("invalid_request", str(exc)) from None
    async with svc.db.begin() as session:
        row = await session.get(OrgLimits, caller.org_id)
        old = _view(row)
        if row is None:
            row = OrgLimits(org_id=caller.org_id)
            session.add(row)
        for name, value in wanted.items():
            setattr(row, name, value)
        row.updated_at = utcnow()
        new = _view(row)
        if new != old:
            audit(session, caller.org_id, caller.email, "limits.set", "limits", old=dict(old), new=dict(new))
            await note_change(session, caller.org_id)  # every replica reads the limits again at its next call
    return new


def caller_subjects(caller: Caller) -> list[Subject]:
    """What a member's own call counts against: the member, and the token it came with (a session has none)."""
    subjects = [Subject("member", caller.member_id)]
    if caller.token_id is not None:
        subjects.append(Subject("token", caller.token_id))
    return subjects


def _upsert(session: AsyncSession, org_id: str, window: Window) -> Any:
    postgres = session.bind is not None and session.bind.dialect.name == "postgresql"
    insert = postgresql.insert if postgres else sqlite.insert
    statement = insert(LimitCount).values(key=window.key, org_id=org_id, window_end=window.end, count=1)
    return statement.on_conflict_do_update(
        index_elements=[LimitCount.key], set_={"count": LimitCount.count + 1}
    ).returning(LimitCount.count)


async def charge(svc: OrgService, org_id: str, subjects: Sequence[Subject], *, revision: int | None = None) -> None:
    """Count one call for each of `subjects` in every window of theirs the organization limits.

    `revision`: the organization's change count read with the caller's credentials; while it stays what it was
    when the limits were last read here, they are not read again, and a call no limit applies to touches no row.

    Raises:
        LimitReached: the call would go over a limit: nothing is counted. Of several, the one that resets last
            is named, so that `Retry-After` is when the call can run again.
    """
    now = svc.clock()
    known = svc.known_limits.get(org_id) if revision is not None else None
    if known is not None and known[0] == revision and not windows_of(known[1], list(subjects), now):
        return
    started = False
    async with svc.db() as session:
        async with session.begin():
            limits = await _limits_of(session, org_id)
            if revision is not None:  # read after the count: as recent as that change, or more
                svc.known_limits[org_id] = (revision, limits)
            windows = windows_of(limits, list(subjects), now)
            over: list[Window] = []
            for window in windows:
                count = int((await session.execute(_upsert(session, org_id, window))).scalar_one())
                if count > window.limit:
                    over.append(window)
                started = started or count == 1
            if over:  # leaving the block this way rolls every count of this call back
                last = max(over, key=lambda window: window.end)
                raise LimitReached(Reached(last.subject, last.period, last.limit, last.end, now))
        if started:
            await _sweep(session, org_id, int(now.timestamp()))


async def _sweep(session: AsyncSession, org_id: str, epoch: int) -> None:
    """Delete a bounded batch of the organization's counters whose windows ended a while ago."""
    async with session.begin():
        ended = (
            select(LimitCount.key)
            .where(LimitCount.org_id == org_id, LimitCount.window_end < epoch - SWEEP_GRACE)
            .limit(SWEEP_ROWS)
        )
        await session.execute(delete(LimitCount).where(LimitCount.key.in_(ended)))
