"""Grants, codes and tokens of the organization's OAuth sign-in for MCP clients, kept only as hashes (ORG-10, API-7).

A member's consent to a client makes a grant, bound to one resource (the MCP endpoint the client
asked for). An authorization code is used once, within minutes. An access token lives an hour and
reaches only its grant's resource; a refresh token lives thirty days and is replaced at every use
(a refresh token used twice ends its grant: someone copied it). Revoking a grant, removing its
member, or revoking one of its tokens ends what it issued, on every replica at once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import NotSignedIn
from mcpyard.org._caller import Caller, not_found
from mcpyard.org.keys import token_hash
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import GrantView
from mcpyard.org.store import Member, OAuthCode, OAuthGrant, OAuthToken, TokenKind, revision_of, utcnow

__all__ = [
    "ACCESS_PREFIX",
    "ACCESS_SECONDS",
    "CODE_SECONDS",
    "REFRESH_PREFIX",
    "REFRESH_SECONDS",
    "Issued",
    "caller_for_access_token",
    "end_grant",
    "issue_tokens",
    "list_grants",
    "live_token",
    "new_code",
    "revoke_grant",
]

ACCESS_PREFIX = "myo_"
REFRESH_PREFIX = "myr_"
CODE_PREFIX = "myc_"
ACCESS_SECONDS = 3600
"""How long an access token reaches its resource."""
REFRESH_SECONDS = 30 * 24 * 3600
"""How long a refresh token may be used (once)."""
CODE_SECONDS = 300
"""How long an authorization code may be exchanged (once)."""


@dataclass(frozen=True, slots=True)
class Issued:
    """Tokens just issued: shown to the client once, never again."""

    access_token: str
    refresh_token: str
    expires_in: int


def new_code() -> str:
    return CODE_PREFIX + secrets.token_urlsafe(32)


async def issue_tokens(session: AsyncSession, grant_id: str) -> Issued:
    """A new access token and refresh token for the grant (in the caller's transaction)."""
    now = utcnow()
    access, refresh = ACCESS_PREFIX + secrets.token_urlsafe(32), REFRESH_PREFIX + secrets.token_urlsafe(32)
    for value, kind, seconds in ((access, "access", ACCESS_SECONDS), (refresh, "refresh", REFRESH_SECONDS)):
        session.add(
            OAuthToken(
                token_hash=token_hash(value),
                kind=kind,
                grant_id=grant_id,
                created_at=now,
                expires_at=now + timedelta(seconds=seconds),
            )
        )
    return Issued(access, refresh, ACCESS_SECONDS)


async def live_token(
    session: AsyncSession, token: str, kind: TokenKind
) -> tuple[OAuthToken, OAuthGrant, Member] | None:
    """The token, its grant and its member, while all three are live (not expired, revoked or removed)."""
    prefix = ACCESS_PREFIX if kind == "access" else REFRESH_PREFIX
    if not token.startswith(prefix) or len(token) > 100:
        return None
    found = (
        await session.execute(
            select(OAuthToken, OAuthGrant, Member)
            .join(OAuthGrant, OAuthGrant.id == OAuthToken.grant_id)
            .join(Member, Member.id == OAuthGrant.member_id)
            .where(
                OAuthToken.token_hash == token_hash(token),
                OAuthToken.kind == kind,
                OAuthToken.revoked_at.is_(None),
                OAuthToken.expires_at > utcnow(),
                OAuthGrant.revoked_at.is_(None),
                Member.removed_at.is_(None),
            )
        )
    ).first()
    return None if found is None else (found[0], found[1], found[2])


async def caller_for_access_token(session: AsyncSession, token: str, resource: str) -> Caller:
    """The member an OAuth access token acts for, when it was issued for `resource`; else 401."""
    found = await live_token(session, token, "access")
    if found is None:
        raise NotSignedIn("invalid_token", "that access token is not valid (unknown, expired or revoked)")
    _, grant, member = found
    if grant.resource.rstrip("/") != resource.rstrip("/"):
        raise NotSignedIn("invalid_token", "that access token was issued for another resource")
    if grant.last_used_at is None or utcnow() - grant.last_used_at > timedelta(minutes=5):
        grant.last_used_at = utcnow()
    revision = await revision_of(session, member.org_id)
    return Caller(member.id, member.org_id, member.email, member.role, revision, grant.id)


async def end_grant(session: AsyncSession, grant_id: str) -> None:
    """Revoke a grant and every token it issued (in the caller's transaction)."""
    now = utcnow()
    await session.execute(
        update(OAuthGrant).where(OAuthGrant.id == grant_id, OAuthGrant.revoked_at.is_(None)).values(revoked_at=now)
    )
    live = (OAuthToken.grant_id == grant_id, OAuthToken.revoked_at.is_(None))
    await session.execute(update(OAuthToken).where(*live).values(revoked_at=now))
    await session.execute(update(OAuthCode).where(OAuthCode.grant_id == grant_id).values(used_at=now))


async def list_grants(svc: OrgService, caller: Caller) -> list[GrantView]:
    """The clients the member let act for them ("Connected apps"), newest first, revoked ones left out."""
    async with svc.db.begin() as session:
        grants = await session.scalars(
            select(OAuthGrant)
            .where(
                OAuthGrant.org_id == caller.org_id,
                OAuthGrant.member_id == caller.member_id,
                OAuthGrant.revoked_at.is_(None),
            )
            .order_by(OAuthGrant.created_at.desc())
        )
        return [
            {
                "id": grant.id,
                "client_id": grant.client_id,
                "client_name": grant.client_name,
                "resource": grant.resource,
                "scopes": list(grant.scopes),
                "created_at": grant.created_at.isoformat(),
                "last_used_at": grant.last_used_at.isoformat() if grant.last_used_at else None,
            }
            for grant in grants
        ]


async def revoke_grant(svc: OrgService, caller: Caller, grant_id: str) -> None:
    """End one of the member's grants and every token it issued (404 for another member's or organization's)."""
    async with svc.db.begin() as session:
        grant = await session.scalar(
            select(OAuthGrant).where(
                OAuthGrant.id == grant_id,
                OAuthGrant.org_id == caller.org_id,
                OAuthGrant.member_id == caller.member_id,
                OAuthGrant.revoked_at.is_(None),
            )
        )
        if grant is None:
            raise not_found("connected app")
        await end_grant(session, grant.id)
