"""The SDK's OAuth provider, with what mcpyard needs on top: refresh first after a restart, PKCE S256
required, HTTPS (or loopback) endpoints only (AUTH-2 to AUTH-4)."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

from mcpyard.auth._signin import SignIn, is_loopback
from mcpyard.auth._store import ServerTokens

__all__ = ["SignInProvider", "client_metadata"]


def client_metadata(redirect_uri: str) -> OAuthClientMetadata:
    """How mcpyard registers: `mcpyard on <hostname>`, a public client with a loopback redirect."""
    return OAuthClientMetadata(
        client_name=f"mcpyard on {socket.gethostname()}",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


def _check_endpoint(name: str, url: object) -> None:
    parts = urlsplit(str(url))
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname)):
        return
    raise OAuthFlowError(f"the {name} is not https ({parts.scheme}://{parts.hostname}); mcpyard does not use it")


class SignInProvider(OAuthClientProvider):
    """`OAuthClientProvider` for one server, its tokens in `mcp-auth.json`."""

    def __init__(self, server_url: str, tokens: ServerTokens, sign_in: SignIn) -> None:
        super().__init__(
            server_url=server_url,
            client_metadata=client_metadata(sign_in.redirect_uri),
            storage=tokens,
            redirect_handler=sign_in.redirect_handler,
            callback_handler=sign_in.callback_handler,
        )
        self._tokens = tokens
        self.sign_in = sign_in

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

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        # The SDK logs and swallows a failed flow and hands back the 401; keep the reason for the status page.
        try:
            return await self._checked_grant()
        except Exception as exc:
            self.sign_in.failure = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
            raise

    async def _checked_grant(self) -> tuple[str, str]:
        metadata = self.context.oauth_metadata
        if metadata is not None:
            methods = metadata.code_challenge_methods_supported or []
            if "S256" not in methods:
                raise OAuthFlowError(
                    "the authorization server does not offer PKCE with S256; mcpyard does not sign in without it"
                )
            _check_endpoint("authorization endpoint", metadata.authorization_endpoint)
            _check_endpoint("token endpoint", metadata.token_endpoint)
            if metadata.registration_endpoint is not None:
                _check_endpoint("registration endpoint", metadata.registration_endpoint)
        return await super()._perform_authorization_code_grant()
