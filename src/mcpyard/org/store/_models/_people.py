"""Organizations, their members and the members' API tokens (ORG-1)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, TypeGuard, get_args

from sqlalchemy import BigInteger, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from mcpyard.org.store._models._base import Base, UTCDateTime, id_column, literal_check, org_column, time_column

Role = Literal["owner", "admin", "member"]
ROLES: tuple[Role, ...] = get_args(Role)


def is_role(value: object) -> TypeGuard[Role]:
    """Whether `value` names a role."""
    return value in ROLES


__all__ = ["ApiToken", "BrowserSession", "Member", "Organization"]


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = time_column()
    revision: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    """Counts the changes that decide what a call may do (servers, tools, policies, alerts): every replica reads it
    before a call and brings its host in step when it moved (ORG-9)."""


class Member(Base):
    """A person of one organization: owner, admin or member (ORG-1)."""

    __tablename__ = "members"
    __table_args__ = (UniqueConstraint("org_id", "email"), literal_check("role", Role))

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    email: Mapped[str] = mapped_column(String(320), index=True)
    role: Mapped[Role] = mapped_column(String(16))
    """`owner`, `admin` or `member`."""
    password_hash: Mapped[str] = mapped_column(String(200))
    """argon2id, with its own parameters and salt."""
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = time_column()
    removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """Set when the member was removed: the row stays, so records still show who it was; no sign-in, no token."""


class ApiToken(Base):
    """A program's credential: only its SHA-256 is kept; the token itself is shown once (ORG-1)."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = id_column()
    org_id: Mapped[str] = org_column()
    member_id: Mapped[str] = mapped_column(String(32), ForeignKey("members.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = time_column()
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class BrowserSession(Base):
    """A signed-in browser: the cookie names it, every request checks it here, signing out ends it (ORG-1).

    Only the SHA-256 of the session's random id is kept, like an API token's.
    """

    __tablename__ = "browser_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    """SHA-256 (hex) of the random id the cookie carries."""
    org_id: Mapped[str] = org_column()
    member_id: Mapped[str] = mapped_column(String(32), ForeignKey("members.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = time_column()
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    """Signed out, signed in again (rotated), or the member removed."""
