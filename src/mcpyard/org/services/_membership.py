"""Members and API tokens as people change them: add a member, make a token, revoke one (ORG-1).

The JSON API and the console's pages call these, so both check the same roles and write the same
audit entries. A token is shown once, by whoever called `make_token`; only its hash is kept.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.errors import Forbidden, Invalid, NotSignedIn, UsageError
from mcpyard.org._caller import ADMINS, Caller, not_found, require
from mcpyard.org.keys import PRODUCTION_HASHING, PasswordHashing
from mcpyard.org.services._api_tokens import create_token, revoke_token
from mcpyard.org.services._events import audit
from mcpyard.org.services._people import add_member
from mcpyard.org.store import ApiToken, Member, is_role

__all__ = ["invite_member", "make_token", "revoke_member_token"]

Sessions = async_sessionmaker[AsyncSession]


async def invite_member(
    db: Sessions,
    caller: Caller,
    email: object,
    role: object,
    password: object,
    *,
    hashing: PasswordHashing = PRODUCTION_HASHING,
) -> Member:
    """Add a member to the caller's organization (owners and admins; only an owner adds an owner)."""
    require(caller, *ADMINS)
    if not is_role(role):
        raise Invalid("invalid_role", "role must be owner, admin or member")
    if role == "owner" and caller.role != "owner":
        raise Forbidden("forbidden", "only an owner may add another owner")
    if not isinstance(email, str) or not isinstance(password, str):
        raise Invalid("invalid_request", "give `email`, `role` and `password`")
    try:
        async with db.begin() as session:
            member = await add_member(
                session, org_id=caller.org_id, email=email, role=role, password=password, hashing=hashing
            )
            new = {"email": member.email, "role": role}
            audit(session, caller.org_id, caller.email, "member.add", member.id, new=new)
    except UsageError as exc:
        raise Invalid("invalid_member", str(exc)) from None
    return member


async def make_token(db: Sessions, caller: Caller, label: object) -> tuple[ApiToken, str]:
    """A new API token for the caller: its row, and the token itself (shown once, never stored)."""
    if not isinstance(label, str):
        raise Invalid("invalid_request", "`label` must be a string (or left out)")
    async with db.begin() as session:
        member = await session.scalar(select(Member).where(Member.id == caller.member_id))
        if member is None:
            raise NotSignedIn("unauthorized", "your membership ended")
        row, token = await create_token(session, member, label=label[:200])
        audit(session, caller.org_id, caller.email, "token.create", row.id)
    return row, token


async def revoke_member_token(db: Sessions, caller: Caller, token_id: str) -> str:
    """Revoke one of the caller's tokens (owners and admins: any of the organization's); its hash, to forget."""
    async with db.begin() as session:
        row = await session.scalar(select(ApiToken).where(ApiToken.id == token_id, ApiToken.org_id == caller.org_id))
        if row is None or (row.member_id != caller.member_id and not caller.is_admin):
            raise not_found("token")
        await revoke_token(session, token_id, org_id=caller.org_id)
        audit(session, caller.org_id, caller.email, "token.revoke", token_id)
        return row.token_hash
