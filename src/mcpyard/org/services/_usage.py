"""Usage: the organization's calls in a period, by member, server, tool or day, from the calls' records (API-8, ORG-11).

Each group counts its calls, the calls that ended in an error (refused by policy, failed, or a tool's
error result: every record with an error code), the seconds they took and the bytes of their
results. A group's key is what a reader knows it by: a member's email, a server's name (a deleted
server's too), a tool's name as the API and the model see it (`<server>__<tool>`), or a UTC day
(`2026-12-05`). Calls with no member are a published assistant's visitors' (`visitor`); calls that
named no server (an unknown tool, reading a stored result) are under `(none)`. Calls refused by a
limit never ran, so they are not here.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal, get_args

from sqlalchemy import case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import Invalid
from mcpyard.org._caller import ADMINS, Caller, require
from mcpyard.org.services._limits import LIMIT_REACHED
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import UsageView
from mcpyard.org.store import CallRow, Member, RegisteredServer, utcnow

__all__ = ["DEFAULT_DAYS", "GROUPS", "MAX_DAYS", "Group", "usage", "usage_period"]

Group = Literal["member", "server", "tool", "day"]
GROUPS: tuple[Group, ...] = get_args(Group)
DEFAULT_DAYS = 30
"""The period when none is given: the last 30 days."""
MAX_DAYS = 366
"""The longest period one request may read."""
NONE_KEY = "(none)"


def _moment(name: str, text: str, *, end: bool) -> datetime:
    """An ISO 8601 time (no zone: UTC) or a date: its midnight, UTC; for `until`, the midnight ending it."""
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime.combine(day + timedelta(days=1 if end else 0), time(), UTC)
        moment = datetime.fromisoformat(text)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise Invalid(
            "invalid_request", f"`{name}` must be a date (2026-12-01) or an ISO 8601 time (2026-12-01T09:30:00Z)"
        ) from None


def usage_period(since: str | None, until: str | None, now: datetime) -> tuple[datetime, datetime]:
    """The period `[since, until)` a request asks for: by default the last 30 days up to `now`; at most a year."""
    try:
        end = _moment("until", until, end=True) if until else now
        start = _moment("since", since, end=False) if since else end - timedelta(days=DEFAULT_DAYS)
    except OverflowError:
        raise Invalid("invalid_request", "`since` and `until` must be dates between the years 1 and 9999") from None
    if start >= end:
        raise Invalid("invalid_request", "`since` must be before `until`")
    if end - start > timedelta(days=MAX_DAYS):
        raise Invalid("invalid_request", f"the period may be at most {MAX_DAYS} days: narrow `since` and `until`")
    return start, end


def _day(session: AsyncSession) -> Any:
    """A call's UTC day as `YYYY-MM-DD`, on either engine (SQLite keeps times as UTC text)."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        return func.to_char(func.timezone("UTC", CallRow.started_at), "YYYY-MM-DD")
    return func.substr(CallRow.started_at, 1, 10)


async def _names(session: AsyncSession, group: Group, org_id: str, ids: list[str]) -> dict[str, str]:
    if group == "member":
        rows = await session.execute(select(Member.id, Member.email).where(Member.org_id == org_id, Member.id.in_(ids)))
    elif group == "server":
        rows = await session.execute(
            select(RegisteredServer.id, RegisteredServer.name).where(
                RegisteredServer.org_id == org_id, RegisteredServer.id.in_(ids)
            )
        )
    else:
        return {}
    return {str(row_id): str(name) for row_id, name in rows.all()}


async def usage(
    svc: OrgService, caller: Caller, group: str | None, since: str | None, until: str | None
) -> list[UsageView]:
    """The organization's calls in the period, grouped (owner, admin): most calls first, or by day for `day`."""
    require(caller, *ADMINS)
    if group is None:
        group = "member"
    if group not in GROUPS:
        raise Invalid("invalid_request", f"`group_by` must be one of {', '.join(GROUPS)}")
    start, end = usage_period(since, until, utcnow())
    await svc.hosts.records.flush()  # every call answered by this process is counted
    async with svc.db.begin() as session:
        column = {"member": CallRow.member_id, "server": CallRow.server_id, "tool": CallRow.tool}.get(group)
        grouped = column if column is not None else _day(session)
        query = (
            select(
                grouped,
                func.count(),
                func.sum(case((CallRow.error_code.is_not(None), 1), else_=0)),
                func.sum(CallRow.duration_ms),
                func.sum(CallRow.result_bytes),
            )
            .where(CallRow.org_id == caller.org_id, CallRow.started_at >= start, CallRow.started_at < end)
            # A turn's call refused by a limit is in its trace; it never ran, so it is no usage.
            .where(or_(CallRow.error_code.is_(None), CallRow.error_code != LIMIT_REACHED))
            .group_by(grouped)
        )
        rows = (await session.execute(query)).all()
        names = await _names(session, group, caller.org_id, [str(row[0]) for row in rows if row[0] is not None])
    found = [
        UsageView(
            key=NONE_KEY if key is None else names.get(str(key), str(key)),
            calls=int(calls),
            errors=int(errors or 0),
            seconds=round(float(millis or 0) / 1000, 3),
            bytes=int(size or 0),
        )
        for key, calls, errors, millis, size in rows
    ]
    if group == "day":
        return sorted(found, key=lambda view: view["key"])
    return sorted(found, key=lambda view: (-view["calls"], view["key"]))
