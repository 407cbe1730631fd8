"""Long calls: a call whose server answered with a task, followed by one replica at a time (CALL-8, ORG-9)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, Boolean, ForeignKey, Index, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, literal_check, org_column, time_column

TaskCallStatus = Literal["running", "done", "read"]

__all__ = ["TaskCall", "TaskCallStatus"]


class TaskCall(Base):
    """A call (a member's own, or one of a turn) that its server answered with a task of the tasks extension.

    The server's id for the task is sealed to this row: any replica can follow the task to its
    result with it. The replica following it renews `held_until`; once that lapses (the replica
    stopped or died) another takes it over. The result waits here until the member who started the
    call reads it, once; then it is erased.
    """

    __tablename__ = "task_calls"
    __table_args__ = (
        Index("ix_task_calls_status_held", "status", "held_until"),
        literal_check("status", TaskCallStatus),
    )

    id: Mapped[str] = id_column()
    """The call's id (its record's `call_id`)."""
    org_id: Mapped[str] = org_column()
    member_id: Mapped[str] = mapped_column(String(32), ForeignKey("members.id", ondelete="CASCADE"))
    """Who started the call: only they read its result."""
    conversation: Mapped[str] = mapped_column(String(64))
    """Where its stored results (handles) belong."""
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    face_task_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    """A call made over `/mcp` by a client that takes tasks: the id of the task the client was given (any replica
    answers its polls from this row)."""
    tool: Mapped[str] = mapped_column(String(256))
    """The tool, by the name the model sees."""
    server: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(64))
    """What the server's task belongs to (`ServerSpec.task_target`): a server since pointed elsewhere is not asked."""
    arguments: Mapped[dict[str, Any]] = mapped_column(JSON)
    """As the call was sent, redacted: the turn's trace shows them while the call runs, its record once it ended."""
    key_id: Mapped[str] = mapped_column(String(32))
    sealed_task: Mapped[bytes] = mapped_column(LargeBinary)
    """The server's id for the task, sealed to this row."""
    status: Mapped[TaskCallStatus] = mapped_column(String(16), default="running")
    """`running`, then `done` (its result waits here), then `read` (given to its member once; erased)."""
    message: Mapped[str] = mapped_column(Text, default="")
    """The task's latest status message, cleaned and redacted."""
    held_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """While `running`: the replica following the task renews this; past it, another takes the task over."""
    holder: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """Which process follows the task now: only it renews the lease and writes the end."""
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    """Its MCP client cancelled the task on a replica not following it: the one that does cancels it at its next
    renewal."""
    created_at: Mapped[datetime] = time_column()
    updated_at: Mapped[datetime] = time_column()
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """Once `done`: the call's result as the API gives it, until it is read."""
