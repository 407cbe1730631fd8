"""What the `mcpyard org` administration commands do, apart from reading options and printing (API-5)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import UsageError
from mcpyard.org.keys import EnvKeySource, FileKeySource
from mcpyard.org.services._api_tokens import create_token, revoke_token
from mcpyard.org.services._people import create_organization, find_member, find_organization, normalize_email, owners
from mcpyard.org.store import Database, Member, Organization, check_schema, upgrade

__all__ = [
    "DEFAULT_ORG",
    "DEFAULT_OWNER",
    "Initialized",
    "IssuedToken",
    "ensure_key",
    "init_organization",
    "issue_token",
    "withdraw_token",
]

DEFAULT_ORG = "default"
"""The organization `mcpyard org init` sets up without `--org`."""
DEFAULT_OWNER = "owner@localhost"
"""Its owner's email without `--owner`."""


@dataclass(frozen=True, slots=True)
class Initialized:
    """What `mcpyard org init` did."""

    org_id: str
    org_name: str
    owner_email: str
    api_token: str
    """New, shown once."""
    token_id: str
    created: bool
    """False when the organization was there already (then nothing else changed)."""


@dataclass(frozen=True, slots=True)
class IssuedToken:
    token_id: str
    api_token: str
    org_id: str
    org_name: str
    email: str


def ensure_key(keys: EnvKeySource | FileKeySource) -> str:
    """Make sure a sealing key exists: check `MCPYARD_ORG_KEY`, or make the key file if it is missing; where it is.

    Raises:
        ConfigError: the key in the environment is unusable, or the key file unsafe or unwritable.
    """
    if isinstance(keys, FileKeySource) and not keys.exists():
        keys.create()
        return f"made {keys.where}"
    keys.load()
    return f"using {keys.where}"


async def init_organization(
    db: Database, *, name: str | None, owner_email: str | None, password: Callable[[], str]
) -> Initialized:
    """Migrate the database, then set up organization `name` with its owner, or find it; a new token for the owner.

    `password` is asked only when the organization is new. It runs with no transaction open,
    so a person typing holds no lock.

    Raises:
        UsageError: `owner_email` is not an owner of the existing organization, or a value is unusable.
        ConfigError: the database cannot be migrated.
    """
    await upgrade(db)
    org_name = name if name is not None else DEFAULT_ORG
    async with db.sessions.begin() as session:
        existing = await find_organization(session, org_name)
        if existing is not None:
            owner = await _owner_of(session, existing, owner_email)
            row, token = await create_token(session, owner, label="mcpyard org init")
            return Initialized(existing.id, existing.name, owner.email, token, row.id, created=False)
    email = normalize_email(owner_email if owner_email is not None else DEFAULT_OWNER)
    secret = password()
    async with db.sessions.begin() as session:
        organization, owner = await create_organization(
            session, name=org_name, owner_email=email, owner_password=secret
        )
        row, token = await create_token(session, owner, label="mcpyard org init")
    return Initialized(organization.id, organization.name, owner.email, token, row.id, created=True)


async def _owner_of(session: AsyncSession, organization: Organization, email: str | None) -> Member:
    if email is None:
        found = await owners(session, organization.id)
        if not found:
            raise UsageError(f"the organization {organization.name!r} has no owner left; add one through the API")
        return found[0]
    member = await find_member(session, org_id=organization.id, email=email)
    if member is None or member.removed_at is not None or member.role != "owner":
        raise UsageError(
            f"{normalize_email(email)} is not an owner of the organization {organization.name!r}: "
            "run without --owner for its owner's token, or give another --org to set up a new organization"
        )
    return member


async def issue_token(db: Database, *, org: str | None, email: str | None) -> IssuedToken:
    """A new API token for a member (by default the organization's first owner).

    Without `org`, the one organization there is; with several, `org` is required.

    Raises:
        UsageError: no such organization or member.
        ConfigError: the database is not set up or not migrated.
    """
    await check_schema(db)
    async with db.sessions.begin() as session:
        organization = await _organization(session, org)
        if email is None:
            member = await _owner_of(session, organization, None)
        else:
            found = await find_member(session, org_id=organization.id, email=email)
            if found is None or found.removed_at is not None:  # a removed member's token would not work
                raise UsageError(f"{normalize_email(email)} is not a member of the organization {organization.name!r}")
            member = found
        row, token = await create_token(session, member, label="mcpyard org token create")
    return IssuedToken(row.id, token, organization.id, organization.name, member.email)


async def _organization(session: AsyncSession, name: str | None) -> Organization:
    if name is not None:
        found = await find_organization(session, name)
        if found is None:
            raise UsageError(f"there is no organization named {' '.join(name.split())!r} (see `mcpyard org init`)")
        return found
    some = list(await session.scalars(select(Organization).limit(2)))
    if not some:
        raise UsageError("there is no organization yet: run `mcpyard org init`")
    if len(some) > 1:
        raise UsageError("there are several organizations: say which with --org NAME")
    return some[0]


async def withdraw_token(db: Database, token_id: str) -> None:
    """Revoke an API token by its id, in whichever organization it is.

    Raises:
        UsageError: there is no token with that id.
        ConfigError: the database is not set up or not migrated.
    """
    await check_schema(db)
    async with db.sessions.begin() as session:
        if not await revoke_token(session, token_id):
            raise UsageError(f"there is no API token with the id {token_id[:64]!r}")
