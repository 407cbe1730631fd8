"""People of an organization: organizations with an owner, members, login (ORG-1; API tokens: `_api_tokens.py`).

Plain async functions over an `AsyncSession`, shared by the `mcpyard org` commands and the web
API. Each runs in `transaction(session)`: a transaction of its own, or the caller's when one is
open. Passwords and tokens never appear in a message.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from mcpyard.errors import UsageError
from mcpyard.org._words import quoted, text_of
from mcpyard.org.keys import (
    PRODUCTION_HASHING,
    PasswordHashing,
    hash_password,
    needs_rehash,
    verify_password,
)
from mcpyard.org.services._views import MemberView
from mcpyard.org.store import ROLES, Member, Organization, Role, is_role, new_id, transaction, utcnow

__all__ = [
    "FREE_FAILURES",
    "MAX_LOCKOUT",
    "ROLES",
    "add_member",
    "create_organization",
    "find_member",
    "find_organization",
    "list_members",
    "lockout_after",
    "normalize_email",
    "owners",
    "verify_login",
]

FREE_FAILURES = 4
"""Wrong passwords an account takes before each further one locks it for a while."""
MAX_LOCKOUT = timedelta(minutes=15)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


def normalize_email(email: str) -> str:
    """The email as stored: trimmed and lower-case.

    Raises:
        UsageError: it is not an email address.
    """
    cleaned = email.strip().lower()
    if not _EMAIL.fullmatch(cleaned) or len(cleaned) > 320:
        raise UsageError(f"{quoted(email.strip()[:80])} is not an email address")
    return cleaned


def _organization_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned or len(cleaned) > 200 or not cleaned.isprintable():
        raise UsageError("an organization's name is 1 to 200 printable characters")
    return cleaned


def _role(role: str) -> Role:
    if not is_role(role):
        raise UsageError(f"{quoted(role[:40])} is not a role; use one of {', '.join(ROLES)}")
    return role


def lockout_after(failures: int) -> timedelta | None:
    """How long an account is locked after `failures` wrong passwords in a row: none for the first few, then
    1 s, 2 s, 4 s… up to `MAX_LOCKOUT`."""
    if failures <= FREE_FAILURES:
        return None
    return min(timedelta(seconds=2 ** min(failures - FREE_FAILURES - 1, 20)), MAX_LOCKOUT)


async def find_organization(session: AsyncSession, name: str) -> Organization | None:
    async with transaction(session):
        found = await session.scalars(select(Organization).where(Organization.name == _organization_name(name)))
        return found.first()


async def find_member(session: AsyncSession, *, org_id: str, email: str) -> Member | None:
    async with transaction(session):
        query = select(Member).where(Member.org_id == org_id, Member.email == normalize_email(email))
        return (await session.scalars(query)).first()


async def owners(session: AsyncSession, org_id: str) -> list[Member]:
    """The organization's owners, oldest first."""
    async with transaction(session):
        query = select(Member).where(Member.org_id == org_id, Member.role == "owner", Member.removed_at.is_(None))
        return list(await session.scalars(query.order_by(Member.created_at, Member.id)))


async def list_members(session: AsyncSession, org_id: str) -> list[MemberView]:
    """The organization's members by email: id, email, role and since when (never a password or its hash); a
    removed member is not listed."""
    async with transaction(session):
        query = select(Member).where(Member.org_id == org_id, Member.removed_at.is_(None))
        rows = list(await session.scalars(query))
    # Sorted here: the engines' collations order text differently, and the pages should not.
    rows.sort(key=lambda member: (member.email, member.id))
    return [
        {"id": member.id, "email": member.email, "role": member.role, "created_at": member.created_at.isoformat()}
        for member in rows
    ]


async def create_organization(
    session: AsyncSession,
    *,
    name: str,
    owner_email: str,
    owner_password: str,
    hashing: PasswordHashing = PRODUCTION_HASHING,
) -> tuple[Organization, Member]:
    """A new organization and its first owner.

    Raises:
        UsageError: the name is taken, or the email or password cannot be used.
    """
    cleaned = _organization_name(name)
    email = normalize_email(owner_email)
    password_hash = await hash_password(owner_password, hashing=hashing)
    async with transaction(session):
        if await find_organization(session, cleaned) is not None:
            raise UsageError(f"an organization named {cleaned!r} exists already")
        organization = Organization(id=new_id(), name=cleaned, created_at=utcnow())
        owner = Member(
            id=new_id(),
            org_id=organization.id,
            email=email,
            role="owner",
            password_hash=password_hash,
            failed_logins=0,
            created_at=utcnow(),
        )
        session.add(organization)
        await _flush(session, f"an organization named {cleaned!r} exists already")
        session.add(owner)
        await session.flush()
        return organization, owner


async def add_member(
    session: AsyncSession,
    *,
    org_id: str,
    email: str,
    role: str,
    password: str,
    hashing: PasswordHashing = PRODUCTION_HASHING,
) -> Member:
    """A new member of the organization `org_id`; a removed member's email comes back as that member (the same id,
    so the old records still point at them), with the new role and password.

    Raises:
        UsageError: the email is already a member there, or the email, role or password cannot be used.
    """
    cleaned, role = normalize_email(email), _role(role)
    password_hash = await hash_password(password, hashing=hashing)
    async with transaction(session):
        existing = await find_member(session, org_id=org_id, email=cleaned)
        if existing is not None and existing.removed_at is None:
            raise UsageError(f"{text_of(cleaned)} is already a member of this organization")
        if existing is not None:
            back = await session.scalar(
                update(Member)
                .where(Member.id == existing.id, Member.removed_at.is_not(None))
                .values(role=role, password_hash=password_hash, failed_logins=0, locked_until=None, removed_at=None)
                .returning(Member)
                .execution_options(populate_existing=True)
            )
            if back is None:
                raise UsageError(f"{text_of(cleaned)} is already a member of this organization")
            return back
        member = Member(
            id=new_id(),
            org_id=org_id,
            email=cleaned,
            role=role,
            password_hash=password_hash,
            failed_logins=0,
            created_at=utcnow(),
        )
        session.add(member)
        await _flush(session, f"{text_of(cleaned)} is already a member of this organization")
        return member


async def _flush(session: AsyncSession, taken: str) -> None:
    # A concurrent writer can take the same name between our check and our insert.
    try:
        async with session.begin_nested():
            await session.flush()
    except IntegrityError:
        raise UsageError(taken) from None


async def verify_login(
    session: AsyncSession,
    *,
    email: str,
    password: str,
    org_id: str | None = None,
    now: datetime | None = None,
    hashing: PasswordHashing = PRODUCTION_HASHING,
) -> Member | None:
    """The member whose email and password these are; None otherwise, after the same work either way.

    An unknown email costs one password check against a dummy hash, like a wrong password; so does
    a removed member's. Each attempt at an account's password is counted against it before the
    password is checked (`_take_attempt`, one conditional update), and a right one gives it back:
    after a few wrong ones in a row the account is locked for a while that doubles each time
    (`lockout_after`), during which even the right password is refused. Guesses sent in parallel,
    to one process or several, are counted one by one: none slips past the lock. When `org_id` is
    None and the email belongs to several organizations, the oldest membership whose password
    matches is the one logged in.
    """
    now = now or utcnow()
    try:
        cleaned = normalize_email(email)
    except UsageError:
        await verify_password(None, password, hashing=hashing)
        return None
    async with transaction(session):
        query = select(Member).where(Member.email == cleaned, Member.removed_at.is_(None))
        if org_id is not None:
            query = query.where(Member.org_id == org_id)
        candidates = list(await session.scalars(query.order_by(Member.created_at, Member.id)))
        # Taken and committed before any password is checked (no write lock is held through a password hash).
        taken = [member for member in candidates if await _take_attempt(session, member, now)]
    if not taken:
        await verify_password(None, password, hashing=hashing)
        return None
    for member in taken:
        if await verify_password(member.password_hash, password):
            rehashed = (
                await hash_password(password, check=False, hashing=hashing)
                if needs_rehash(member.password_hash, hashing=hashing)
                else None
            )
            async with transaction(session):
                values: dict[str, Any] = {"failed_logins": 0, "locked_until": None}
                if rehashed is not None:
                    values["password_hash"] = rehashed
                await session.execute(update(Member).where(Member.id == member.id).values(**values))
            set_committed_value(member, "failed_logins", 0)
            set_committed_value(member, "locked_until", None)
            if rehashed is not None:
                set_committed_value(member, "password_hash", rehashed)
            return member
    return None


_ATTEMPT_TRIES = 20
"""How often taking an attempt is retried when other sign-ins to the same account took one in between."""


async def _take_attempt(session: AsyncSession, member: Member, now: datetime) -> bool:
    """Count one attempt at the account's password, unless it is locked: whether it may be checked.

    One conditional update from the count as read (compare and set): of attempts at once, each
    counts one after the other, and the one that reaches the lock sets it for all that follow.
    """
    failures, locked_until = member.failed_logins, member.locked_until
    for _ in range(_ATTEMPT_TRIES):
        if locked_until is not None and locked_until > now:
            return False
        lock = lockout_after(failures + 1)
        taken = await session.scalar(
            update(Member)
            .where(
                Member.id == member.id,
                Member.failed_logins == failures,
                or_(Member.locked_until.is_(None), Member.locked_until <= now),
            )
            .values(failed_logins=failures + 1, locked_until=None if lock is None else now + lock)
            .returning(Member.id)
            .execution_options(synchronize_session=False)
        )
        if taken is not None:
            set_committed_value(member, "failed_logins", failures + 1)
            return True
        row = (
            await session.execute(select(Member.failed_logins, Member.locked_until).where(Member.id == member.id))
        ).one()
        failures, locked_until = int(row[0]), row[1]
    return False
