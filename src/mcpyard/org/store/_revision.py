"""Each organization's change counter: bumped with every change that decides what a call may do (ORG-9).

A change (a policy set, a server registered, edited, refreshed or deleted, an alert raised or
cleared, a member removed, a teammate or a publication changed) bumps `organizations.revision` in
its own transaction. Before a call, a replica reads the counter and, when it moved, brings its host
in step with the database first: no replica ever runs a call against what it remembered. On
PostgreSQL the change is also announced, when it commits, on one channel (`NOTIFY mcpyard_org`,
the organization's id first in the payload), so the other replicas catch up before a call comes.
"""

from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.org.store._models import Organization

__all__ = ["CHANNEL", "announce", "note_change", "revision_of"]

CHANNEL = "mcpyard_org"
"""The PostgreSQL channel every replica listens on."""


async def note_change(session: AsyncSession, org_id: str) -> None:
    """Count a change of the organization, in the caller's transaction (announced when it commits)."""
    await session.execute(
        update(Organization).where(Organization.id == org_id).values(revision=Organization.revision + 1)
    )
    await announce(session, org_id)


async def announce(session: AsyncSession, org_id: str, *detail: str) -> None:
    """Tell the other replicas, once the caller's transaction commits, that something of the organization moved
    (`detail`: what, such as `question <id>`); nothing on SQLite, where replicas read the counter instead."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.execute(select(func.pg_notify(CHANNEL, " ".join((org_id, *detail)))))


async def revision_of(session: AsyncSession, org_id: str) -> int:
    """The organization's change counter now (0 for an organization that has none)."""
    found = await session.scalar(select(Organization.revision).where(Organization.id == org_id))
    return int(found or 0)
