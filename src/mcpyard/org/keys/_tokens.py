"""API tokens for programs: 256 random bits, shown once, kept only as a SHA-256 hash (ORG-1)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

__all__ = ["TOKEN_PREFIX", "looks_like_token", "new_token", "token_hash"]

TOKEN_PREFIX = "myd_"
_TOKEN = re.compile(rf"{TOKEN_PREFIX}[A-Za-z0-9_-]{{43}}")


def new_token() -> str:
    """A new token: `myd_` and 32 random bytes, URL-safe (the prefix lets secret scanners spot a leaked one)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What the database keeps: the token's SHA-256, in hex (a random token needs no salt or slow hash)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    """Whether a secret a request gave (a cookie's MAC, a CSRF token) is the one expected, in constant time.

    Compared as UTF-8 bytes: a header or cookie may hold any Latin-1 character, and `hmac.compare_digest`
    refuses strings with non-ASCII characters (TypeError) rather than saying they differ.
    """
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


def looks_like_token(text: str) -> bool:
    """Whether `text` has a token's shape (checked before any database look-up)."""
    return _TOKEN.fullmatch(text) is not None
