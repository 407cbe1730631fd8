"""Calls: approvals waiting for a person, each call's record, long results kept by handle (ORG-5, ORG-7)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, literal_check, org_column, time_column

ApprovalStatus = Literal["pending", "running", "done", "failed", "declined"]
CallRowStatus = Literal["ran", "failed", "refused", "cached"]
"""How a recorded call ended: the pipeline's `CallStatus`, as stored."""

__all__ = ["Approval", "CallRow", "StoredResult"]


class Approval(Base):
    """An ask-first call waiting for a person: the saved arguments, run once when approved (ORG-5, APR-2)."""

    __tablename__ = "approvals"
    __table_args__ = (Index("ix_approvals_org_status", "org_id", "status"), literal_check("status", ApprovalStatus))

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    member_id: Mapped[str] = mapped_column(String(32), ForeignKey("members.id", ondelete="CASCADE"))
    """Who asked for the call."""
    tool_id: Mapped[str] = mapped_column(String(32), ForeignKey("tools.id", ondelete="CASCADE"))
    tool_name: Mapped[str] = mapped_column(String(256))
    """The name as the model sees it."""
    definition_hash: Mapped[str] = mapped_column(String(64))
    """The definition the call was asked for: it runs only if the tool still has it."""
    conversation: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[dict[str, Any]] = mapped_column(JSON)
    """Exactly what will be sent."""
    arguments_preview: Mapped[str] = mapped_column(Text)
    """Redacted, for the inbox."""
    reason: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[ApprovalStatus] = mapped_column(String(16), default="pending")
    """`pending`, then `running` (claimed: exactly one decision wins), `done`, `failed` or `declined`."""
    decided_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The `CallResult` of the single run."""
    created_at: Mapped[datetime] = time_column()
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    """The teammate's turn parked on it: it goes on once the call is decided (ORG-5)."""
    tool_call_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The model's id for the call in that turn."""
    client: Mapped[str | None] = mapped_column(String(120), nullable=True)
    """The MCP client that asked for the call (`clientInfo` name and version), when one did (ORG-10)."""
    held_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """While `running`: the process running it renews this; once it lapses (the process died) any replica marks
    the run failed, never running it again (ORG-9)."""


class CallRow(Base):
    """One call's record, secrets redacted (the turn trace and the audit read these)."""

    __tablename__ = "calls"
    __table_args__ = (Index("ix_calls_org_at", "org_id", "started_at"),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    member_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    conversation: Mapped[str] = mapped_column(String(64))
    server_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    tool: Mapped[str] = mapped_column(String(256))
    arguments: Mapped[dict[str, Any]] = mapped_column(JSON)
    decision: Mapped[str | None] = mapped_column(String(16), nullable=True)
    why: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[CallRowStatus] = mapped_column(String(32))
    error_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    duration_ms: Mapped[float] = mapped_column(default=0.0)
    result_bytes: Mapped[int] = mapped_column(Integer, default=0)
    summary: Mapped[str] = mapped_column(Text, default="")
    approval_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    started_at: Mapped[datetime] = time_column()
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    """The turn that made the call (its trace, ORG-7), if one did."""
    client: Mapped[str | None] = mapped_column(String(120), nullable=True)
    """The MCP client that made the call, when one did (ORG-10)."""


class StoredResult(Base):
    """A long result kept by handle, readable only in the conversation that made it, on any replica (CALL-4, ORG-7,
    ORG-9); bounded per organization, least recently used out."""

    __tablename__ = "results"
    __table_args__ = (Index("ix_results_org_used", "org_id", "last_used_at"),)

    handle: Mapped[str] = mapped_column(String(64), primary_key=True)
    org_id: Mapped[str] = org_column()
    conversation: Mapped[str] = mapped_column(String(64))
    server: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = time_column()
    size: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The text's length in UTF-8 bytes: what the organization's bound counts."""
    last_used_at: Mapped[datetime] = time_column()
