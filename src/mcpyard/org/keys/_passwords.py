"""People's passwords: argon2id hashes, checked in the same time whether or not the account exists (ORG-1).

How hard a hash is to make is `PasswordHashing`: the production parameters by default (RFC 9106's
low-memory profile); the service takes cheaper ones only where it is told to (tests, through
`OrgSettings.password_hashing`). A hash records its own parameters, so one made with other
parameters is still checked, and is re-made at the member's next sign-in (`needs_rehash`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import anyio
import anyio.to_thread
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from mcpyard.errors import UsageError

__all__ = [
    "MAX_PASSWORD_LENGTH",
    "MIN_PASSWORD_LENGTH",
    "PRODUCTION_HASHING",
    "PasswordHashing",
    "check_new_password",
    "hash_password",
    "needs_rehash",
    "verify_password",
]

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024
"""Longer passwords are refused before hashing: a megabyte password would cost the service, not the guesser."""


@dataclass(frozen=True, slots=True)
class PasswordHashing:
    """argon2id's cost parameters for new hashes: the defaults are the production ones (RFC 9106's low-memory
    profile: 3 passes over 64 MiB, 4 lanes)."""

    time_cost: int = 3
    memory_kib: int = 64 * 1024
    parallelism: int = 4

    def hasher(self) -> PasswordHasher:
        return _hasher(self)


PRODUCTION_HASHING = PasswordHashing()


@functools.cache
def _hasher(hashing: PasswordHashing) -> PasswordHasher:
    return PasswordHasher(time_cost=hashing.time_cost, memory_cost=hashing.memory_kib, parallelism=hashing.parallelism)


# Each hash holds 64 MiB for ~0.1 s: a burst of logins must not take every worker thread and
# all the memory at once.
_LIMITER = anyio.CapacityLimiter(2)


def check_new_password(password: str) -> str:
    """The password, if it may be set.

    Raises:
        UsageError: too short or too long (the message never contains it).
    """
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UsageError(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise UsageError(f"a password has at most {MAX_PASSWORD_LENGTH} characters")
    return password


async def hash_password(password: str, *, check: bool = True, hashing: PasswordHashing = PRODUCTION_HASHING) -> str:
    """The argon2id hash of a password, computed in a worker thread.

    Args:
        password: the password.
        check: refuse one that may not be set (`check_new_password`); off to re-hash a known password.
        hashing: the cost parameters (the production ones unless told otherwise).

    Raises:
        UsageError: the password may not be set.
    """
    if check:
        check_new_password(password)
    return await anyio.to_thread.run_sync(hashing.hasher().hash, password, limiter=_LIMITER)


@functools.cache
def _dummy_hash(hashing: PasswordHashing) -> str:
    # Made with the same parameters as real hashes, so checking against it costs the same.
    return hashing.hasher().hash("mcpyard: no such account")


def _verify(stored: str | None, password: str, hashing: PasswordHashing) -> bool:
    if len(password) > MAX_PASSWORD_LENGTH:
        password = password[:MAX_PASSWORD_LENGTH]
        stored = None  # still spend the time of one check, then refuse
    try:
        return hashing.hasher().verify(stored or _dummy_hash(hashing), password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str, *, hashing: PasswordHashing = PRODUCTION_HASHING) -> bool:
    """Whether `password` matches the hash `stored`; with no hash (an unknown account), a check of the same cost
    as a real one (against a fixed dummy hash made with `hashing`), and False."""
    return await anyio.to_thread.run_sync(_verify, stored, password, hashing, limiter=_LIMITER)


def needs_rehash(stored: str, *, hashing: PasswordHashing = PRODUCTION_HASHING) -> bool:
    """Whether a hash was made with other parameters than `hashing`'s (then it is replaced at the next login)."""
    try:
        return hashing.hasher().check_needs_rehash(stored)
    except InvalidHashError:
        return True
