"""The organization service's storage: typed SQLAlchemy 2 models, one schema for SQLite and PostgreSQL (ORG-9).

Every row that belongs to an organization carries `org_id`, and every query the service makes is
scoped by it (THREATS: an id from another organization answers 404). Ids are random strings
(`new_id`), never sequential numbers. Times are timezone-aware UTC. Sealed credentials live in
a table of their own, apart from the settings they belong to (ORG-2).
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = [
    "Alert",
    "ApiToken",
    "Approval",
    "Assistant",
    "AuditEvent",
    "Base",
    "CallRow",
    "Conversation",
    "Credential",
    "Member",
    "ModelSetting",
    "Organization",
    "Policy",
    "Publication",
    "RegisteredServer",
    "StoredResult",
    "Teammate",
    "TeammateServer",
    "Tool",
    "TurnRow",
    "UTCDateTime",
    "new_id",
    "utcnow",
]


def new_id() -> str:
    """A random id (128 bits, URL-safe): guessing another organization's ids is hopeless."""
    return secrets.token_urlsafe(16)


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC time on both engines.

    SQLite keeps no time zone: a plain `DateTime(timezone=True)` comes back naive there and
    cannot be compared with `utcnow()`. Times are stored in UTC and always read back aware.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("a naive datetime cannot be stored: use an aware UTC time (utcnow())")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Constraint names are fixed, the same on both engines: a later migration can name what it
# alters (SQLite's batch mode cannot drop an unnamed constraint).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """The models' common base; `Base.metadata` is what the migrations must match."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON, datetime: UTCDateTime}


def _id() -> Mapped[str]:
    return mapped_column(String(32), primary_key=True, default=new_id)


def _when() -> Mapped[datetime]:
    return mapped_column(UTCDateTime, default=utcnow)


def _org() -> Mapped[str]:
    return mapped_column(String(32), ForeignKey("organizations.id", ondelete="CASCADE"), index=True)


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[str] = _id()
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = _when()


class Member(Base):
    """A person of one organization: owner, admin or member (ORG-1)."""

    __tablename__ = "members"
    __table_args__ = (UniqueConstraint("org_id", "email"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    email: Mapped[str] = mapped_column(String(320), index=True)
    role: Mapped[str] = mapped_column(String(16))
    """`owner`, `admin` or `member`."""
    password_hash: Mapped[str] = mapped_column(String(200))
    """argon2id, with its own parameters and salt."""
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = _when()


class ApiToken(Base):
    """A program's credential: only its SHA-256 is kept; the token itself is shown once (ORG-1)."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    member_id: Mapped[str] = mapped_column(String(32), ForeignKey("members.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = _when()
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class RegisteredServer(Base):
    """An MCP server an owner or admin registered: a name and a streamable HTTP URL (ORG-2)."""

    __tablename__ = "servers"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    name: Mapped[str] = mapped_column(String(64))
    """The tool prefix (CAT-1)."""
    url: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16), default="connecting")
    """`connected`, `failed` or `connecting`."""
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    protocol_version: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = _when()
    refreshed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """Set when deleted: its tools stop at once, and calls to them are refused as `server_deleted` (ORG-8)."""

    tools: Mapped[list[Tool]] = relationship(back_populates="server", cascade="all, delete-orphan")


class Credential(Base):
    """A server's bearer token or client credentials, sealed with AES-GCM under a key kept outside the database
    (ORG-2)."""

    __tablename__ = "credentials"

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    server_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("servers.id", ondelete="CASCADE"), unique=True, index=True
    )
    kind: Mapped[str] = mapped_column(String(32), default="bearer")
    """`bearer` (the token sealed) or `client_credentials` (client id, secret, issuer and scopes sealed as JSON)."""
    key_id: Mapped[str] = mapped_column(String(32))
    """Which key sealed it: rotation re-seals in place."""
    sealed: Mapped[bytes] = mapped_column(LargeBinary)
    """Nonce and ciphertext (with its tag)."""
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """What may be shown of it (client credentials: client id, issuer, scopes), never the secret; connecting
    reads the sealed value only, so an altered copy here sends nothing anywhere."""
    created_at: Mapped[datetime] = _when()


class Tool(Base):
    """A tool a registered server listed: its definition as sent, its hash (CAT-2) and its state (POL-5)."""

    __tablename__ = "tools"
    __table_args__ = (UniqueConstraint("server_id", "name"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    server_id: Mapped[str] = mapped_column(String(32), ForeignKey("servers.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(256))
    """The tool's name on its server."""
    definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    definition_hash: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16), default="active")
    """`active`, `changed` (the definition moved since it was reviewed) or `removed` (no longer listed)."""
    first_seen_at: Mapped[datetime] = _when()
    updated_at: Mapped[datetime] = _when()

    server: Mapped[RegisteredServer] = relationship(back_populates="tools")
    policy: Mapped[Policy | None] = relationship(back_populates="tool", cascade="all, delete-orphan", uselist=False)


class Policy(Base):
    """A tool's one policy, bound to the definition hash the person reviewed (POL-5, ORG-3)."""

    __tablename__ = "policies"

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    tool_id: Mapped[str] = mapped_column(String(32), ForeignKey("tools.id", ondelete="CASCADE"), unique=True)
    policy: Mapped[str] = mapped_column(String(16), default="off")
    """`run_freely`, `ask_first` or `off`."""
    reviewed_hash: Mapped[str] = mapped_column(String(64))
    reviewed_definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    set_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """The member who set it (None: it started `off` at discovery)."""
    set_at: Mapped[datetime] = _when()

    tool: Mapped[Tool] = relationship(back_populates="policy")


class Approval(Base):
    """An ask-first call waiting for a person: the saved arguments, run once when approved (ORG-5, APR-2)."""

    __tablename__ = "approvals"
    __table_args__ = (Index("ix_approvals_org_status", "org_id", "status"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
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
    status: Mapped[str] = mapped_column(String(16), default="pending")
    """`pending`, then `running` (claimed: exactly one decision wins), `done`, `failed` or `declined`."""
    decided_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The `CallResult` of the single run."""
    created_at: Mapped[datetime] = _when()
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    """The teammate's turn parked on it: it goes on once the call is decided (ORG-5)."""
    tool_call_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The model's id for the call in that turn."""


class CallRow(Base):
    """One call's record, secrets redacted (the turn trace and the audit read these)."""

    __tablename__ = "calls"
    __table_args__ = (Index("ix_calls_org_at", "org_id", "started_at"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    member_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    conversation: Mapped[str] = mapped_column(String(64))
    server_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    tool: Mapped[str] = mapped_column(String(256))
    arguments: Mapped[dict[str, Any]] = mapped_column(JSON)
    decision: Mapped[str | None] = mapped_column(String(16), nullable=True)
    why: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(32))
    error_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    duration_ms: Mapped[float] = mapped_column(default=0.0)
    result_bytes: Mapped[int] = mapped_column(Integer, default=0)
    summary: Mapped[str] = mapped_column(Text, default="")
    approval_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    started_at: Mapped[datetime] = _when()
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    """The turn that made the call (its trace, ORG-7), if one did."""


class StoredResult(Base):
    """A long result kept by handle, readable only in the conversation that made it (CALL-4, ORG-7)."""

    __tablename__ = "results"

    handle: Mapped[str] = mapped_column(String(64), primary_key=True)
    org_id: Mapped[str] = _org()
    conversation: Mapped[str] = mapped_column(String(64))
    server: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = _when()


class AuditEvent(Base):
    """A configuration change: who, when, what, the old and new values (ORG-3)."""

    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_org_at", "org_id", "at"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    at: Mapped[datetime] = _when()
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

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    server_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    assistant_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(Text)
    raised_at: Mapped[datetime] = _when()
    cleared_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class ModelSetting(Base):
    """The organization's model: an OpenAI-compatible endpoint, a model name and its key, sealed (ORG-4)."""

    __tablename__ = "model_settings"

    id: Mapped[str] = _id()
    org_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("organizations.id", ondelete="CASCADE"), unique=True, index=True
    )
    base_url: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(200))
    key_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    sealed_key: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    """Nonce and ciphertext of the API key, bound to this row (None: the endpoint needs no key)."""
    updated_at: Mapped[datetime] = _when()


class Teammate(Base):
    """An internal agent: instructions, a model, and the registered servers it may use (ORG-4)."""

    __tablename__ = "teammates"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    name: Mapped[str] = mapped_column(String(100))
    instructions: Mapped[str] = mapped_column(Text, default="")
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    """A model name at the organization's endpoint (None: the organization's)."""
    created_at: Mapped[datetime] = _when()


class TeammateServer(Base):
    """One server a teammate may use."""

    __tablename__ = "teammate_servers"
    __table_args__ = (UniqueConstraint("teammate_id", "server_id"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    teammate_id: Mapped[str] = mapped_column(String(32), ForeignKey("teammates.id", ondelete="CASCADE"), index=True)
    server_id: Mapped[str] = mapped_column(String(32), ForeignKey("servers.id", ondelete="CASCADE"))


class Assistant(Base):
    """A public assistant: instructions and a selection of `run_freely` tools, published by slug (ORG-6)."""

    __tablename__ = "assistants"

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    name: Mapped[str] = mapped_column(String(100))
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    instructions: Mapped[str] = mapped_column(Text, default="")
    tool_ids: Mapped[list[str]] = mapped_column(JSON)
    """The selection, by tool id."""
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False)
    review_reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = _when()


class Publication(Base):
    """What was published: only server ids, tool names and definition hashes (ORG-6)."""

    __tablename__ = "publications"
    __table_args__ = (Index("ix_publications_assistant_at", "assistant_id", "published_at"),)

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    assistant_id: Mapped[str] = mapped_column(String(32), ForeignKey("assistants.id", ondelete="CASCADE"))
    tools: Mapped[list[dict[str, str]]] = mapped_column(JSON)
    """`[{server_id, tool, definition_hash}]`."""
    published_by: Mapped[str] = mapped_column(String(320))
    published_at: Mapped[datetime] = _when()


class Conversation(Base):
    """A member's conversation with a teammate, or a visitor's with an assistant: the messages so far."""

    __tablename__ = "conversations"

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    teammate_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("teammates.id", ondelete="CASCADE"), nullable=True, index=True
    )
    assistant_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("assistants.id", ondelete="CASCADE"), nullable=True, index=True
    )
    member_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """Whose it is (None: a visitor's)."""
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    created_at: Mapped[datetime] = _when()


class TurnRow(Base):
    """One turn: the message, how it ended, its calls, and (while parked) the state it goes on from."""

    __tablename__ = "turns"

    id: Mapped[str] = _id()
    org_id: Mapped[str] = _org()
    conversation_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    message: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32), default="running")
    """`running`, `waiting_for_approval`, `done`, `call_limit`, `time_limit` or `model_error`."""
    reply: Mapped[str] = mapped_column(Text, default="")
    calls: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    state: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The `TurnState` while it waits for an approval."""
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = _when()
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
