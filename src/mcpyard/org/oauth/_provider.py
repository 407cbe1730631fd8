"""The organization service as its own OAuth 2.1 authorization server, the SDK's provider protocol over its tables.

The SDK's handlers do the protocol (authorize, token, register, revoke: parameters, PKCE S256, exact
redirect URIs, client authentication); this provider keeps their state in the database, hashes
only, and sends each authorization to the console's own sign-in and a consent page that names the
client, the organization and what it may do. A client is registered (RFC 7591), or names itself by
the https address of its metadata document, read through the outbound guard. A code is used once; a
refresh token is replaced at every use, and one used twice ends its grant.
"""

from __future__ import annotations

import contextvars
import hashlib
import re
import secrets
from datetime import timedelta
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl
from sqlalchemy import delete, func, select, update

from mcpyard.org._bodies import text_problem
from mcpyard.org.keys import token_hash
from mcpyard.org.oauth._clients import (
    DocumentReads,
    make_room,
    metadata_document_client,
    metadata_problem,
    redirect_problem,
)
from mcpyard.org.services import Issued, OrgService, end_grant, issue_tokens, live_token
from mcpyard.org.store import OAuthClient, OAuthCode, OAuthGrant, OAuthRequest, utcnow
from mcpyard.org.store import OAuthToken as TokenRow

__all__ = ["BASE_URL", "REQUEST_SECONDS", "SCOPE", "OrgAuthorizationServer", "consent_request_id", "mcp_resources"]

SCOPE = "mcp"
"""The one scope: use the organization's tools as the member, through its MCP endpoint."""
MAX_PENDING_REQUESTS = 10_000
"""Authorization requests waiting for a member at once (anyone may start one); past it, the oldest go."""
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")
"""An S256 code challenge: the base64url SHA-256 of the verifier, unpadded."""
MAX_CLIENT_ID_CHARS = 2048
"""The longest client id: a registered one is a UUID, a document's address at most this (the column's size)."""
MAX_STATE_CHARS = 2000
"""The longest `state` a client may send (it is kept until the member answers, and sent back)."""
REQUEST_SECONDS = 600
"""How long an authorization request waits for the member's sign-in and consent."""
BASE_URL: contextvars.ContextVar[str] = contextvars.ContextVar("mcpyard_oauth_base_url")
"""The service's origin as the request in hand reached it (set by the OAuth routes)."""


def consent_request_id(opaque: str) -> str:
    """What the database keeps of a consent page's request id: its SHA-256."""
    return hashlib.sha256(opaque.encode("utf-8", "surrogatepass")).hexdigest()


def mcp_resources(base: str, resource: str) -> bool:
    """Whether `resource` is one of this service's MCP endpoints (`/mcp`, `/mcp/teammates/<id>`)."""
    root = f"{base.rstrip('/')}/mcp"
    resource = resource.rstrip("/")
    teammate = resource.removeprefix(f"{root}/teammates/")
    return resource == root or (teammate != resource and _ID.fullmatch(teammate) is not None)


def _token(value: str, row: TokenRow, grant: OAuthGrant) -> dict[str, Any]:
    return {
        "token": value,
        "client_id": grant.client_id,
        "scopes": list(grant.scopes),
        "expires_at": int(row.expires_at.timestamp()),
        "resource": grant.resource,
        "subject": grant.member_id,
    }


def _answer(issued: Issued, grant: OAuthGrant) -> OAuthToken:
    return OAuthToken(
        access_token=issued.access_token,
        expires_in=issued.expires_in,
        scope=" ".join(grant.scopes),
        refresh_token=issued.refresh_token,
    )


class OrgAuthorizationServer(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """The SDK's provider protocol over the organization service's database (one per app).

    Identity assertion grants (enterprise ID-JAG) keep the protocol's answer: unsupported.
    """

    def __init__(self, service: Any) -> None:
        self._service = service
        """`() -> OrgService`: the running service, read at each request."""
        self._reads = DocumentReads()

    @property
    def svc(self) -> OrgService:
        found: OrgService = self._service()
        return found

    # ----------------------------------------------------------------- clients

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if len(client_id) > MAX_CLIENT_ID_CHARS or text_problem(client_id) is not None:
            return None  # no client has such an id (and PostgreSQL could not even look for it)
        if client_id.startswith(("https://", "http://")):
            return await metadata_document_client(self.svc, self._reads, client_id)
        async with self.svc.db.begin() as session:
            row = await session.get(OAuthClient, client_id)
        if row is None or row.kind != "registered":
            return None
        secret = None
        if row.sealed_secret is not None and row.key_id is not None:
            secret = self.svc.sealer.unseal(
                row.key_id, row.sealed_secret, context=_secret_context(client_id), what="a client's secret"
            )
        return OAuthClientInformationFull.model_validate({**row.client_metadata, "client_secret": secret})

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        client_id = client_info.client_id
        if client_id is None or not client_info.redirect_uris:
            raise RegistrationError("invalid_redirect_uri", "a client needs redirect_uris")
        shown = client_info.model_dump(mode="json", exclude_none=True, exclude={"client_secret"})
        if (problem := metadata_problem(shown)) is not None:
            raise RegistrationError("invalid_client_metadata", problem)
        for uri in client_info.redirect_uris:
            problem = redirect_problem(str(uri))
            if problem is not None:
                raise RegistrationError("invalid_redirect_uri", problem)
        key_id, sealed = None, None
        if client_info.client_secret:
            key_id, sealed = self.svc.sealer.seal(client_info.client_secret, context=_secret_context(client_id))
        async with self.svc.db.begin() as session:
            await make_room(session)
            session.add(
                OAuthClient(
                    client_id=client_id, kind="registered", client_metadata=shown, key_id=key_id, sealed_secret=sealed
                )
            )

    # ----------------------------------------------------------------- authorization

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        base = BASE_URL.get()
        resource = params.resource or f"{base}/mcp"
        if not mcp_resources(base, resource):
            raise AuthorizeError("invalid_target", "the resource is not an MCP endpoint of this service")
        if not _CHALLENGE.fullmatch(params.code_challenge):
            raise AuthorizeError("invalid_request", "code_challenge must be an S256 challenge (43 characters)")
        if params.state is not None and (len(params.state) > MAX_STATE_CHARS or text_problem(params.state)):
            raise AuthorizeError("invalid_request", f"state must be at most {MAX_STATE_CHARS} characters, with no NUL")
        scopes = params.scopes or [SCOPE]
        if any(scope != SCOPE for scope in scopes):
            raise AuthorizeError("invalid_scope", f"the only scope is {SCOPE!r}")
        opaque = secrets.token_urlsafe(32)
        now = utcnow()
        async with self.svc.db.begin() as session:
            await session.execute(delete(OAuthRequest).where(OAuthRequest.expires_at < now))
            pending = await session.scalar(select(func.count()).select_from(OAuthRequest)) or 0
            if pending >= MAX_PENDING_REQUESTS:
                oldest = select(OAuthRequest.id).order_by(OAuthRequest.created_at)
                surplus = list(await session.scalars(oldest.limit(pending - MAX_PENDING_REQUESTS + 1)))
                await session.execute(delete(OAuthRequest).where(OAuthRequest.id.in_(surplus)))
            session.add(
                OAuthRequest(
                    id=consent_request_id(opaque),
                    client_id=str(client.client_id),
                    params={
                        "state": params.state,
                        "scopes": scopes,
                        "code_challenge": params.code_challenge,
                        "redirect_uri": str(params.redirect_uri),
                        "redirect_uri_provided_explicitly": params.redirect_uri_provided_explicitly,
                        "resource": resource,
                    },
                    created_at=now,
                    expires_at=now + timedelta(seconds=REQUEST_SECONDS),
                )
            )
        return f"{base}/oauth/consent?request={opaque}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        async with self.svc.db.begin() as session:
            found = (
                await session.execute(
                    select(OAuthCode, OAuthGrant)
                    .join(OAuthGrant, OAuthGrant.id == OAuthCode.grant_id)
                    .where(
                        OAuthCode.code_hash == token_hash(authorization_code),
                        OAuthCode.used_at.is_(None),
                        OAuthGrant.client_id == client.client_id,
                        OAuthGrant.revoked_at.is_(None),
                    )
                )
            ).first()
            if found is None:
                # A code used already, presented again: someone holds a copy, so what it gave ends (RFC 9700 4.2.4).
                used = await session.scalar(
                    select(OAuthCode.grant_id).where(
                        OAuthCode.code_hash == token_hash(authorization_code), OAuthCode.used_at.is_not(None)
                    )
                )
                if used is not None:
                    await end_grant(session, used)
                return None
        code, grant = found
        return AuthorizationCode(
            code=authorization_code,
            scopes=list(grant.scopes),
            expires_at=code.expires_at.timestamp(),
            client_id=grant.client_id,
            code_challenge=code.code_challenge,
            redirect_uri=AnyUrl(code.redirect_uri),
            redirect_uri_provided_explicitly=code.redirect_uri_provided_explicitly,
            resource=grant.resource,
            subject=grant.member_id,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        async with self.svc.db.begin() as session:
            # Used once: the one request whose update takes the code gets the tokens.
            taken = await session.scalar(
                update(OAuthCode)
                .where(OAuthCode.code_hash == token_hash(authorization_code.code), OAuthCode.used_at.is_(None))
                .values(used_at=utcnow())
                .returning(OAuthCode.grant_id)
            )
            if taken is None:
                raise TokenError("invalid_grant", "that authorization code was used already")
            grant = await session.get(OAuthGrant, taken)
            if grant is None or grant.revoked_at is not None or grant.client_id != client.client_id:
                raise TokenError("invalid_grant", "that authorization code is not this client's")
            issued = await issue_tokens(session, grant.id)
        return _answer(issued, grant)

    # ----------------------------------------------------------------- tokens

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        async with self.svc.db.begin() as session:
            found = await live_token(session, refresh_token, "refresh")
            if found is None:
                await self._replayed(session, refresh_token)
                return None
        row, grant, _ = found
        if grant.client_id != client.client_id:
            return None
        return RefreshToken(**_token(refresh_token, row, grant))

    async def _replayed(self, session: Any, refresh_token: str) -> None:
        """A refresh token already replaced, used again: someone holds a copy, so its grant ends (RFC 9700)."""
        row = await session.get(TokenRow, token_hash(refresh_token))
        if row is not None and row.kind == "refresh" and row.revoked_at is not None:
            await end_grant(session, row.grant_id)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        async with self.svc.db.begin() as session:
            replaced = await session.scalar(
                update(TokenRow)
                .where(TokenRow.token_hash == token_hash(refresh_token.token), TokenRow.revoked_at.is_(None))
                .values(revoked_at=utcnow())
                .returning(TokenRow.grant_id)
            )
            if replaced is None:
                raise TokenError("invalid_grant", "that refresh token was used already")
            grant = await session.get(OAuthGrant, replaced)
            if grant is None or grant.revoked_at is not None or grant.client_id != client.client_id:
                raise TokenError("invalid_grant", "that refresh token is not this client's")
            if scopes and any(scope not in grant.scopes for scope in scopes):
                raise TokenError("invalid_scope", "a refreshed token takes no scope its grant did not")
            issued = await issue_tokens(session, grant.id)
        return _answer(issued, grant)

    async def load_access_token(self, token: str) -> AccessToken | None:
        async with self.svc.db.begin() as session:
            found = await live_token(session, token, "access")
        if found is None:
            return None
        row, grant, _ = found
        return AccessToken(**_token(token, row, grant))

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        async with self.svc.db.begin() as session:
            row = await session.get(TokenRow, token_hash(token.token))
            if row is None:
                return
            if row.kind == "refresh":
                await end_grant(session, row.grant_id)  # a refresh token revoked ends what it could renew
            elif row.revoked_at is None:
                row.revoked_at = utcnow()


def _secret_context(client_id: str) -> bytes:
    """What a client's sealed secret is bound to: its own id (moved to another row, it does not open)."""
    return f"mcpyard oauth client secret|{client_id}".encode()
