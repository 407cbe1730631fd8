"""A member's API tokens: made (shown once), listed, revoked, and looked up on every request they come with (ORG-1).

Plain async functions over an `AsyncSession`, as in `_people.py`. A token is kept as its hash only; neither appears
in a message.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.org.keys import looks_like_token, new_token, token_hash
from mcpyard.org.services._views import TokenView
from mcpyard.org.store import ApiToken, Member, Organization, Role, new_id, read_one, transaction, utcnow

__all__ = [
    "TokenUse",
    "create_token",
    "list_tokens",
    "revoke_token",
    "token_use",
    "use_token",
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


def _genuine(stored: str, presented: str, revoked_at: datetime | None) -> bool:
    """The look-up matched on the hash; compare again in constant time, so that no index or collation quirk ever
    lets a near miss through; a revoked token is no token."""
    return hmac.compare_digest(stored, presented) and revoked_at is None


_TOKEN_USE = (
    select(
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
    .join(Member, Member.id == ApiToken.member_id)
    .join(Organization, Organization.id == Member.org_id)
    .where(ApiToken.token_hash == bindparam("presented"), Member.removed_at.is_(None))
)
"""One statement on a token's unique hash, joined to its member (a removed member's tokens fail with it) and their
organization (its change count); built once, as every request asks."""


async def use_token(
    sessions: async_sessionmaker[AsyncSession], token: str, *, now: datetime | None = None
) -> TokenUse | None:
    """Who a presented API token speaks for (`token_use`), the token marked used at most once a minute, by a small
    transaction of its own; None for an unknown, revoked or malformed token, or a removed member's."""
    found = await token_use(sessions, token)
    now = now or utcnow()
    if found is not None and (found.last_used_at is None or now - found.last_used_at >= _TOUCH_EVERY):
        async with sessions.begin() as session:
            # Conditional: two requests at once may both get here; the token is written once.
            await session.execute(
                update(ApiToken)
                .where(
                    ApiToken.id == found.token_id,
                    or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at <= now - _TOUCH_EVERY),
                )
                .values(last_used_at=now)
            )
    return found
