"""Passwords are argon2id hashes; an unknown account costs the same check as a wrong password (ORG-1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from argon2 import PasswordHasher

from mcpyard.errors import UsageError
from mcpyard.org import PRODUCTION_HASHING, OrgSettings, PasswordHashing
from mcpyard.org.keys._passwords import check_new_password, hash_password, needs_rehash, verify_password
from tests.org._service import FAST_HASHING

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("password", "allowed"),
    [("", False), ("seven77", False), ("eight888", True), ("x" * 1024, True), ("x" * 1025, False)],
)
def test_org1_a_new_password_has_between_8_and_1024_characters(password: str, allowed: bool) -> None:
    if allowed:
        assert check_new_password(password) == password
        return
    with pytest.raises(UsageError) as raised:
        check_new_password(password)
    assert password not in str(raised.value) or not password


async def test_org1_a_password_is_kept_as_an_argon2id_hash_that_verifies() -> None:
    stored = await hash_password("correct horse battery")
    assert stored.startswith("$argon2id$")
    assert "correct horse battery" not in stored
    assert await verify_password(stored, "correct horse battery")
    assert not await verify_password(stored, "correct horse batterY")
    assert not needs_rehash(stored)


async def test_org1_without_a_hash_the_check_runs_against_a_dummy_and_fails() -> None:
    assert not await verify_password(None, "mcpyard: no such account")
    assert not await verify_password(None, "anything at all")


async def test_org1_an_overlong_password_is_refused_without_hashing_a_megabyte() -> None:
    stored = await hash_password("x" * 1024)
    assert not await verify_password(stored, "x" * 1_000_000)


def test_org1_a_hash_made_with_weaker_parameters_is_replaced_at_the_next_login() -> None:
    assert needs_rehash(PasswordHasher(time_cost=1, memory_cost=8192).hash("eight888"))
    assert needs_rehash("not a hash")


async def test_org1_new_passwords_are_hashed_at_the_production_cost_unless_the_service_is_told_otherwise() -> None:
    """The production parameters are RFC 9106's low-memory profile, and they are every default: the service's
    settings, and a hash made without saying (the tests elsewhere hash at the smallest cost, by `hashing=`)."""
    assert PasswordHashing(time_cost=3, memory_kib=65536, parallelism=4) == PRODUCTION_HASHING
    assert OrgSettings(database_url="sqlite://", data_home=Path("/nonexistent")).password_hashing == PRODUCTION_HASHING
    assert (await hash_password("correct horse battery")).startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert (await hash_password("correct horse battery", hashing=FAST_HASHING)).startswith(
        "$argon2id$v=19$m=64,t=1,p=1$"
    )


async def test_org1_a_hash_made_at_another_cost_still_verifies_and_is_made_again_at_todays() -> None:
    cheap = await hash_password("correct horse battery", hashing=FAST_HASHING)
    assert await verify_password(cheap, "correct horse battery")
    assert not await verify_password(cheap, "correct horse batterY", hashing=FAST_HASHING)
    assert needs_rehash(cheap)
    assert not needs_rehash(cheap, hashing=FAST_HASHING)
    assert not await verify_password(None, "anything at all", hashing=FAST_HASHING)
