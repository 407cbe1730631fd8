"""Audit events and alerts: a configuration change is written down (ORG-3); a failure raises an alert once (ORG-8)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.org.services._views import AlertView, AuditEntryView
from mcpyard.org.services._webhook_events import WaitingEvent, queue_event
from mcpyard.org.store import Alert, AuditEvent, new_id, note_change, utcnow

__all__ = ["audit", "clear_alert", "list_alerts", "list_audit", "raise_alert"]


def audit(session: AsyncSession, org_id: str, actor: str, action: str, target: str, **change: Any) -> None:
    """Write down who changed what, with the old and new values (added to the caller's transaction)."""
    session.add(
        AuditEvent(
            org_id=org_id, actor=actor, action=action, target=target, old=change.get("old"), new=change.get("new")
        )
    )


async def raise_alert(
    session: AsyncSession,
    org_id: str,
    kind: str,
    message: str,
    *,
    server_id: str | None = None,
    assistant_id: str | None = None,
) -> None:
    """One open alert per server (or assistant) and kind: a repeat updates its message, it never piles up."""
    open_alert = await session.scalar(
        select(Alert).where(
            Alert.org_id == org_id,
            Alert.kind == kind,
            Alert.server_id.is_(None) if server_id is None else Alert.server_id == server_id,
            Alert.assistant_id.is_(None) if assistant_id is None else Alert.assistant_id == assistant_id,
            Alert.cleared_at.is_(None),
        )
    )
    if open_alert is not None:
        open_alert.message = message
        return
    alert = Alert(
        id=new_id(), org_id=org_id, kind=kind, message=message, server_id=server_id, assistant_id=assistant_id
    )
    session.add(alert)
    await note_change(session, org_id)
    # Queued with the alert; the senders find it at their next look (every few seconds).
    path = f"/alerts#alert-{alert.id}"
    raised = WaitingEvent("alert_raised", org_id, alert.id, path, message=message, alert_kind=kind, server_id=server_id)
    await queue_event(session, raised)


async def clear_alert(
    session: AsyncSession, org_id: str, kind: str, *, server_id: str | None = None, assistant_id: str | None = None
) -> None:
    """The next success clears the server's (or the assistant's) open alert of this kind."""
    query = update(Alert).where(Alert.org_id == org_id, Alert.kind == kind, Alert.cleared_at.is_(None))
    if server_id is not None:
        query = query.where(Alert.server_id == server_id)
    if assistant_id is not None:
        query = query.where(Alert.assistant_id == assistant_id)
    cleared = await session.execute(query.values(cleared_at=utcnow()))
    if getattr(cleared, "rowcount", 0):
        await note_change(session, org_id)


async def list_audit(
    session: AsyncSession, org_id: str, *, action: str | None = None, actor: str | None = None, limit: int = 500
) -> list[AuditEntryView]:
    """The organization's audit log, newest first, filtered by action or actor."""
    query = select(AuditEvent).where(AuditEvent.org_id == org_id)
    if action:
        query = query.where(AuditEvent.action == action)
    if actor:
        query = query.where(AuditEvent.actor == actor)
    rows = await session.scalars(query.order_by(AuditEvent.at.desc()).limit(limit))
    return [
        {
            "id": e.id,
            "at": e.at.isoformat(),
            "actor": e.actor,
            "action": e.action,
            "target": e.target,
            "old": e.old,
            "new": e.new,
        }
        for e in rows
    ]


async def list_alerts(session: AsyncSession, org_id: str, *, open_only: bool = False) -> list[AlertView]:
    """The organization's alerts, newest first (`cleared_at` is null while one is open)."""
    query = select(Alert).where(Alert.org_id == org_id)
    if open_only:
        query = query.where(Alert.cleared_at.is_(None))
    rows = await session.scalars(query.order_by(Alert.raised_at.desc()))
    return [
        {
            "id": a.id,
            "server_id": a.server_id,
            "assistant_id": a.assistant_id,
            "kind": a.kind,
            "message": a.message,
            "raised_at": a.raised_at.isoformat(),
            "cleared_at": a.cleared_at.isoformat() if a.cleared_at is not None else None,
        }
        for a in rows
    ]
