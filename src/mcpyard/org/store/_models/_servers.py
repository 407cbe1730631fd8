"""Registered servers, their sealed credentials, the tools they list and each tool's policy (ORG-2, ORG-3)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, ForeignKey, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, literal_check, org_column, time_column
from mcpyard.policy import PinPolicy

Listed = Literal["active", "removed"]
"""Whether a server still lists a tool. Whether it changed since review is not stored: the rules derive it."""
ServerState = Literal["connecting", "connected", "failed", "deleted"]
"""Where a registered server stands: `deleted` only once it was deleted (it is never shown then)."""

__all__ = ["Credential", "Policy", "RegisteredServer", "Tool"]


class RegisteredServer(Base):
    """An MCP server an owner or admin registered: a name and a streamable HTTP URL (ORG-2)."""

    __tablename__ = "servers"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    name: Mapped[str] = mapped_column(String(64))
    """The tool prefix (CAT-1)."""
    url: Mapped[str] = mapped_column(Text)
    state: Mapped[ServerState] = mapped_column(String(16), default="connecting")
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    protocol_version: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = time_column()
    refreshed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """Set when deleted: its tools stop at once, and calls to them are refused as `server_deleted` (ORG-8)."""

    tools: Mapped[list[Tool]] = relationship(back_populates="server", cascade="all, delete-orphan")


class Credential(Base):
    """A server's bearer token or client credentials, sealed with AES-GCM under a key kept outside the database
    (ORG-2)."""

    __tablename__ = "credentials"

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
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
    created_at: Mapped[datetime] = time_column()


class Tool(Base):
    """A tool a registered server listed: its definition as sent, its hash (CAT-2) and its state (POL-5)."""

    __tablename__ = "tools"
    __table_args__ = (UniqueConstraint("server_id", "name"), literal_check("state", Listed))

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    server_id: Mapped[str] = mapped_column(String(32), ForeignKey("servers.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(256))
    """The tool's name on its server."""
    definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    definition_hash: Mapped[str] = mapped_column(String(64))
    state: Mapped[Listed] = mapped_column(String(16), default="active")
    """`active` while its server lists it, `removed` once it does not (`changed` is derived from the hashes)."""
    first_seen_at: Mapped[datetime] = time_column()
    updated_at: Mapped[datetime] = time_column()

    server: Mapped[RegisteredServer] = relationship(back_populates="tools")
    policy: Mapped[Policy | None] = relationship(back_populates="tool", cascade="all, delete-orphan", uselist=False)


class Policy(Base):
    """A tool's one policy, bound to the definition hash the person reviewed (POL-5, ORG-3)."""

    __tablename__ = "policies"
    __table_args__ = (literal_check("policy", PinPolicy),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    tool_id: Mapped[str] = mapped_column(String(32), ForeignKey("tools.id", ondelete="CASCADE"), unique=True)
    policy: Mapped[PinPolicy] = mapped_column(String(16), default="off")
    """`run_freely`, `ask_first` or `off`."""
    reviewed_hash: Mapped[str] = mapped_column(String(64))
    reviewed_definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    set_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """The member who set it (None: it started `off` at discovery)."""
    set_at: Mapped[datetime] = time_column()

    tool: Mapped[Tool] = relationship(back_populates="policy")
