"""The SDK's OAuth providers, with what mcpyard needs on top: refresh first after a restart, PKCE S256
required, HTTPS (or loopback) endpoints only, the configured client and scopes (AUTH-2 to AUTH-4)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, OAuthTokenError
from mcp.client.auth.utils import issuers_match, union_scopes
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl

from mcpyard.auth._signin import SignIn, is_loopback
from mcpyard.auth._store import ServerTokens
from mcpyard.config import OAuthSettings, TokenEndpointAuthMethod

__all__ = ["GuardedProvider", "SignInProvider", "client_metadata", "secret_method", "token_refusal"]


def client_metadata(redirect_uri: str) -> OAuthClientMetadata:
    """How mcpyard registers: `mcpyard on <hostname>`, a public client with a loopback redirect."""
    return OAuthClientMetadata(
        client_name=f"mcpyard on {socket.gethostname()}",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


def secret_method(
    configured: TokenEndpointAuthMethod | None, supported: Sequence[str] | None
) -> TokenEndpointAuthMethod:
    """How a client with a secret authenticates at the token endpoint: as configured, else
    `client_secret_basic` (which every authorization server must take, RFC 6749 §2.3.1) unless
    the server offers `client_secret_post` alone."""
    if configured is not None:
        return configured
    if supported and "client_secret_basic" not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def _check_endpoint(name: str, url: object) -> None:
    parts = urlsplit(str(url))
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname)):
        return
    raise OAuthFlowError(f"the {name} is not https ({parts.scheme}://{parts.hostname}); mcpyard does not use it")


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:300]


def token_refusal(status: int, body: bytes) -> str:
    """Why the token endpoint refused, from its RFC 6749 §5.2 answer (`error`, `error_description`)."""
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    error = answer.get("error") if isinstance(answer, dict) else None
    described = answer.get("error_description") if isinstance(answer, dict) else None
    why = f"HTTP {status}"
    if isinstance(error, str):
        why += f" {error[:60]}"
        if isinstance(described, str) and described:
            why += f": {described[:200]}"
    fix = "; check oauth.client_id and its secret or key" if error == "invalid_client" else ""
    return f"the authorization server refused the token request ({why}){fix}"


class GuardedProvider(OAuthClientProvider):
    """What every mcpyard provider adds to the SDK's: refresh first after a restart, https (or loopback)
    endpoints only (AUTH-4), the configured scopes asked for too, and the reason a grant failed kept
    for the status page.

    Subclasses set `_tokens`, `sign_in` and `_oauth` in their constructor.
    """

    _tokens: ServerTokens
    sign_in: SignIn
    _oauth: OAuthSettings

    async def _initialize(self) -> None:
        await super()._initialize()
        # The SDK forgets when a stored token expires, so after a restart it would send an
        # expired token and fall back to a full sign-in; knowing the expiry lets it refresh first.
        # The store's clock says how long is left; the SDK counts it on `time.time`.
        left = await self._tokens.seconds_left()
        tokens = self.context.current_tokens
        if left is not None:
            self.context.token_expiry_time = time.time() + left
        elif tokens is not None and tokens.refresh_token:
            self.context.token_expiry_time = time.time() - 1

    async def _perform_authorization(self) -> httpx2.Request:
        # The SDK logs and re-raises a failed flow, and the transport reports only the 401 before
        # it: keep the reason for the status page.
        try:
            self._check_metadata()
            self._check_client()
            configured = " ".join(self._oauth.scopes) or None
            self.context.client_metadata.scope = union_scopes(self.context.client_metadata.scope, configured)
            return await super()._perform_authorization()
        except Exception as exc:
            self.sign_in.failure = _first_line(exc)
            raise

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        if response.status_code not in (200, 201):
            # The SDK would quote the whole answer; the status page says what the error means.
            self.sign_in.failure = token_refusal(response.status_code, await response.aread())
            raise OAuthTokenError(self.sign_in.failure)
        await super()._handle_token_response(response)

    def _check_metadata(self) -> None:
        metadata = self.context.oauth_metadata
        if metadata is None:
            return
        _check_endpoint("token endpoint", metadata.token_endpoint)
        if metadata.registration_endpoint is not None:
            _check_endpoint("registration endpoint", metadata.registration_endpoint)

    def _check_client(self) -> None:
        """The configured client goes only to its issuer, and with the secret method the server takes."""
        oauth, info, metadata = self._oauth, self.context.client_info, self.context.oauth_metadata
        if oauth.client_id is None:
            return
        found = str(metadata.issuer) if metadata is not None else None
        if oauth.issuer is not None and (found is None or not issuers_match(found, oauth.issuer)):
            where = f"the authorization server {found}" if found else "an authorization server without metadata"
            raise OAuthFlowError(
                f"the server sends mcpyard to {where}, not to oauth.issuer ({oauth.issuer}); "
                "mcpyard sends this client's credentials nowhere else"
            )
        if info is None:
            return
        if info.client_id != oauth.client_id:
            raise OAuthFlowError(
                "the authorization server is not the one oauth.client_id is registered with; mcpyard does not sign in"
            )
        if oauth.client_secret is not None:
            supported = metadata.token_endpoint_auth_methods_supported if metadata is not None else None
            method = secret_method(oauth.token_endpoint_auth_method, supported)
            self.context.client_info = info.model_copy(update={"token_endpoint_auth_method": method})


class SignInProvider(GuardedProvider):
    """Browser sign-in (authorization code + PKCE) for one server, its tokens in `mcp-auth.json`.

    With `oauth.client_id` the client registered beforehand is used, with `oauth.client_metadata_url`
    mcpyard's client ID metadata document where the authorization server supports it; otherwise
    mcpyard registers dynamically (AUTH-2).
    """

    def __init__(
        self, server_url: str, tokens: ServerTokens, sign_in: SignIn, oauth: OAuthSettings | None = None
    ) -> None:
        settings = oauth or OAuthSettings()
        super().__init__(
            server_url=server_url,
            client_metadata=client_metadata(sign_in.redirect_uri),
            storage=tokens,
            redirect_handler=sign_in.redirect_handler,
            callback_handler=sign_in.callback_handler,
            client_metadata_url=settings.client_metadata_url,
        )
        self._tokens = tokens
        self.sign_in = sign_in
        self._oauth = settings

    async def _initialize(self) -> None:
        await super()._initialize()
        oauth = self._oauth
        if oauth.client_id is not None:
            # Pre-registered: never stored (its secret stays in the secret store), bound to `issuer` when given.
            self.context.client_info = OAuthClientInformationFull(
                client_id=oauth.client_id,
                client_secret=oauth.client_secret,
                redirect_uris=[AnyUrl(self.sign_in.redirect_uri)],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method=(
                    secret_method(oauth.token_endpoint_auth_method, None) if oauth.client_secret else "none"
                ),
                issuer=oauth.issuer,
            )

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        metadata = self.context.oauth_metadata
        if metadata is not None:
            methods = metadata.code_challenge_methods_supported or []
            if "S256" not in methods:
                raise OAuthFlowError(
                    "the authorization server does not offer PKCE with S256; mcpyard does not sign in without it"
                )
            _check_endpoint("authorization endpoint", metadata.authorization_endpoint)
        return await super()._perform_authorization_code_grant()
