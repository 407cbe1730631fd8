"""Organizations, members, API tokens and login, on SQLite and PostgreSQL (ORG-1, ORG-9)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from mcpyard.errors import UsageError
from mcpyard.org.services._api_tokens import create_token, revoke_token, use_token
from mcpyard.org.services._people import (
    FREE_FAILURES,
    MAX_LOCKOUT,
    add_member,
    create_organization,
    find_member,
    find_organization,
    lockout_after,
    owners,
    verify_login,
)
from mcpyard.org.store._db import Database
from mcpyard.org.store._models import ApiToken, Member, Organization, utcnow

pytestmark = pytest.mark.anyio

PASSWORD = "owner's long password"


async def _acme(db: Database, name: str = "Acme", email: str = "Owner@Example.com") -> tuple[Organization, Member]:
    async with db.sessions() as session:
        return await create_organization(session, name=name, owner_email=email, owner_password=PASSWORD)


async def test_org1_an_organization_starts_with_its_owner_whose_password_is_hashed(database: Database) -> None:
    organization, owner = await _acme(database)
    assert owner.role == "owner"
    assert owner.email == "owner@example.com"
    assert owner.org_id == organization.id
    async with database.sessions() as session:
        found = await find_organization(session, "Acme")
        assert found is not None
        assert found.id == organization.id
        [stored] = await owners(session, organization.id)
        assert stored.password_hash.startswith("$argon2id$")
        assert PASSWORD not in stored.password_hash
        assert await find_member(session, org_id=organization.id, email="OWNER@example.com") is not None


async def test_org1_an_organization_name_is_taken_once_and_an_email_may_own_several(database: Database) -> None:
    first, _ = await _acme(database)
    with pytest.raises(UsageError, match="exists already"):
        await _acme(database)
    second, _ = await _acme(database, name="Other")
    assert second.id != first.id
    async with database.sessions.begin() as session:
        assert await session.scalar(select(func.count()).select_from(Organization)) == 2


async def test_org1_members_have_a_role_and_an_email_once_per_organization(database: Database) -> None:
    organization, _ = await _acme(database)
    async with database.sessions() as session:
        admin = await add_member(
            session, org_id=organization.id, email="admin@example.com", role="admin", password="admin password"
        )
        assert admin.role == "admin"
        with pytest.raises(UsageError, match="already a member"):
            await add_member(
                session, org_id=organization.id, email="ADMIN@example.com", role="member", password="another one"
            )
        with pytest.raises(UsageError, match="is not a role"):
            await add_member(session, org_id=organization.id, email="x@example.com", role="root", password="p" * 8)
        with pytest.raises(UsageError, match="at least 8") as raised:
            await add_member(session, org_id=organization.id, email="y@example.com", role="member", password="short")
        assert "short" not in str(raised.value)
        with pytest.raises(UsageError, match="not an email address"):
            await add_member(session, org_id=organization.id, email="nobody", role="member", password="p" * 8)


async def test_org1_several_calls_in_one_transaction_are_undone_together(database: Database) -> None:
    async def three_calls_the_last_failing() -> None:
        async with database.sessions.begin() as session:
            organization, owner = await create_organization(
                session, name="Acme", owner_email="o@example.com", owner_password=PASSWORD
            )
            await create_token(session, owner)
            await add_member(session, org_id=organization.id, email="o@example.com", role="member", password="p" * 8)

    with pytest.raises(UsageError):
        await three_calls_the_last_failing()
    async with database.sessions.begin() as session:
        assert await session.scalar(select(func.count()).select_from(Organization)) == 0
        assert await session.scalar(select(func.count()).select_from(ApiToken)) == 0


async def test_org1_an_api_token_is_shown_once_kept_as_a_hash_finds_its_member_and_can_be_revoked(
    database: Database,
) -> None:
    _, owner = await _acme(database)
    async with database.sessions() as session:
        row, token = await create_token(session, owner, label="ci")
    async with database.sessions.begin() as session:
        stored = await session.get(ApiToken, row.id)
        assert stored is not None
        assert token not in (stored.token_hash, stored.label, stored.id)
    found = await use_token(database.sessions, token)
    assert found is not None
    assert (found.member_id, found.org_id) == (owner.id, owner.org_id)
    async with database.sessions.begin() as session:
        used = await session.get(ApiToken, row.id)
        assert used is not None
        assert used.last_used_at is not None
    assert await use_token(database.sessions, token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert await use_token(database.sessions, "Bearer " + token) is None
    async with database.sessions() as session:
        assert await revoke_token(session, row.id)
    assert await use_token(database.sessions, token) is None
    async with database.sessions() as session:
        assert await revoke_token(session, row.id), "revoking twice is not an error"
        assert not await revoke_token(session, "no-such-token")


async def test_org1_a_token_is_revoked_only_within_its_organization(database: Database) -> None:
    _, owner = await _acme(database)
    other, _ = await _acme(database, name="Other")
    async with database.sessions() as session:
        row, token = await create_token(session, owner)
        assert not await revoke_token(session, row.id, org_id=other.id)
    assert await use_token(database.sessions, token) is not None
    async with database.sessions() as session:
        assert await revoke_token(session, row.id, org_id=owner.org_id)


async def test_org1_login_takes_the_right_password_only(database: Database) -> None:
    _, owner = await _acme(database)
    async with database.sessions() as session:
        found = await verify_login(session, email="owner@EXAMPLE.com", password=PASSWORD)
        assert found is not None
        assert found.id == owner.id
        assert await verify_login(session, email="owner@example.com", password=PASSWORD + "!") is None
        assert await verify_login(session, email="nobody@example.com", password=PASSWORD) is None
        assert await verify_login(session, email="not an email", password=PASSWORD) is None


async def test_org1_repeated_wrong_passwords_lock_the_account_for_a_while_even_for_the_right_one(
    database: Database,
) -> None:
    organization, owner = await _acme(database)
    now = utcnow()
    async with database.sessions() as session:
        for _ in range(FREE_FAILURES + 1):
            assert await verify_login(session, email=owner.email, password="wrong password", now=now) is None
        member = await find_member(session, org_id=organization.id, email=owner.email)
        assert member is not None
        assert member.failed_logins == FREE_FAILURES + 1
        assert member.locked_until == now + timedelta(seconds=1)
        assert await verify_login(session, email=owner.email, password=PASSWORD, now=now) is None, "locked"
        later = now + timedelta(seconds=2)
        found = await verify_login(session, email=owner.email, password=PASSWORD, now=later)
        assert found is not None
        assert found.failed_logins == 0
        assert found.locked_until is None


@pytest.mark.parametrize(
    ("failures", "locked"),
    [
        (0, None),
        (FREE_FAILURES, None),
        (FREE_FAILURES + 1, timedelta(seconds=1)),
        (FREE_FAILURES + 2, timedelta(seconds=2)),
        (FREE_FAILURES + 5, timedelta(seconds=16)),
        (FREE_FAILURES + 30, MAX_LOCKOUT),
        (10_000, MAX_LOCKOUT),
    ],
)
def test_org1_the_lockout_doubles_after_a_few_failures_up_to_a_bound(failures: int, locked: timedelta | None) -> None:
    assert lockout_after(failures) == locked


async def test_org1_an_email_in_several_organizations_logs_into_the_one_whose_password_matches(
    database: Database,
) -> None:
    first, _ = await _acme(database, name="First")
    second, _ = await _acme(database, name="Second")
    async with database.sessions() as session:
        other = await add_member(
            session, org_id=second.id, email="both@example.com", role="member", password="second password"
        )
        await add_member(session, org_id=first.id, email="both@example.com", role="member", password="first password")
        found = await verify_login(session, email="both@example.com", password="second password")
        assert found is not None
        assert found.id == other.id
        assert (
            await verify_login(session, email="both@example.com", password="second password", org_id=first.id) is None
        )


async def test_org1_an_unknown_email_costs_about_as_much_as_a_wrong_password(database: Database) -> None:
    _, owner = await _acme(database)

    async def timed(email: str) -> float:
        async with database.sessions() as session:
            began = time.perf_counter()
            assert await verify_login(session, email=email, password="wrong password") is None
            return time.perf_counter() - began

    await timed("warm-up@example.com")
    unknown = sorted([await timed("nobody@example.com") for _ in range(3)])[1]
    wrong = sorted([await timed(owner.email) for _ in range(3)])[1]
    # Without the dummy check an unknown email answers ~100 times faster.
    assert unknown > 0.3 * wrong, (unknown, wrong)
