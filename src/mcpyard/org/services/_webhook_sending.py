"""Sending webhook deliveries, off the request path, on whichever replica claims each one first.

Every replica runs `deliver_webhooks`: it looks for due deliveries (woken at once when this process
queued one, else every `poll_seconds`), claims each with one conditional update (`pending` →
`sending`, with a lease, so two replicas never send the same attempt; a replica that dies mid-send
leaves it to be claimed again once the lease lapsed), POSTs it through the outbound guard (the URL
checked again, no redirects, a short deadline, the answer read no further than a few KiB) and writes
down the attempt. Network errors, 408, 429 and 5xx are tried again with exponential backoff (a
`Retry-After` of at most `max_retry_after_seconds` is honoured), up to `attempts` in all; any other
answer is final.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

import anyio
import httpx2
from anyio.abc import TaskStatus
from sqlalchemy import select, update

from mcpyard import __version__
from mcpyard.connect import guarded_client
from mcpyard.errors import CallError, ConfigError, ServiceError
from mcpyard.ops import count_delivery
from mcpyard.org.keys import webhook_secret_context
from mcpyard.org.services._service import OrgService
from mcpyard.org.store import Webhook, WebhookDelivery, utcnow

__all__ = [
    "WAKE_WEBHOOKS",
    "WebhookSettings",
    "deliver_due",
    "deliver_webhooks",
    "retry_delay",
    "sign",
    "verdict",
]

WAKE_WEBHOOKS = "webhooks"
"""The `Wakeups` name this process's sender waits on: queuing a delivery here wakes it at once."""
MAX_ANSWER_BYTES = 4096
"""How much of a receiver's answer is read (it is not kept: only its status matters)."""
MAX_ERROR_CHARS = 300
BATCH = 8
"""Deliveries one replica sends at once."""
_log = logging.getLogger("mcpyard.org")

Verdict = Literal["delivered", "retry", "failed"]


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """How webhook deliveries are sent and tried again (a test makes the backoff short)."""

    attempts: int = 6
    """Attempts in all before a delivery is marked failed."""
    backoff_seconds: float = 20.0
    """The wait after the first failed attempt, doubled after each (20 s, 40 s, … : about 10 minutes for 6)."""
    timeout_seconds: float = 10.0
    """How long one attempt may take in all: resolving, connecting, sending, the answer."""
    poll_seconds: float = 2.0
    """How often a replica looks for deliveries another replica queued (its own wake it at once)."""
    max_retry_after_seconds: float = 600.0
    """The longest `Retry-After` honoured; a longer one is cut to this."""


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """`Mcpyard-Signature`'s value: `v1=` and the hex HMAC-SHA256, keyed by the secret, of `<timestamp>.<body>`."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return f"v1={mac.hexdigest()}"


def verdict(status: int) -> Verdict:
    """What a receiver's HTTP status means for the delivery: 2xx done; 408, 429 and 5xx try again; else final."""
    if 200 <= status < 300:
        return "delivered"
    if status in (408, 429) or status >= 500:
        return "retry"
    return "failed"


def retry_delay(attempt: int, settings: WebhookSettings, retry_after: float | None = None) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based): the backoff, or the receiver's
    `Retry-After` when that is longer (cut to `max_retry_after_seconds`)."""
    backoff = float(settings.backoff_seconds * 2 ** (attempt - 1))
    if retry_after is None:
        return backoff
    return max(backoff, min(retry_after, settings.max_retry_after_seconds))


def _retry_after(value: str | None) -> float | None:
    """A `Retry-After` in seconds (the date form is not honoured: the backoff applies)."""
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())


@dataclass(frozen=True, slots=True)
class _Attempt:
    status: int | None
    error: str | None
    verdict: Verdict
    retry_after: float | None = None


async def deliver_webhooks(
    svc: OrgService, settings: WebhookSettings, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Send due deliveries until cancelled (the service's lifespan runs this on every replica)."""
    task_status.started()
    while True:
        try:
            sent = await deliver_due(svc, settings)
        except Exception as exc:  # the database is away for a moment: the next round tries again
            _log.warning("sending webhook deliveries failed (%s)", type(exc).__name__)
            sent = 0
        if sent:
            continue
        with anyio.move_on_after(settings.poll_seconds):
            await svc.wakeups.event(WAKE_WEBHOOKS).wait()


async def deliver_due(svc: OrgService, settings: WebhookSettings) -> int:
    """Claim and send the deliveries due now (at most `BATCH`, at once); how many this replica claimed."""
    now = utcnow()
    # The database's part is shielded: a replica stopping mid-query would leave the connection half-closed
    # (SQLite's driver then keeps a closing task the event loop cannot end); these queries take milliseconds.
    with anyio.CancelScope(shield=True):
        async with svc.db.begin() as session:
            due = list(
                await session.scalars(
                    select(WebhookDelivery.id).where(_claimable(now)).order_by(WebhookDelivery.next_at).limit(BATCH)
                )
            )
    claimed = 0
    async with anyio.create_task_group() as tg:
        for delivery_id in due:
            with anyio.CancelScope(shield=True):
                work = await _claim(svc, settings, delivery_id)
            if work is not None:
                claimed += 1
                tg.start_soon(_send_claimed, svc, settings, *work)
    return claimed


def _claimable(now: Any) -> Any:
    """Due and not held: pending and its time come, or sending under a lease that lapsed (its replica died)."""
    pending = (WebhookDelivery.status == "pending") & (WebhookDelivery.next_at <= now)
    lapsed = (WebhookDelivery.status == "sending") & (WebhookDelivery.held_until < now)
    return pending | lapsed


async def _claim(
    svc: OrgService, settings: WebhookSettings, delivery_id: str
) -> tuple[WebhookDelivery, str, str] | None:
    """`pending` → `sending` in one conditional update (of two replicas, one gets it); the delivery, its URL and
    its secret (unsealed here, in memory only)."""
    now = utcnow()
    lease = now + timedelta(seconds=settings.timeout_seconds * 3 + 30)
    async with svc.db.begin() as session:
        claimed = await session.scalar(
            update(WebhookDelivery)
            .where(WebhookDelivery.id == delivery_id, _claimable(now))
            .values(status="sending", held_until=lease, attempts=WebhookDelivery.attempts + 1)
            .returning(WebhookDelivery)
            .execution_options(synchronize_session=False)
        )
        if claimed is None:
            return None
        hook = await session.get(Webhook, claimed.webhook_id)
        if hook is None:  # deleted meanwhile: its deliveries go with it
            return None
        context = webhook_secret_context(hook.org_id, hook.id)
        try:
            secret = svc.sealer.unseal(hook.key_id, hook.sealed_secret, context=context, what="a webhook's secret")
        except ConfigError as exc:  # its key is gone: no attempt can ever be signed
            claimed.status, claimed.last_error, claimed.finished_at = "failed", exc.message, now
            claimed.held_until = None
            return None
        return claimed, hook.url, secret


async def _send_claimed(
    svc: OrgService, settings: WebhookSettings, delivery: WebhookDelivery, url: str, secret: str
) -> None:
    if delivery.attempts > settings.attempts:  # claimed again after a replica died on its last attempt
        attempt = _Attempt(None, "the service stopped while this was sent", "failed")
    else:
        attempt = await _post(svc, settings, url, secret, delivery.id, delivery.payload)
    try:
        with anyio.CancelScope(shield=True):  # as in `deliver_due`: a write is never cut in the middle
            await _record(svc, settings, delivery, attempt)
    except Exception as exc:  # the lease lapses and another round sends it again
        _log.warning("writing down a webhook delivery failed (%s)", type(exc).__name__)


async def _post(
    svc: OrgService, settings: WebhookSettings, url: str, secret: str, delivery_id: str, body: dict[str, Any]
) -> _Attempt:
    """One attempt: the URL checked again by the outbound guard, then the signed POST."""
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"mcpyard-webhooks/{__version__}",
        "Mcpyard-Webhook-Id": delivery_id,
        "Mcpyard-Timestamp": timestamp,
        "Mcpyard-Signature": sign(secret, timestamp, content),
    }
    if svc.guard is None:
        return _Attempt(None, "the service has no outbound guard to send through", "failed")
    try:
        with anyio.fail_after(settings.timeout_seconds):
            await svc.check_url(url)
            async with (
                guarded_client(svc.guard, timeout=httpx2.Timeout(settings.timeout_seconds)) as http,
                http.stream("POST", url, content=content, headers=headers) as response,
            ):
                read = 0
                async for chunk in response.aiter_bytes():
                    read += len(chunk)
                    if read > MAX_ANSWER_BYTES:
                        break  # the answer is not kept: no need to read a long one
                status = response.status_code
                return _Attempt(status, None, verdict(status), _retry_after(response.headers.get("retry-after")))
    except ServiceError as exc:  # the outbound guard refused the address (or a redirect): final
        return _Attempt(None, exc.message[:MAX_ERROR_CHARS], "failed")
    except TimeoutError:
        return _Attempt(None, f"no answer within {settings.timeout_seconds:g} s", "retry")
    except CallError as exc:
        return _Attempt(None, exc.message[:MAX_ERROR_CHARS], "failed")
    except (httpx2.HTTPError, OSError) as exc:
        return _Attempt(None, f"could not reach the receiver ({type(exc).__name__})", "retry")


async def _record(svc: OrgService, settings: WebhookSettings, delivery: WebhookDelivery, attempt: _Attempt) -> None:
    """Write the attempt down: delivered, pending again after the backoff, or failed for good."""
    now = utcnow()
    tried = {"at": now.isoformat(), "status": attempt.status, "error": attempt.error}
    values: dict[str, Any] = {
        "tries": [*delivery.tries, tried][-settings.attempts :],
        "last_status": attempt.status,
        "last_error": attempt.error,
        "held_until": None,
    }
    if attempt.verdict == "retry" and delivery.attempts < settings.attempts:
        delay = retry_delay(delivery.attempts, settings, attempt.retry_after)
        values.update(status="pending", next_at=now + timedelta(seconds=delay))
    else:
        values.update(status="delivered" if attempt.verdict == "delivered" else "failed", finished_at=now)
    async with svc.db.begin() as session:
        await session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id == delivery.id,
                WebhookDelivery.status == "sending",
                WebhookDelivery.attempts == delivery.attempts,
            )
            .values(**values)
            .execution_options(synchronize_session=False)
        )
    count_delivery(values["status"] if values["status"] != "pending" else "retried", org=delivery.org_id)
    if values["status"] == "failed":
        _log.info("a webhook delivery failed after %d attempts (HTTP %s)", delivery.attempts, attempt.status or "none")
