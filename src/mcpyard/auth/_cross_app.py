"""Cross-app access (enterprise-managed authorization, SEP-990): the person's ID token from the enterprise
identity provider becomes an identity assertion grant there (RFC 8693 token exchange), which the MCP
authorization server takes for an access token (RFC 7523 jwt-bearer) (AUTH-2).

The SDK does the second leg (`IdentityAssertionOAuthProvider`: metadata from the configured issuer
only, the grant and the client secret sent to that issuer's token endpoint only) and leaves the first
to the deployment: it is here. mcpyard does not sign in to the identity provider itself; the ID token
is a saved secret.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, Callable

import httpx2
from mcp.client.auth import OAuthTokenError
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

from mcpyard.auth._provider import secret_method, token_refusal
from mcpyard.auth._signin import SignIn
from mcpyard.auth._store import ServerTokens
from mcpyard.config import OAuthSettings

__all__ = ["ID_JAG", "CrossAppProvider", "HttpClients"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
MAX_ANSWER_BYTES = 65_536

HttpClients = Callable[[], httpx2.AsyncClient]
"""Makes the HTTP client that reaches the identity provider (the outbound guard's, where the host has one)."""


def _plain_client() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(timeout=httpx2.Timeout(30.0), trust_env=False, follow_redirects=False)


class CrossAppProvider(IdentityAssertionOAuthProvider):
    """The SDK's identity-assertion provider, with the exchange at the identity provider, tokens kept in
    `mcp-auth.json` (their expiry counted from when they were stored) and the reason a step failed kept."""

    def __init__(
        self,
        server_url: str,
        tokens: ServerTokens,
        sign_in: SignIn,
        oauth: OAuthSettings,
        http: HttpClients | None = None,
    ) -> None:
        if (
            oauth.client_id is None
            or oauth.client_secret is None
            or oauth.issuer is None
            or oauth.idp_token_endpoint is None
            or oauth.idp_client_id is None
            or oauth.id_token is None
        ):
            raise ValueError("cross-app access needs client_id, client_secret, issuer and the identity provider's")
        post = secret_method(oauth.token_endpoint_auth_method, None) == "client_secret_post"
        super().__init__(
            server_url=server_url,
            storage=tokens,
            client_id=oauth.client_id,
            client_secret=oauth.client_secret,
            issuer=oauth.issuer,
            assertion_provider=self._exchange,
            scope=" ".join(oauth.scopes) or None,
            token_endpoint_auth_method="client_secret_post" if post else "client_secret_basic",
        )
        self._kept = tokens
        self.sign_in = sign_in
        self._oauth = oauth
        self._http = http or _plain_client

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if not self._initialized:
            # The SDK would count a stored token's life from now; the store knows when it was issued.
            self._tokens = await self._kept.get_tokens()
            left = await self._kept.seconds_left()
            self._expiry = time.time() + left if left is not None else None
            self._initialized = True
        self.sign_in.failure = None
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            self.sign_in.failure = self.sign_in.failure or (str(exc).splitlines() or [type(exc).__name__])[0][:300]
            raise
        finally:
            await flow.aclose()

    async def _exchange(self, audience: str, resource: str) -> str:
        """Leg 1: the ID token for an identity assertion grant naming `audience` and `resource` (RFC 8693)."""
        oauth = self._oauth
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "subject_token": oauth.id_token or "",
            "subject_token_type": ID_TOKEN,
            "audience": audience,
            "resource": resource,
            "client_id": oauth.idp_client_id or "",
        }
        async with self._http() as client:
            answer = await client.post(oauth.idp_token_endpoint or "", data=form)
            body = await answer.aread()
        if answer.status_code != 200:
            why = token_refusal(answer.status_code, body[:MAX_ANSWER_BYTES])
            self.sign_in.failure = why.replace("the authorization server", "the identity provider", 1)
            raise OAuthTokenError(self.sign_in.failure)
        grant = _grant_of(body) if len(body) <= MAX_ANSWER_BYTES else None
        if grant is None:
            self.sign_in.failure = "the identity provider's answer to the token exchange holds no identity assertion"
            raise OAuthTokenError(self.sign_in.failure)
        return grant


def _grant_of(body: bytes) -> str | None:
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    if not isinstance(answer, dict):
        return None
    grant, kind = answer.get("access_token"), answer.get("issued_token_type")
    return grant if isinstance(grant, str) and grant and kind in (None, ID_JAG) else None
