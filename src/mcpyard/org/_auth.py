"""Who sends a request: an API token (`Authorization: Bearer`) or a signed browser session cookie (ORG-1).

Tokens are looked up by their hash and briefly remembered, so a call does not wait on the
database to learn who asks; a revoked token is forgotten at once in this process. A session
cookie is signed (HMAC-SHA256 with a key derived from the service's key), HttpOnly,
SameSite=Lax, Secure over https, and expires; a state-changing request it authenticates must
also carry its CSRF token in `X-CSRF-Token` (THREATS).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import Request
from starlette.responses import Response

from mcpyard.org._caller import Caller, Role, ServiceError
from mcpyard.org._models import Member
from mcpyard.org._people import member_for_token
from mcpyard.org._tokens import same_secret, token_hash

__all__ = ["COOKIE", "SESSION_SECONDS", "Authenticator", "SessionSigner"]

COOKIE = "mcpyard_session"
CSRF_HEADER = "x-csrf-token"
SESSION_SECONDS = 12 * 3600
TOKEN_MEMORY_SECONDS = 5.0
"""How long a token's member is remembered in this process: bounded, so a revocation elsewhere takes effect soon."""
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _caller(member: Member) -> Caller:
    role: Role = member.role  # type: ignore[assignment]  # stored roles are the three
    return Caller(member.id, member.org_id, member.email, role)


class SessionSigner:
    """Signs and checks session cookies and their CSRF tokens with one secret key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, text: str) -> str:
        digest = hmac.new(self._key, text.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def cookie(self, member_id: str, *, now: float | None = None) -> tuple[str, str]:
        """A new session (its cookie value, and the CSRF token that goes with it): rotated at every login."""
        expires = int((now or time.time()) + SESSION_SECONDS)
        body = f"{member_id}.{expires}.{secrets.token_urlsafe(16)}"
        return f"{body}.{self._mac(body)}", self.csrf(body)

    def csrf(self, body: str) -> str:
        return self._mac(f"csrf:{body}")

    def check(self, cookie: str, *, now: float | None = None) -> tuple[str, str] | None:
        """`(member id, CSRF token)` of a valid, unexpired cookie, else None."""
        body, sep, mac = cookie.rpartition(".")
        if not sep or not same_secret(mac, self._mac(body)):
            return None
        member_id, _, rest = body.partition(".")
        expires, _, _ = rest.partition(".")
        if not expires.isdigit() or int(expires) < (now or time.time()):
            return None
        return member_id, self.csrf(body)


@dataclass
class Authenticator:
    """Finds the caller of each request, or refuses it with 401."""

    db: async_sessionmaker[AsyncSession]
    signer: SessionSigner
    _remembered: dict[str, tuple[Caller, float]] = field(default_factory=dict)

    def forget_token(self, token_or_hash: str) -> None:
        """A revoked token: no request with it is let in again by this process."""
        self._remembered.pop(token_or_hash, None)
        self._remembered.pop(token_hash(token_or_hash), None)

    def forget_member(self, member_id: str) -> None:
        for key, (caller, _) in list(self._remembered.items()):
            if caller.member_id == member_id:
                del self._remembered[key]

    async def __call__(self, request: Request) -> Caller:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return await self._by_token(token.strip())
        cookie = request.cookies.get(COOKIE)
        if cookie:
            return await self._by_cookie(request, cookie)
        raise ServiceError(401, "unauthorized", "send `Authorization: Bearer <API token>` (or sign in)")

    async def _by_token(self, token: str) -> Caller:
        key = token_hash(token)
        remembered = self._remembered.get(key)
        now = time.monotonic()
        if remembered is not None and remembered[1] > now:
            return remembered[0]
        async with self.db() as session:
            member = await member_for_token(session, token)
        if member is None:
            self._remembered.pop(key, None)
            raise ServiceError(401, "unauthorized", "that API token is not valid (unknown, revoked or mistyped)")
        caller = _caller(member)
        if len(self._remembered) > 10_000:
            self._remembered.clear()
        self._remembered[key] = (caller, now + TOKEN_MEMORY_SECONDS)
        return caller

    async def _by_cookie(self, request: Request, cookie: str) -> Caller:
        found = await self.session_of(cookie)
        if found is None:
            raise ServiceError(401, "unauthorized", "your session ended; sign in again")
        caller, csrf = found
        if request.method in _UNSAFE and not same_secret(request.headers.get(CSRF_HEADER, ""), csrf):
            raise ServiceError(403, "csrf", "this request did not carry the page's CSRF token; reload the page")
        return caller

    async def session_of(self, cookie: str) -> tuple[Caller, str] | None:
        """The member a session cookie signs in, and the session's CSRF token; None when it is not a live session.

        The CSRF check is the caller's: JSON requests carry the token in a header, the pages' forms in a field.
        """
        checked = self.signer.check(cookie)
        if checked is None:
            return None
        member_id, csrf = checked
        async with self.db.begin() as session:
            member = await session.scalar(select(Member).where(Member.id == member_id))
        return None if member is None else (_caller(member), csrf)

    def set_cookie(self, response: Response, member_id: str, *, secure: bool) -> str:
        """Start a browser session on `response`; returns its CSRF token."""
        value, csrf = self.signer.cookie(member_id)
        response.set_cookie(
            COOKIE, value, max_age=SESSION_SECONDS, httponly=True, samesite="lax", secure=secure, path="/"
        )
        return csrf
