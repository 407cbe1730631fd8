"""What people should see happened: the audit log of configuration changes, and alerts (ORG-3, ORG-8)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, org_column, time_column

__all__ = ["Alert", "AuditEvent"]


class AuditEvent(Base):
    """A configuration change: who, when, what, the old and new values (ORG-3)."""

    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_org_at", "org_id", "at"),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    at: Mapped[datetime] = time_column()
    actor: Mapped[str] = mapped_column(String(320))
    """The member's email (or `mcpyard` for the service itself)."""
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(Text)
    old: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    new: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class Alert(Base):
    """Something a person should look at: a server that fails, a publication that no longer qualifies (ORG-8)."""

    __tablename__ = "alerts"
    __table_args__ = (Index("ix_alerts_org_open", "org_id", "cleared_at"),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    server_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    assistant_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(Text)
    raised_at: Mapped[datetime] = time_column()
    cleared_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
