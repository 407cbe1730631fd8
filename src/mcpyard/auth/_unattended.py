"""Unattended sign-in: the client-credentials grant, with a client secret or a private-key JWT, and the choice
of provider for a server's `oauth` table (AUTH-2).

No browser and no person: the client authenticates itself at the authorization server named
by `oauth.issuer`, and nowhere else (the SDK builds a token request only from metadata of that
issuer). The secret or key is used only in memory, to authenticate the token request.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import jwt
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
)

from mcpyard.auth._cross_app import CrossAppProvider, HttpClients
from mcpyard.auth._provider import GuardedProvider, SignInProvider, secret_method
from mcpyard.auth._signin import SignIn
from mcpyard.auth._store import ServerTokens
from mcpyard.config import OAuthSettings

__all__ = ["ClientCredentialsProvider", "PrivateKeyJWTProvider", "server_auth"]

ASSERTION_LIFETIME = 300
"""Seconds a client assertion is valid (RFC 7523 asks for a short life)."""


def _signer(client_id: str, key: str, algorithm: str) -> Callable[[str], Awaitable[str]]:
    """The SDK's assertion callback: a fresh JWT for the authorization server's issuer (RFC 7523 §3)."""

    async def assertion(audience: str) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
            "jti": str(uuid.uuid4()),
        }
        return jwt.encode(claims, key, algorithm=algorithm)

    return assertion


class ClientCredentialsProvider(GuardedProvider, ClientCredentialsOAuthProvider):
    """Client credentials with `client_secret_basic` (or `client_secret_post`), tokens in `mcp-auth.json`."""

    def __init__(self, server_url: str, tokens: ServerTokens, sign_in: SignIn, oauth: OAuthSettings) -> None:
        if oauth.client_id is None or oauth.client_secret is None or oauth.issuer is None:
            raise ValueError("client credentials need client_id, client_secret and issuer")
        post = secret_method(oauth.token_endpoint_auth_method, None) == "client_secret_post"
        ClientCredentialsOAuthProvider.__init__(
            self,
            server_url=server_url,
            storage=tokens,
            client_id=oauth.client_id,
            client_secret=oauth.client_secret,
            token_endpoint_auth_method="client_secret_post" if post else "client_secret_basic",
            scope=" ".join(oauth.scopes) or None,
            issuer=oauth.issuer,
        )
        self._tokens = tokens
        self.sign_in = sign_in
        self._oauth = oauth


class PrivateKeyJWTProvider(GuardedProvider, PrivateKeyJWTOAuthProvider):
    """Client credentials with `private_key_jwt`: a JWT signed with the configured key (RFC 7523 §2.2)."""

    def __init__(self, server_url: str, tokens: ServerTokens, sign_in: SignIn, oauth: OAuthSettings) -> None:
        if oauth.client_id is None or oauth.private_key is None or oauth.issuer is None:
            raise ValueError("private-key JWT client credentials need client_id, private_key and issuer")
        PrivateKeyJWTOAuthProvider.__init__(
            self,
            server_url=server_url,
            storage=tokens,
            client_id=oauth.client_id,
            assertion_provider=_signer(oauth.client_id, oauth.private_key, oauth.signing_algorithm or "RS256"),
            scope=" ".join(oauth.scopes) or None,
            issuer=oauth.issuer,
        )
        self._tokens = tokens
        self.sign_in = sign_in
        self._oauth = oauth


def server_auth(
    server_url: str,
    tokens: ServerTokens,
    sign_in: SignIn,
    oauth: OAuthSettings | None,
    *,
    http: HttpClients | None = None,
) -> httpx2.Auth:
    """The provider a server's `oauth` table asks for: browser sign-in, client credentials or cross-app access.

    `http` makes the client that reaches an identity provider (cross-app access); by default one that
    ignores ambient proxies and follows no redirect.
    """
    if oauth is None or oauth.grant == "authorization_code":
        return SignInProvider(server_url, tokens, sign_in, oauth)
    if oauth.grant == "cross_app_access":
        return CrossAppProvider(server_url, tokens, sign_in, oauth, http)
    if oauth.private_key is not None:
        return PrivateKeyJWTProvider(server_url, tokens, sign_in, oauth)
    return ClientCredentialsProvider(server_url, tokens, sign_in, oauth)
