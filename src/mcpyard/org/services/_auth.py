"""Who sends a request: an API token (`Authorization: Bearer`) or a browser session cookie (ORG-1).

Every request is checked against the database, in one indexed query joined to the member: a token
revoked, a session signed out or a member removed through any process is refused at once by every
process (replicas share one database and remember nothing). A session cookie names a random session
id, signed (HMAC-SHA256 with a key derived from the service's key), HttpOnly, SameSite=Lax, Secure
over https; the database keeps only the id's SHA-256, with when the session expires or ended. A
state-changing request a session authenticates must also carry the session's CSRF token in
`X-CSRF-Token` (THREATS).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import Request
from starlette.responses import Response

from mcpyard.errors import Forbidden, NotSignedIn
from mcpyard.org._caller import Caller
from mcpyard.org.keys import same_secret
from mcpyard.org.services._api_tokens import use_token
from mcpyard.org.services._oauth_tokens import ACCESS_PREFIX, caller_for_access_token
from mcpyard.org.store import BrowserSession, Member, reading, revision_of, utcnow

__all__ = ["COOKIE", "SESSION_SECONDS", "Authenticator", "SessionSigner", "end_member_sessions"]

COOKIE = "mcpyard_session"
CSRF_HEADER = "x-csrf-token"
SESSION_SECONDS = 12 * 3600
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _caller(member: Member, revision: int | None = None) -> Caller:
    return Caller(member.id, member.org_id, member.email, member.role, revision)


def _row_id(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


class SessionSigner:
    """Signs and checks session cookies and their CSRF tokens with one secret key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, text: str) -> str:
        digest = hmac.new(self._key, text.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def cookie(self) -> tuple[str, str, str]:
        """A new session: its random id, its cookie value and the CSRF token that goes with it."""
        session_id = secrets.token_urlsafe(32)
        return session_id, f"{session_id}.{self._mac(session_id)}", self.csrf(session_id)

    def csrf(self, body: str) -> str:
        return self._mac(f"csrf:{body}")

    def check(self, cookie: str) -> tuple[str, str] | None:
        """`(session id, CSRF token)` of a cookie this service signed, else None (whether it is live is the
        database's to say)."""
        session_id, sep, mac = cookie.rpartition(".")
        if not sep or not session_id or not same_secret(mac, self._mac(session_id)):
            return None
        return session_id, self.csrf(session_id)


async def end_member_sessions(session: AsyncSession, member_id: str, *, now: datetime | None = None) -> None:
    """End every live browser session of the member (in the caller's transaction)."""
    await session.execute(
        update(BrowserSession)
        .where(BrowserSession.member_id == member_id, BrowserSession.ended_at.is_(None))
        .values(ended_at=now or utcnow())
    )


@dataclass
class Authenticator:
    """Finds the caller of each request, or refuses it with 401."""

    db: async_sessionmaker[AsyncSession]
    signer: SessionSigner

    async def __call__(self, request: Request) -> Caller:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return await self._by_token(token.strip())
        cookie = request.cookies.get(COOKIE)
        if cookie:
            return await self._by_cookie(request, cookie)
        raise NotSignedIn("unauthorized", "send `Authorization: Bearer <API token>` (or sign in)")

    async def bearer(self, request: Request, resource: str) -> Caller:
        """The caller of a request to the MCP endpoint `resource`, which must carry `Authorization: Bearer <token>`:
        an API token, or an OAuth access token issued for that resource (a cookie does not count: the endpoint's
        clients are programs); else 401."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise NotSignedIn("unauthorized", "sign in (OAuth), or send `Authorization: Bearer <API token>`")
        if token.startswith(ACCESS_PREFIX):
            async with self.db.begin() as session:
                return await caller_for_access_token(session, token, resource)
        return await self._by_token(token)

    async def _by_token(self, token: str) -> Caller:
        # One statement that only reads (on SQLite, never behind a writer), with the organization's change count:
        # what the request's call will be checked against (ORG-9). That the token was used is written once a minute.
        found = await use_token(self.db, token)
        if found is None:
            raise NotSignedIn("unauthorized", "that API token is not valid (unknown, revoked or mistyped)")
        return Caller(found.member_id, found.org_id, found.email, found.role, found.revision, found.token_id)

    async def _by_cookie(self, request: Request, cookie: str) -> Caller:
        found = await self.session_of(cookie)
        if found is None:
            raise NotSignedIn("unauthorized", "your session ended; sign in again")
        caller, csrf = found
        if request.method in _UNSAFE and not same_secret(request.headers.get(CSRF_HEADER, ""), csrf):
            raise Forbidden("csrf", "this request did not carry the page's CSRF token; reload the page")
        return caller

    async def session_of(self, cookie: str) -> tuple[Caller, str] | None:
        """The member a session cookie signs in, and the session's CSRF token; None when it is not a live session
        (unsigned, unknown, ended, expired, or its member removed).

        The CSRF check is the caller's: JSON requests carry the token in a header, the pages' forms in a field.
        """
        checked = self.signer.check(cookie)
        if checked is None:
            return None
        session_id, csrf = checked
        query = (
            select(Member)
            .join(BrowserSession, BrowserSession.member_id == Member.id)
            .where(
                BrowserSession.id == _row_id(session_id),
                BrowserSession.ended_at.is_(None),
                BrowserSession.expires_at > utcnow(),
                Member.removed_at.is_(None),
            )
        )
        async with reading(self.db) as session:  # every page and live round asks: never queue behind a writer
            member = await session.scalar(query)
            revision = await revision_of(session, member.org_id) if member is not None else None
        return None if member is None else (_caller(member, revision), csrf)

    async def end_session(self, cookie: str | None) -> None:
        """Sign the session out: every copy of its cookie is refused from now on, by every process."""
        checked = self.signer.check(cookie) if cookie else None
        if checked is None:
            return
        async with self.db.begin() as session:
            await session.execute(
                update(BrowserSession)
                .where(BrowserSession.id == _row_id(checked[0]), BrowserSession.ended_at.is_(None))
                .values(ended_at=utcnow())
            )

    async def start_session(self, request: Request, response: Response, member: Member, *, secure: bool) -> str:
        """Start a browser session on `response` (a new one at every sign-in: the one the request carried, if any,
        ends); returns its CSRF token."""
        await self.end_session(request.cookies.get(COOKIE))
        session_id, value, csrf = self.signer.cookie()
        now = utcnow()
        async with self.db.begin() as session:
            # The member's sessions long expired go: the table holds live ones and recent history only.
            await session.execute(
                delete(BrowserSession).where(
                    BrowserSession.member_id == member.id, BrowserSession.expires_at < now - timedelta(days=1)
                )
            )
            session.add(
                BrowserSession(
                    id=_row_id(session_id),
                    org_id=member.org_id,
                    member_id=member.id,
                    created_at=now,
                    expires_at=now + timedelta(seconds=SESSION_SECONDS),
                )
            )
        response.set_cookie(
            COOKIE, value, max_age=SESSION_SECONDS, httponly=True, samesite="lax", secure=secure, path="/"
        )
        return csrf
