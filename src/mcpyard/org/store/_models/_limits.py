"""Limits on calls, set per organization, and the counts of their windows, shared by every replica (ORG-11)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.org.store._models._base import Base, org_column, time_column

__all__ = ["LimitCount", "OrgLimits"]


class OrgLimits(Base):
    """An organization's limits on calls, each a number of calls per window (null: no limit); no row, no limits."""

    __tablename__ = "org_limits"

    org_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    member_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    member_per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)
    token_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    token_per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)
    teammate_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    teammate_per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_at: Mapped[datetime] = time_column()


class LimitCount(Base):
    """The calls one member, token or teammate made in one fixed UTC window (a minute or a day).

    One row per window, keyed by `key` (`member:<id>|minute|<window start>`): a call adds one with a single
    `INSERT … ON CONFLICT (key) DO UPDATE SET count = count + 1 RETURNING count`, so replicas counting at once
    each see their own count. Rows of windows long ended are deleted a few at a time.
    """

    __tablename__ = "limit_counts"
    __table_args__ = (Index("ix_limit_counts_org_ends", "org_id", "window_end"),)

    key: Mapped[str] = mapped_column(String(96), primary_key=True)
    org_id: Mapped[str] = org_column()
    window_end: Mapped[int] = mapped_column(BigInteger)
    """When the window ends, in seconds since the epoch (UTC)."""
    count: Mapped[int] = mapped_column(Integer, default=0)
