"""A server's question during a call, parked for a person to answer (MCP elicitation; ORG-5, SEC-2)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, ForeignKey, Index, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, literal_check, org_column, time_column

QuestionStatus = Literal["pending", "accepted", "declined", "cancelled", "expired"]
QuestionMode = Literal["form", "url"]

__all__ = ["Question"]


class Question(Base):
    """A question a server asked during a member's call or a teammate's turn: the form or the URL, who may answer,
    and how it ended. An accepted form's answer waits here sealed, only until the call that asked takes it."""

    __tablename__ = "questions"
    __table_args__ = (Index("ix_questions_org_status", "org_id", "status"), literal_check("status", QuestionStatus))

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    member_id: Mapped[str] = mapped_column(String(32), ForeignKey("members.id", ondelete="CASCADE"))
    """Who started the call: they, owners and admins may answer."""
    server_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    server: Mapped[str] = mapped_column(String(64))
    """The server's name, as people know it."""
    tool: Mapped[str | None] = mapped_column(String(256), nullable=True)
    """The tool whose call asks, by the name the model sees."""
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    call_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    """A member's own call (`POST /api/v1/calls`): its result comes here too once the call ends."""
    mode: Mapped[QuestionMode] = mapped_column(String(8))
    message: Mapped[str] = mapped_column(Text)
    """The server's words, cleaned and redacted."""
    form: Mapped[list[Any]] = mapped_column(JSON)
    """Form mode: the fields (never a value typed into one; a secret field's default is not kept)."""
    url: Mapped[str | None] = mapped_column(Text, nullable=True)
    """URL mode: the address, checked; mcpyard never opens it."""
    site: Mapped[str | None] = mapped_column(String(255), nullable=True)
    status: Mapped[QuestionStatus] = mapped_column(String(16), default="pending")
    """`pending`, then exactly one of `accepted`, `declined`, `cancelled` or `expired`."""
    why: Mapped[str] = mapped_column(Text, default="")
    """Why it expired: not answered in time, or its call ended."""
    created_at: Mapped[datetime] = time_column()
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    held_until: Mapped[datetime] = mapped_column(UTCDateTime)
    """The process holding the call renews this while it waits; past it, the call is gone and the question expires."""
    answered_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    key_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    sealed_answer: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    """An accepted form's content, sealed to this row, until the call takes it (then erased)."""
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """A member's own call: its `CallResult` once it ended (typed secrets redacted)."""
