"""Webhooks: where an organization's waiting approvals, questions and alerts are sent, and each delivery's log.

A webhook's shared secret is sealed with the service's key (like a server's token); a delivery is a
row, so it survives a restart and any replica may send it, claimed by one conditional update.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, literal_check, org_column, time_column

DeliveryStatus = Literal["pending", "sending", "delivered", "failed"]

__all__ = ["DeliveryStatus", "Webhook", "WebhookDelivery"]


class Webhook(Base):
    """An address told when something waits for a person: the events it wants, and whether argument values go."""

    __tablename__ = "webhooks"

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    url: Mapped[str] = mapped_column(Text)
    """Checked by the outbound guard when set and again at each delivery."""
    events: Mapped[list[Any]] = mapped_column(JSON)
    include_arguments: Mapped[bool] = mapped_column(Boolean, default=False)
    """Whether an approval's (redacted) argument values go with it; off unless an owner or admin turned it on."""
    console_url: Mapped[str] = mapped_column(Text)
    """The console's origin the links in each payload start with (where the webhook was added from)."""
    key_id: Mapped[str] = mapped_column(String(32))
    sealed_secret: Mapped[bytes] = mapped_column(LargeBinary)
    """The shared secret deliveries are signed with: sealed to this row, shown once when made, never again."""
    created_by: Mapped[str] = mapped_column(String(320))
    created_at: Mapped[datetime] = time_column()


class WebhookDelivery(Base):
    """One event sent (or to send) to one webhook: its payload, each attempt, and how it ended."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_due", "status", "next_at"),
        Index("ix_webhook_deliveries_webhook", "webhook_id", "created_at"),
        literal_check("status", DeliveryStatus),
    )

    id: Mapped[str] = id_column()
    """Sent as `Mcpyard-Webhook-Id`: the same on every attempt, so a receiver can drop a repeat."""
    org_id: Mapped[str] = org_column()
    webhook_id: Mapped[str] = mapped_column(String(32), ForeignKey("webhooks.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[DeliveryStatus] = mapped_column(String(16), default="pending")
    """`pending` (waiting for `next_at`), `sending` (claimed by one replica until `held_until`), then `delivered`
    or `failed`."""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    tries: Mapped[list[Any]] = mapped_column(JSON, default=list)
    """Each attempt: when, the HTTP status or the error (never the secret, never the body)."""
    last_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = time_column()
    next_at: Mapped[datetime] = mapped_column(UTCDateTime)
    held_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
