"""Webhooks of an organization, as owners and admins manage them: add (the secret shown once), list, delete, and
read each one's delivery log.

The URL is checked by the outbound guard when it is set (and again at each delivery); the shared
secret is made here, sealed with the service's key, and answered only by `add_webhook`.
"""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import delete, func, select

from mcpyard.errors import Conflict, Invalid
from mcpyard.org._caller import ADMINS, Caller, not_found, require, text_field
from mcpyard.org.keys import webhook_secret_context
from mcpyard.org.services._events import audit
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import CreatedWebhookView, DeliveryTryView, DeliveryView, WebhookView
from mcpyard.org.services._webhook_events import EVENTS
from mcpyard.org.store import Webhook, WebhookDelivery, new_id

__all__ = [
    "MAX_WEBHOOKS",
    "MAX_WEBHOOK_URL",
    "WEBHOOK_FIELDS",
    "add_webhook",
    "delete_webhook",
    "list_deliveries",
    "list_webhooks",
]

MAX_WEBHOOKS = 20
"""Webhooks one organization may have."""
MAX_WEBHOOK_URL = 2000
WEBHOOK_FIELDS = ("url", "events", "include_arguments")
SECRET_PREFIX = "whsec_"
"""Shared secrets start with this: a scanner (or a person) can tell what leaked."""


def webhook_json(hook: Webhook) -> WebhookView:
    return {
        "id": hook.id,
        "url": hook.url,
        "events": [str(event) for event in hook.events],
        "include_arguments": hook.include_arguments,
        "created_by": hook.created_by,
        "created_at": hook.created_at.isoformat(),
    }


def delivery_json(row: WebhookDelivery) -> DeliveryView:
    tries: list[DeliveryTryView] = [
        {"at": str(item.get("at")), "status": item.get("status"), "error": item.get("error")} for item in row.tries
    ]
    return {
        "id": row.id,
        "webhook_id": row.webhook_id,
        "event": row.event,
        "status": row.status,
        "attempts": row.attempts,
        "last_status": row.last_status,
        "last_error": row.last_error,
        "created_at": row.created_at.isoformat(),
        "next_at": row.next_at.isoformat() if row.status == "pending" else None,
        "finished_at": row.finished_at.isoformat() if row.finished_at is not None else None,
        "tries": tries,
    }


def _events(body: dict[str, Any]) -> list[str]:
    """The events asked for (every one when left out), or 422 naming the known ones."""
    value = body.get("events")
    if value is None:
        return list(EVENTS)
    if (
        not isinstance(value, list)
        or not value
        or any(not isinstance(item, str) or item not in EVENTS for item in value)
    ):
        raise Invalid("invalid_request", f"`events` must be a non-empty list of: {', '.join(EVENTS)}")
    return [event for event in EVENTS if event in value]


def _include_arguments(body: dict[str, Any]) -> bool:
    value = body.get("include_arguments", False)
    if not isinstance(value, bool):
        raise Invalid("invalid_request", "`include_arguments` must be true or false")
    return value


async def add_webhook(svc: OrgService, caller: Caller, body: dict[str, Any], console_url: str) -> CreatedWebhookView:
    """Add a webhook (owner, admin): its URL checked by the outbound guard, a new secret made and sealed; the
    webhook with its secret, the only time the secret is answered. Links in its payloads start with
    `console_url`.

    Raises:
        Forbidden: the caller is not an owner or admin.
        Invalid: a field is wrong, or `url_refused`: the outbound guard would not send there.
        Conflict: the organization has `MAX_WEBHOOKS` already.
    """
    require(caller, *ADMINS)
    raw_url = text_field(body, "url", MAX_WEBHOOK_URL, required=True)
    assert raw_url is not None  # required
    events, include_arguments = _events(body), _include_arguments(body)
    url = await svc.check_url(raw_url.strip())
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    async with svc.db.begin() as session:
        count = await session.scalar(select(func.count()).select_from(Webhook).where(Webhook.org_id == caller.org_id))
        if (count or 0) >= MAX_WEBHOOKS:
            raise Conflict(
                "too_many_webhooks", f"an organization has at most {MAX_WEBHOOKS} webhooks; delete one first"
            )
        hook = Webhook(
            id=new_id(),
            org_id=caller.org_id,
            url=url,
            events=events,
            include_arguments=include_arguments,
            console_url=console_url,
            created_by=caller.email,
        )
        hook.key_id, hook.sealed_secret = svc.sealer.seal(secret, context=webhook_secret_context(hook.org_id, hook.id))
        session.add(hook)
        await session.flush()
        new = {"url": url, "events": events, "include_arguments": include_arguments}
        audit(session, caller.org_id, caller.email, "webhook.add", hook.id, new=new)
        view = webhook_json(hook)
    return {**view, "secret": secret}


async def list_webhooks(svc: OrgService, caller: Caller) -> list[WebhookView]:
    """The organization's webhooks, oldest first (owner, admin); never a secret."""
    require(caller, *ADMINS)
    async with svc.db.begin() as session:
        rows = await session.scalars(
            select(Webhook).where(Webhook.org_id == caller.org_id).order_by(Webhook.created_at, Webhook.id)
        )
        return [webhook_json(hook) for hook in rows]


async def _own(svc: OrgService, caller: Caller, webhook_id: str) -> Webhook:
    async with svc.db.begin() as session:
        hook = await session.scalar(select(Webhook).where(Webhook.id == webhook_id, Webhook.org_id == caller.org_id))
    if hook is None:
        raise not_found("webhook")  # another organization's is not found either
    return hook


async def delete_webhook(svc: OrgService, caller: Caller, webhook_id: str) -> None:
    """Delete a webhook and its deliveries (owner, admin): nothing more is sent to it, even what was queued."""
    require(caller, *ADMINS)
    hook = await _own(svc, caller, webhook_id)
    async with svc.db.begin() as session:
        await session.execute(
            delete(WebhookDelivery).where(
                WebhookDelivery.webhook_id == hook.id, WebhookDelivery.org_id == caller.org_id
            )
        )
        await session.execute(delete(Webhook).where(Webhook.id == hook.id, Webhook.org_id == caller.org_id))
        audit(session, caller.org_id, caller.email, "webhook.delete", hook.id, old={"url": hook.url})


async def list_deliveries(svc: OrgService, caller: Caller, webhook_id: str, *, limit: int = 100) -> list[DeliveryView]:
    """A webhook's delivery log, newest first (owner, admin)."""
    require(caller, *ADMINS)
    hook = await _own(svc, caller, webhook_id)
    async with svc.db.begin() as session:
        rows = await session.scalars(
            select(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == hook.id, WebhookDelivery.org_id == caller.org_id)
            .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id)
            .limit(limit)
        )
        return [delivery_json(row) for row in rows]
