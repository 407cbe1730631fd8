"""Passwords are argon2id hashes; an unknown account costs the same check as a wrong password (ORG-1)."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher

from mcpyard.errors import UsageError
from mcpyard.org._passwords import check_new_password, hash_password, needs_rehash, verify_password

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
