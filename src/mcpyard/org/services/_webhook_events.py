"""What a webhook is told when something waits for a person: the event's payload, queued with the event itself.

An approval parked, a question sent to the inbox, an alert raised: each adds one delivery row per
webhook that wants it, in the transaction that records the event, so a delivery exists exactly
when the event does (a rolled-back event sends nothing) and survives a restart. The payload is
Slack-compatible as it is: a one-line `text` with the link, then the structured fields. Argument
values go only to a webhook that asked for them, and then only as the inbox shows them (redacted).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.org.store import Member, Organization, RegisteredServer, Webhook, WebhookDelivery, utcnow

__all__ = ["EVENTS", "KEEP_DELIVERIES", "EventKind", "WaitingEvent", "payload", "queue_event", "summary"]

EventKind = Literal["approval_waiting", "question_waiting", "alert_raised"]
EVENTS: tuple[EventKind, ...] = ("approval_waiting", "question_waiting", "alert_raised")
KEEP_DELIVERIES = 200
"""Finished deliveries kept per webhook (the log); older ones go as new ones come."""
MAX_SUMMARY_PART = 200
"""The longest message quoted in the one-line `text` (the whole message is in `message`)."""


@dataclass(frozen=True, slots=True)
class WaitingEvent:
    """Something a person should look at, as the webhooks hear of it."""

    kind: EventKind
    org_id: str
    subject_id: str
    """The approval's, question's or alert's id."""
    path: str
    """Where the console shows it (`/inbox#approval-<id>`), appended to each webhook's console address."""
    server: str | None = None
    tool: str | None = None
    member_id: str | None = None
    message: str | None = None
    """The server's question or the alert's words (already cleaned and redacted where they were stored)."""
    alert_kind: str | None = None
    arguments: str | None = None
    """An approval's arguments as the inbox shows them (redacted): sent only to a webhook that turned them on."""
    server_id: str | None = None
    """The server an alert is about, when the event knows it by id only."""


def _slack_escaped(text: str) -> str:
    """Slack reads `&`, `<` and `>` as markup: escaped, a name a server chose cannot forge a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def summary(event: WaitingEvent, org_name: str, member: str | None, link: str) -> str:
    """The one-line `text` a chat shows: what waits, for whom, and the link; never an argument's value."""
    who = member or "someone"
    if event.kind == "approval_waiting":
        words = f"{who} asks to run {event.tool} on {event.server}: approve or decline it"
    elif event.kind == "question_waiting":
        words = f"{event.server} asks {who} a question during {event.tool or 'a call'}: answer it"
    else:
        message = (event.message or "")[:MAX_SUMMARY_PART]
        words = f"alert ({event.alert_kind}){f' on {event.server}' if event.server else ''}: {message}; see it"
    return _slack_escaped(f"[{org_name}] {words} at {link}")


def payload(
    event: WaitingEvent,
    *,
    org_name: str,
    member: Member | None,
    console_url: str,
    at: datetime,
    include_arguments: bool,
) -> dict[str, Any]:
    """The JSON body one webhook is sent for `event` (the same on every attempt)."""
    link = f"{console_url.rstrip('/')}{event.path}"
    email = member.email if member is not None else None
    body: dict[str, Any] = {
        "text": summary(event, org_name, email, link),
        "event": event.kind,
        "organization": {"id": event.org_id, "name": org_name},
        "link": link,
        "subject": {"type": event.kind.partition("_")[0], "id": event.subject_id},
        "server": event.server,
        "tool": event.tool,
        "member": {"id": member.id, "email": member.email} if member is not None else None,
        "message": event.message,
        "at": at.isoformat(),
    }
    if event.alert_kind is not None:
        body["subject"]["kind"] = event.alert_kind
    if include_arguments and event.arguments is not None:
        body["arguments"] = event.arguments
    return body


async def queue_event(session: AsyncSession, event: WaitingEvent) -> int:
    """Queue a delivery of `event` to each of its organization's webhooks that wants it (in the caller's
    transaction); how many. The senders, on any replica, pick them up (`deliver_webhooks`)."""
    hooks = [
        hook
        for hook in await session.scalars(select(Webhook).where(Webhook.org_id == event.org_id))
        if event.kind in hook.events
    ]
    if not hooks:
        return 0
    org_name = await session.scalar(select(Organization.name).where(Organization.id == event.org_id)) or "?"
    member = None
    if event.member_id is not None:
        member = await session.scalar(select(Member).where(Member.id == event.member_id, Member.org_id == event.org_id))
    if event.server is None and event.server_id is not None:
        name = await session.scalar(
            select(RegisteredServer.name).where(
                RegisteredServer.id == event.server_id, RegisteredServer.org_id == event.org_id
            )
        )
        event = replace(event, server=name)
    now = utcnow()
    for hook in hooks:
        body = payload(
            event,
            org_name=org_name,
            member=member,
            console_url=hook.console_url,
            at=now,
            include_arguments=hook.include_arguments,
        )
        session.add(
            WebhookDelivery(
                org_id=event.org_id,
                webhook_id=hook.id,
                event=event.kind,
                payload=body,
                status="pending",
                attempts=0,
                tries=[],
                created_at=now,
                next_at=now,
            )
        )
        await _prune(session, hook.id)
    return len(hooks)


async def _prune(session: AsyncSession, webhook_id: str) -> None:
    """Keep the log bounded: finished deliveries past the newest `KEEP_DELIVERIES` of the webhook go."""
    newest = (
        select(WebhookDelivery.id)
        .where(WebhookDelivery.webhook_id == webhook_id)
        .order_by(WebhookDelivery.created_at.desc())
        .limit(KEEP_DELIVERIES)
    )
    await session.execute(
        delete(WebhookDelivery)
        .where(
            WebhookDelivery.webhook_id == webhook_id,
            WebhookDelivery.status.in_(("delivered", "failed")),
            WebhookDelivery.id.not_in(newest.scalar_subquery()),
        )
        .execution_options(synchronize_session=False)
    )
