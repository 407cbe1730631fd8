"""People's passwords: argon2id hashes, checked in the same time whether or not the account exists (ORG-1)."""

from __future__ import annotations

import functools

import anyio
import anyio.to_thread
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from mcpyard.errors import UsageError

__all__ = [
    "MAX_PASSWORD_LENGTH",
    "MIN_PASSWORD_LENGTH",
    "check_new_password",
    "hash_password",
    "needs_rehash",
    "verify_password",
]

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024
"""Longer passwords are refused before hashing: a megabyte password would cost the service, not the guesser."""

# argon2-cffi's defaults are argon2id with RFC 9106's low-memory profile (t=3, m=64 MiB, p=4).
_HASHER = PasswordHasher()

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


async def hash_password(password: str, *, check: bool = True) -> str:
    """The argon2id hash of a password, computed in a worker thread.

    Args:
        password: the password.
        check: refuse one that may not be set (`check_new_password`); off to re-hash a known password.

    Raises:
        UsageError: the password may not be set.
    """
    if check:
        check_new_password(password)
    return await anyio.to_thread.run_sync(_HASHER.hash, password, limiter=_LIMITER)


@functools.cache
def _dummy_hash() -> str:
    # Made with the same parameters as real hashes, so checking against it costs the same.
    return _HASHER.hash("mcpyard: no such account")


def _verify(stored: str | None, password: str) -> bool:
    if len(password) > MAX_PASSWORD_LENGTH:
        password = password[:MAX_PASSWORD_LENGTH]
        stored = None  # still spend the time of one check, then refuse
    try:
        return _HASHER.verify(stored or _dummy_hash(), password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str) -> bool:
    """Whether `password` matches the hash `stored`; with no hash (an unknown account), a check of the same cost
    against a fixed dummy hash, and False."""
    return await anyio.to_thread.run_sync(_verify, stored, password, limiter=_LIMITER)


def needs_rehash(stored: str) -> bool:
    """Whether a hash was made with other parameters than today's (then it is replaced at the next login)."""
    try:
        return _HASHER.check_needs_rehash(stored)
    except InvalidHashError:
        return True
