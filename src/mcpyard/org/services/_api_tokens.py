"""A member's API tokens: made (shown once), listed, revoked, and looked up on every request they come with (ORG-1).

Plain async functions over an `AsyncSession`, as in `_people.py`. A token is kept as its hash only; neither appears
in a message.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.org.keys import looks_like_token, new_token, token_hash
from mcpyard.org.services._views import TokenView
from mcpyard.org.store import ApiToken, Member, Organization, Role, new_id, read_one, transaction, utcnow

__all__ = [
    "TokenUse",
    "create_token",
    "list_tokens",
    "mark_used",
    "member_for_token",
    "read_token",
    "revoke_token",
    "token_holder",
    "token_use",
    "use_due",
]

_TOUCH_EVERY = timedelta(minutes=1)


async def list_tokens(session: AsyncSession, org_id: str, member_id: str) -> list[TokenView]:
    """The member's own API tokens not revoked, newest first: id, label, made and last used (never a token or
    its hash)."""
    async with transaction(session):
        query = select(ApiToken).where(
            ApiToken.org_id == org_id, ApiToken.member_id == member_id, ApiToken.revoked_at.is_(None)
        )
        rows = list(await session.scalars(query.order_by(ApiToken.created_at.desc(), ApiToken.id.desc())))
    return [
        {
            "id": row.id,
            "label": row.label,
            "created_at": row.created_at.isoformat(),
            "last_used_at": row.last_used_at.isoformat() if row.last_used_at is not None else None,
        }
        for row in rows
    ]


async def create_token(session: AsyncSession, member: Member, *, label: str = "") -> tuple[ApiToken, str]:
    """A new API token for `member`: its row, and the token itself, to be shown once and never again."""
    token = new_token()
    row = ApiToken(
        id=new_id(),
        org_id=member.org_id,
        member_id=member.id,
        token_hash=token_hash(token),
        label=label[:200],
        created_at=utcnow(),
    )
    async with transaction(session):
        session.add(row)
        await session.flush()
    return row, token


async def revoke_token(
    session: AsyncSession, token_id: str, *, org_id: str | None = None, member_id: str | None = None
) -> bool:
    """Revoke the token `token_id` (within `org_id`, and `member_id`'s own, when given); False if there is none.

    Revoking a revoked token is not an error: it stays revoked.
    """
    async with transaction(session):
        query = select(ApiToken).where(ApiToken.id == token_id)
        if org_id is not None:
            query = query.where(ApiToken.org_id == org_id)
        if member_id is not None:
            query = query.where(ApiToken.member_id == member_id)
        row = (await session.scalars(query)).first()
        if row is None:
            return False
        if row.revoked_at is None:
            row.revoked_at = utcnow()
        return True


async def member_for_token(session: AsyncSession, token: str, *, now: datetime | None = None) -> Member | None:
    """The member a presented API token belongs to; None for an unknown, revoked or malformed token."""
    found = await token_holder(session, token, now=now)
    return found[0] if found is not None else None


async def token_holder(
    session: AsyncSession, token: str, *, now: datetime | None = None
) -> tuple[Member, int, str] | None:
    """The member a presented API token belongs to, their organization's change count (ORG-9) and the token's id,
    read together (and the token marked used, in the caller's transaction); None for an unknown, revoked or
    malformed token."""
    now = now or utcnow()
    async with transaction(session):
        found = await read_token(session, token)
        if found is None:
            return None
        row, member, revision = found
        if use_due(row.last_used_at, now):
            row.last_used_at = now
        return member, revision, row.id


async def read_token(session: AsyncSession, token: str) -> tuple[ApiToken, Member, int] | None:
    """A presented API token's row, its member and their organization's change count, only read (`mark_used`
    writes when it was last used); None for an unknown, revoked or malformed token."""
    if not looks_like_token(token):
        return None
    presented = token_hash(token)
    found = (await session.execute(_TOKEN_HOLDER, {"presented": presented})).first()
    if found is None:
        return None
    row, member, revision = found
    if not _genuine(row.token_hash, presented, row.revoked_at):
        return None
    return row, member, int(revision)


@dataclass(frozen=True, slots=True)
class TokenUse:
    """Who a presented API token speaks for, read in one statement (`token_use`)."""

    member_id: str
    org_id: str
    email: str
    role: Role
    revision: int
    """The organization's change count, read with it (ORG-9)."""
    token_id: str
    last_used_at: datetime | None


async def token_use(sessions: async_sessionmaker[AsyncSession], token: str) -> TokenUse | None:
    """Who a presented API token speaks for, read by one statement outside any transaction (every request asks;
    `read_one`); None for an unknown, revoked or malformed token, or a removed member's."""
    if not looks_like_token(token):
        return None
    presented = token_hash(token)
    found = await read_one(sessions, _TOKEN_USE, {"presented": presented})
    if found is None:
        return None
    values: tuple[Any, ...] = tuple(found)
    token_id, stored, revoked_at, last_used_at, member_id, org_id, email, role, revision = values
    if not _genuine(stored, presented, revoked_at):
        return None
    return TokenUse(member_id, org_id, email, role, int(revision), token_id, last_used_at)


def _by_hash(*columns: Any) -> Select[Any]:
    """A statement on a token's unique hash, joined to its member (a removed member's tokens fail with it) and
    their organization (its change count)."""
    return (
        select(*columns)
        .join(Member, Member.id == ApiToken.member_id)
        .join(Organization, Organization.id == Member.org_id)
        .where(ApiToken.token_hash == bindparam("presented"), Member.removed_at.is_(None))
    )


def _genuine(stored: str, presented: str, revoked_at: datetime | None) -> bool:
    """The look-up matched on the hash; compare again in constant time, so that no index or collation quirk ever
    lets a near miss through; a revoked token is no token."""
    return hmac.compare_digest(stored, presented) and revoked_at is None


# Built once: every request asks.
_TOKEN_HOLDER = _by_hash(ApiToken, Member, Organization.revision)
_TOKEN_USE = _by_hash(
    ApiToken.id,
    ApiToken.token_hash,
    ApiToken.revoked_at,
    ApiToken.last_used_at,
    Member.id,
    Member.org_id,
    Member.email,
    Member.role,
    Organization.revision,
)


def use_due(last_used_at: datetime | None, now: datetime) -> bool:
    """Whether a token last used at `last_used_at` is to be marked used again (once a minute at most)."""
    return last_used_at is None or now - last_used_at >= _TOUCH_EVERY


async def mark_used(session: AsyncSession, token_id: str, now: datetime) -> None:
    """Write that the token was used `now`, unless another request did within the last minute."""
    await session.execute(
        update(ApiToken)
        .where(
            ApiToken.id == token_id,
            or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at <= now - _TOUCH_EVERY),
        )
        .values(last_used_at=now)
    )
