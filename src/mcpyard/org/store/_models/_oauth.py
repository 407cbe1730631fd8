"""OAuth 2.1 for members' own MCP clients: registered clients, sign-ins under way, grants, codes and tokens (ORG-10).

The service is its own authorization server. A client is registered (dynamic registration) or
named by the URL of its metadata document. A member's consent makes a grant (one client, one
member, one resource); codes and tokens belong to a grant and are kept only as their SHA-256.
Revoking a grant ends every token it issued.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, ForeignKey, Index, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, literal_check, org_column, time_column

TokenKind = Literal["access", "refresh"]
ClientKind = Literal["registered", "metadata_document"]

__all__ = ["ClientKind", "OAuthClient", "OAuthCode", "OAuthGrant", "OAuthRequest", "OAuthToken", "TokenKind"]


class OAuthClient(Base):
    """An MCP client that may ask members for access: registered (RFC 7591) or a client ID metadata document."""

    __tablename__ = "oauth_clients"
    __table_args__ = (literal_check("kind", ClientKind),)

    client_id: Mapped[str] = mapped_column(String(2048), primary_key=True)
    """A random id (registered), or the https URL of the client's metadata document."""
    kind: Mapped[ClientKind] = mapped_column(String(24))
    client_metadata: Mapped[dict[str, Any]] = mapped_column("metadata", JSON)
    """What the client said of itself (RFC 7591 fields: name, redirect URIs, grant types…), never its secret."""
    key_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    sealed_secret: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    """A confidential client's secret, sealed with the service's key (None: a public client)."""
    created_at: Mapped[datetime] = time_column()
    fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """When a metadata document was last read (it is read again once it is old)."""


class OAuthRequest(Base):
    """An authorization request waiting for a member's sign-in and consent (minutes at most)."""

    __tablename__ = "oauth_requests"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    """SHA-256 of the random id the consent page's address carries."""
    client_id: Mapped[str] = mapped_column(String(2048))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    """The request as the authorize endpoint checked it: state, scopes, PKCE challenge, redirect URI, resource."""
    created_at: Mapped[datetime] = time_column()
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class OAuthGrant(Base):
    """A member's consent to one client, for one resource: what "Connected apps" lists and revokes."""

    __tablename__ = "oauth_grants"
    __table_args__ = (Index("ix_oauth_grants_member", "org_id", "member_id"),)

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    member_id: Mapped[str] = mapped_column(String(32), ForeignKey("members.id", ondelete="CASCADE"))
    client_id: Mapped[str] = mapped_column(String(2048))
    client_name: Mapped[str] = mapped_column(String(200))
    resource: Mapped[str] = mapped_column(Text)
    """The MCP endpoint its tokens are for (RFC 8707): they reach no other."""
    scopes: Mapped[list[Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = time_column()
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class OAuthCode(Base):
    """An authorization code: single use, minutes long, bound to its PKCE challenge and redirect URI."""

    __tablename__ = "oauth_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    grant_id: Mapped[str] = mapped_column(String(32), ForeignKey("oauth_grants.id", ondelete="CASCADE"), index=True)
    code_challenge: Mapped[str] = mapped_column(String(128))
    redirect_uri: Mapped[str] = mapped_column(Text)
    redirect_uri_provided_explicitly: Mapped[bool] = mapped_column(default=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class OAuthToken(Base):
    """An access token (short-lived) or a refresh token (rotated on use) of a grant; only its SHA-256 is kept."""

    __tablename__ = "oauth_tokens"
    __table_args__ = (literal_check("kind", TokenKind),)

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[TokenKind] = mapped_column(String(16))
    grant_id: Mapped[str] = mapped_column(String(32), ForeignKey("oauth_grants.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = time_column()
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
