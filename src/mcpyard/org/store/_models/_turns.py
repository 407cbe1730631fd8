"""Turns: the organization's model, teammates, assistants and publications, conversations and turns (ORG-4, ORG-6)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.config import ToolSearchMode
from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, literal_check, org_column, time_column

TurnRowStatus = Literal[
    "running",
    "waiting_for_approval",
    "waiting_for_answer",
    "done",
    "call_limit",
    "time_limit",
    "model_error",
    "interrupted",
]

__all__ = [
    "Assistant",
    "Conversation",
    "ModelSetting",
    "OrgToolSearch",
    "Publication",
    "Teammate",
    "TeammateServer",
    "TurnRow",
]


class ModelSetting(Base):
    """The organization's model: an OpenAI-compatible endpoint, a model name and its key, sealed (ORG-4)."""

    __tablename__ = "model_settings"

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("organizations.id", ondelete="CASCADE"), unique=True, index=True
    )
    base_url: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(200))
    key_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    sealed_key: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    """Nonce and ciphertext of the API key, bound to this row (None: the endpoint needs no key)."""
    updated_at: Mapped[datetime] = time_column()


class OrgToolSearch(Base):
    """When the organization's teammates are offered `find_tools` in place of their tools (MOD-4); no row: `auto`
    with the host's budgets."""

    __tablename__ = "org_tool_search"
    __table_args__ = (literal_check("mode", ToolSearchMode),)

    org_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    mode: Mapped[ToolSearchMode] = mapped_column(String(8))
    max_tools: Mapped[int] = mapped_column(Integer)
    max_tokens: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = time_column()


class Teammate(Base):
    """An internal agent: instructions, a model, and the registered servers it may use (ORG-4)."""

    __tablename__ = "teammates"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    name: Mapped[str] = mapped_column(String(100))
    instructions: Mapped[str] = mapped_column(Text, default="")
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    """A model name at the organization's endpoint (None: the organization's)."""
    created_at: Mapped[datetime] = time_column()
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """When it was deleted (None: in use); a deleted teammate keeps its conversations, turns and name."""


class TeammateServer(Base):
    """One server a teammate may use."""

    __tablename__ = "teammate_servers"
    __table_args__ = (UniqueConstraint("teammate_id", "server_id"),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    teammate_id: Mapped[str] = mapped_column(String(32), ForeignKey("teammates.id", ondelete="CASCADE"), index=True)
    server_id: Mapped[str] = mapped_column(String(32), ForeignKey("servers.id", ondelete="CASCADE"))


class Assistant(Base):
    """A public assistant: instructions and a selection of `run_freely` tools, published by slug (ORG-6)."""

    __tablename__ = "assistants"

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    name: Mapped[str] = mapped_column(String(100))
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    instructions: Mapped[str] = mapped_column(Text, default="")
    tool_ids: Mapped[list[str]] = mapped_column(JSON)
    """The selection, by tool id."""
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False)
    review_reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = time_column()


class Publication(Base):
    """What was published: only server ids, tool names and definition hashes (ORG-6)."""

    __tablename__ = "publications"
    __table_args__ = (Index("ix_publications_assistant_at", "assistant_id", "published_at"),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    assistant_id: Mapped[str] = mapped_column(String(32), ForeignKey("assistants.id", ondelete="CASCADE"))
    tools: Mapped[list[dict[str, str]]] = mapped_column(JSON)
    """`[{server_id, tool, definition_hash}]`."""
    published_by: Mapped[str] = mapped_column(String(320))
    published_at: Mapped[datetime] = time_column()


class Conversation(Base):
    """A member's conversation with a teammate, or a visitor's with an assistant: the messages so far."""

    __tablename__ = "conversations"

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    teammate_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("teammates.id", ondelete="CASCADE"), nullable=True, index=True
    )
    assistant_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("assistants.id", ondelete="CASCADE"), nullable=True, index=True
    )
    member_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """Whose it is (None: a visitor's)."""
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    found_tools: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    """The tools its turns found with `find_tools`, offered in its next turns too (None: none yet)."""
    created_at: Mapped[datetime] = time_column()


class TurnRow(Base):
    """One turn: the message, how it ended, its calls, and (while parked) the state it goes on from."""

    __tablename__ = "turns"
    __table_args__ = (literal_check("status", TurnRowStatus),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    conversation_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    message: Mapped[str] = mapped_column(Text)
    status: Mapped[TurnRowStatus] = mapped_column(String(32), default="running")
    """`running`, `waiting_for_approval` or `waiting_for_answer`, then `done`, `call_limit`, `time_limit`,
    `model_error` or `interrupted` (the process driving it stopped or died)."""
    reply: Mapped[str] = mapped_column(Text, default="")
    calls: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    state: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The `TurnState` while it waits for an approval."""
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = time_column()
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    held_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """While `running`: the process driving it renews this; once it lapses (the process died) any replica ends
    the turn as failed (ORG-9)."""
