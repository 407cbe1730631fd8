"""OAuth 2.1 fixture server: an MCP server over streamable HTTP that is also its own authorization server.

Run as `python tests/servers/oauth_server.py --port N [--host 127.0.0.1] [--access-ttl SECONDS]
[--no-pkce-advert] [--no-iss] [--legacy] [--pre-registered PORT] [--client-credentials]
[--jwt-public-key FILE] [--cross-app]` (it also takes `--transport streamable-http`, so `http_runner.serve_http`
can start it). Everything lives on one origin, `http://HOST:N`:

- `/mcp`: the MCP endpoint (streamable HTTP); without a valid bearer token it answers 401 with
  `WWW-Authenticate: Bearer ... resource_metadata="http://HOST:N/.well-known/oauth-protected-resource/mcp"`.
- `/.well-known/oauth-protected-resource/mcp`: RFC 9728 metadata naming resource `http://HOST:N/mcp`
  and authorization server `http://HOST:N` (the issuer).
- `/.well-known/oauth-authorization-server`: RFC 8414 metadata; `/register` (RFC 7591 dynamic
  registration), `/authorize` and `/token` (authorization code with PKCE S256, refresh tokens).
- `GET /test/stats`: JSON counters (see `Stats`), no token needed.
- `POST /test/expire`: expire every live access token now (refresh tokens stay valid), no token needed.

`/authorize` approves at once: it redirects straight to the client's redirect URI with `code`, the
client's `state` and (unless `--no-iss`) the RFC 9207 `iss`, so a test "browser" only has to read the
`Location` header. Access tokens are bound to the `resource` the client asked for (RFC 8707); a request
without one is bound to this server's own resource. Access tokens live `--access-ttl` seconds
(`expires_in`); the server honours them until `expires_at` (issue time + ttl, rounded up, plus one
second of leeway), so a client refreshing on its own clock never meets a 401 first. Refresh tokens do
not expire and are rotated on every use (the old one, and the access token issued with it, die).

`--no-pkce-advert` leaves `code_challenge_methods_supported` out of the authorization server metadata,
so a client that checks for S256 (as MCP requires) can refuse to authorize. The server itself still
requires S256.

`--legacy` is a 2025-03-26 server: no protected resource metadata (404, and no `resource_metadata` in
`WWW-Authenticate`), only the authorization server metadata at the origin's root.

`--pre-registered PORT` knows the confidential client `PRE_CLIENT_ID` / `PRE_CLIENT_SECRET`
(`client_secret_basic`, redirect `http://127.0.0.1:PORT/callback` exactly), registered beforehand.

`--client-credentials` takes the client-credentials grant (RFC 6749 §4.4) from `CC_CLIENT_ID` /
`CC_CLIENT_SECRET` (Basic or in the body); with `--jwt-public-key FILE` also from `JWT_CLIENT_ID`
authenticated by a `private_key_jwt` assertion (RFC 7523 §2.2) signed with the PEM key whose public
half FILE holds, its `aud` the issuer. Such tokens come without a refresh token.

`--cross-app` is also an enterprise identity provider (SEP-990): `POST /idp/token` exchanges the
person's ID token `ID_TOKEN`, for the IdP client `IDP_CLIENT_ID` (RFC 8693), for an identity assertion
grant (ID-JAG, `typ` `oauth-id-jag+jwt`, signed by this server), which `/token` takes from the
confidential client `XAA_CLIENT_ID` / `XAA_CLIENT_SECRET` as an RFC 7523 jwt-bearer grant.
"""

from __future__ import annotations

import argparse
import base64
import math
import re
import secrets
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jwt
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    IdentityAssertionParams,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp_types import ToolAnnotations
from pydantic import AnyUrl
from starlette.applications import Starlette
from starlette.datastructures import FormData, Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SCOPE = "mcp"
"""The one scope this server knows; registration defaults to it and `/mcp` requires it."""

DEFAULT_ACCESS_TTL = 3600
CODE_TTL = 300
EXPIRY_LEEWAY = 1
"""Seconds the server honours an access token past `expires_in`, for the client's clock."""

AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
MCP_PATH = "/mcp"
STATS_PATH = "/test/stats"
EXPIRE_PATH = "/test/expire"

READ_ONLY = ToolAnnotations(read_only_hint=True)

PRE_CLIENT_ID = "pre-registered-mcpyard"
PRE_CLIENT_SECRET = "pre-registered-secret-7f3a91c2"
CC_CLIENT_ID = "unattended-mcpyard"
CC_CLIENT_SECRET = "client-credentials-secret-5d82e0b4"
JWT_CLIENT_ID = "unattended-jwt-mcpyard"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
XAA_CLIENT_ID = "cross-app-mcpyard"
XAA_CLIENT_SECRET = "cross-app-secret-1c9e77d0"
IDP_CLIENT_ID = "mcpyard-at-the-idp"
ID_TOKEN = "fixture-id-token-of-the-person-4b1d"
IDP_PATH = "/idp/token"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
TOKEN_PATH = "/token"
PRM_PREFIX = "/.well-known/oauth-protected-resource"


@dataclass
class Stats:
    """What the authorization server has done since it started (served by `GET /test/stats`)."""

    registrations: int = 0
    """Dynamic client registrations (`POST /register`)."""
    authorizations: int = 0
    """Approved `/authorize` requests: each one is a trip through the "browser"."""
    token_exchanges: int = 0
    """Authorization codes exchanged for tokens (`grant_type=authorization_code`)."""
    refreshes: int = 0
    """Refresh tokens exchanged for new tokens (`grant_type=refresh_token`)."""
    expired_rejections: int = 0
    """Bearer tokens refused because they had expired (the MCP endpoint answered 401)."""
    unknown_rejections: int = 0
    """Bearer tokens refused because the server never issued them or they were rotated away."""
    resources: list[str | None] = field(default_factory=list)
    """The RFC 8707 `resource` of every `/authorize` request, in order (None when absent)."""
    client_ids: list[str] = field(default_factory=list)
    """Registered client ids, in order."""
    token_requests: list[str] = field(default_factory=list)
    """How each `/token` request authenticated its client, in order: `client_secret_basic`,
    `client_secret_post`, `private_key_jwt` or `none`."""
    client_credentials: int = 0
    """Tokens issued for the client-credentials grant."""
    refused_clients: int = 0
    """Client-credentials requests refused because the client did not authenticate."""
    idp_exchanges: int = 0
    """ID tokens exchanged for identity assertion grants at `/idp/token`."""
    identity_assertions: int = 0
    """Identity assertion grants taken at `/token` for access tokens."""


def _same_resource(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


class FixtureOAuthProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """An in-memory authorization server that approves every authorization request."""

    def __init__(self, *, issuer: str, resource: str, access_ttl: int, send_iss: bool = True) -> None:
        self.issuer = issuer
        self.resource = resource
        self.access_ttl = access_ttl
        self.send_iss = send_iss
        self.stats = Stats()
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self._access_of_refresh: dict[str, str] = {}
        self.jag_key: bytes | None = None
        """Signs and checks identity assertion grants; None: the jwt-bearer grant is off."""

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info
        self.stats.registrations += 1
        self.stats.client_ids.append(client_info.client_id)

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.stats.resources.append(params.resource)
        if params.resource is not None and not _same_resource(params.resource, self.resource):
            raise AuthorizeError("invalid_target", f"unknown resource {params.resource!r}; this is {self.resource}")
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + CODE_TTL,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource or self.resource,
            subject="fixture-user",
        )
        self.stats.authorizations += 1
        return construct_redirect_uri(
            str(params.redirect_uri), code=code, state=params.state, iss=self.issuer if self.send_iss else None
        )

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        if self.codes.pop(authorization_code.code, None) is None:
            raise TokenError("invalid_grant", "authorization code already used")
        self.stats.token_exchanges += 1
        return self._issue(
            client.client_id, authorization_code.scopes, authorization_code.resource, authorization_code.subject
        )

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh_tokens.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if self.refresh_tokens.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token already used")
        self._drop_access_of(refresh_token.token)
        self.stats.refreshes += 1
        return self._issue(client.client_id, scopes, refresh_token.resource, refresh_token.subject)

    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access_tokens.get(token)
        if access is None:
            self.stats.unknown_rejections += 1
            return None
        if access.expires_at is not None and time.time() > access.expires_at:
            self.stats.expired_rejections += 1
            return None
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        if isinstance(token, RefreshToken):
            self.refresh_tokens.pop(token.token, None)
            self._drop_access_of(token.token)
            return
        self.access_tokens.pop(token.token, None)
        for refresh, access in list(self._access_of_refresh.items()):
            if access == token.token:
                self.refresh_tokens.pop(refresh, None)
                del self._access_of_refresh[refresh]

    def expire_all(self) -> int:
        """Make every live access token expired now; return how many there were."""
        expired = 0
        now = int(time.time()) - 1
        for key, access in self.access_tokens.items():
            if access.expires_at is None or access.expires_at > now:
                self.access_tokens[key] = access.model_copy(update={"expires_at": now})
                expired += 1
        return expired

    def _issue(
        self,
        client_id: str,
        scopes: list[str],
        resource: str | None,
        subject: str | None,
        *,
        refresh_token: bool = True,
    ) -> OAuthToken:
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        now = time.time()
        self.access_tokens[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=math.ceil(now + self.access_ttl) + EXPIRY_LEEWAY,
            resource=resource,
            subject=subject,
            claims={"iss": self.issuer},
        )
        if refresh_token:
            self.refresh_tokens[refresh] = RefreshToken(
                token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject
            )
            self._access_of_refresh[refresh] = access
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.access_ttl,
            scope=" ".join(scopes),
            refresh_token=refresh if refresh_token else None,
        )

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        if self.jag_key is None:
            raise TokenError("unsupported_grant_type", "no identity assertions here")
        try:
            header = jwt.get_unverified_header(params.assertion)
            claims = jwt.decode(
                params.assertion, self.jag_key, algorithms=["HS256"], audience=[self.issuer, self.issuer + "/"]
            )
        except jwt.InvalidTokenError as exc:
            raise TokenError("invalid_grant", f"not an identity assertion of this server: {exc}") from None
        if header.get("typ") != "oauth-id-jag+jwt" or claims.get("client_id") != client.client_id:
            raise TokenError("invalid_grant", "the identity assertion is not for this client")
        self.stats.identity_assertions += 1
        resource = claims.get("resource")
        return self._issue(
            client.client_id or "",
            params.scopes or [SCOPE],
            str(resource) if resource else self.resource,
            str(claims.get("sub")),
            refresh_token=False,
        )

    def identity_assertion_grant(self, form: FormData) -> Response:
        """The identity provider's RFC 8693 exchange: the person's ID token for an ID-JAG."""
        expected = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": ID_JAG,
            "client_id": IDP_CLIENT_ID,
        }
        wrong = [name for name, value in expected.items() if form.get(name) != value]
        if wrong or not form.get("audience") or not form.get("resource") or self.jag_key is None:
            return JSONResponse({"error": "invalid_request", "error_description": f"check {wrong}"}, status_code=400)
        if form.get("subject_token") != ID_TOKEN:
            return JSONResponse(
                {"error": "invalid_grant", "error_description": "the ID token is not valid"}, status_code=400
            )
        self.stats.idp_exchanges += 1
        now = int(time.time())
        claims = {
            "iss": self.issuer + "/idp",
            "sub": "fixture-user",
            "aud": str(form.get("audience")),
            "resource": str(form.get("resource")),
            "client_id": XAA_CLIENT_ID,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_urlsafe(8),
        }
        grant = jwt.encode(claims, self.jag_key, algorithm="HS256", headers={"typ": "oauth-id-jag+jwt"})
        return JSONResponse({"access_token": grant, "issued_token_type": ID_JAG, "token_type": "N_A"})

    def client_credentials(self, client_id: str, form: FormData) -> OAuthToken:
        """Tokens for a client that authenticated itself (RFC 6749 §4.4), bound to the `resource` it names."""
        resource = form.get("resource")
        scope = form.get("scope")
        self.stats.client_credentials += 1
        return self._issue(
            client_id,
            str(scope).split() if scope else [SCOPE],
            str(resource) if resource else self.resource,
            client_id,
            refresh_token=False,
        )

    def _drop_access_of(self, refresh: str) -> None:
        access = self._access_of_refresh.pop(refresh, None)
        if access is not None:
            self.access_tokens.pop(access, None)


def origin(host: str, port: int) -> str:
    """`http://HOST:PORT`, with an IPv6 literal in brackets: the issuer and the server's origin."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"


REGISTRATION = ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE])


def auth_settings(provider: FixtureOAuthProvider) -> AuthSettings:
    """The SDK's auth settings for `provider`'s issuer and resource.

    Given as strings so the settings keep a path-less issuer without a trailing slash
    (`AnyHttpUrl("http://h:1")` renders `http://h:1/`, which would not match the issuer exactly).
    """
    return AuthSettings.model_validate(
        {
            "issuer_url": provider.issuer,
            "resource_server_url": provider.resource,
            "client_registration_options": REGISTRATION,
            "required_scopes": [SCOPE],
            "validate_token_resource": True,
            "identity_assertion_enabled": provider.jag_key is not None,
        }
    )


def build_server(provider: FixtureOAuthProvider) -> MCPServer:
    """The MCP server, protected by `provider`'s tokens, with `whoami` and the `/test/*` routes."""
    server = MCPServer(
        "oauth",
        instructions="OAuth fixture server.",
        version="1.0",
        log_level="WARNING",
        auth_server_provider=provider,
        auth=auth_settings(provider),
    )

    @server.tool(annotations=READ_ONLY)
    def whoami() -> str:
        """Return the client id the caller's access token was issued to."""
        token = get_access_token()
        return token.client_id if token is not None else "anonymous"

    async def stats(request: Request) -> Response:
        return JSONResponse(asdict(provider.stats))

    async def expire(request: Request) -> Response:
        return JSONResponse({"expired": provider.expire_all()})

    # Called rather than applied: the SDK's decorator factory is unannotated, so mypy calls it untyped.
    server.custom_route(STATS_PATH, methods=["GET"])(stats)
    server.custom_route(EXPIRE_PATH, methods=["POST"])(expire)
    return server


def _auth_method(headers: Headers, form: FormData) -> str:
    if headers.get("authorization", "").startswith("Basic "):
        return "client_secret_basic"
    if form.get("client_assertion_type") == JWT_BEARER:
        return "private_key_jwt"
    return "client_secret_post" if form.get("client_secret") else "none"


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


class Extras:
    """The ASGI layer in front of the SDK's app: the 2025-03-26 shape, the client-credentials grant, and
    a record of how every token request authenticated."""

    def __init__(
        self,
        app: ASGIApp,
        provider: FixtureOAuthProvider,
        *,
        legacy: bool = False,
        secrets: dict[str, str] | None = None,
        keys: dict[str, str] | None = None,
    ) -> None:
        self.app = app
        self.provider = provider
        self.legacy = legacy
        self.secrets = secrets or {}
        """Client-credentials clients by id and their secrets."""
        self.keys = keys or {}
        """`private_key_jwt` clients by id and their PEM public keys."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.legacy and str(scope["path"]).startswith(PRM_PREFIX):
            await JSONResponse({"error": "not_found"}, status_code=404)(scope, receive, send)
            return
        if scope["path"] in (TOKEN_PATH, IDP_PATH) and scope["method"] == "POST":
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            request = Request(scope, _replay(body))
            form = await request.form()
            if scope["path"] == IDP_PATH:
                await self.provider.identity_assertion_grant(form)(scope, receive, send)
                return
            self.provider.stats.token_requests.append(_auth_method(request.headers, form))
            if form.get("grant_type") == "client_credentials" and (self.secrets or self.keys):
                await self._client_credentials(request.headers, form)(scope, receive, send)
                return
            await self.app(scope, _replay(body), send)
            return
        await self.app(scope, receive, self._without_resource_metadata(send) if self.legacy else send)

    def _client_credentials(self, headers: Headers, form: FormData) -> Response:
        client_id = self._authenticated(headers, form)
        if client_id is None:
            self.provider.stats.refused_clients += 1
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        token = self.provider.client_credentials(client_id, form)
        return JSONResponse(token.model_dump(mode="json", exclude_none=True))

    def _authenticated(self, headers: Headers, form: FormData) -> str | None:
        basic = headers.get("authorization", "")
        if basic.startswith("Basic "):
            client_id, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
        else:
            client_id, secret = str(form.get("client_id") or ""), str(form.get("client_secret") or "")
        if client_id in self.secrets:
            return client_id if secrets.compare_digest(secret, self.secrets[client_id]) else None
        assertion = form.get("client_assertion")
        if form.get("client_assertion_type") != JWT_BEARER or not isinstance(assertion, str):
            return None
        try:
            claims = jwt.decode(assertion, options={"verify_signature": False})
            client_id = str(claims.get("iss"))
            key = self.keys[client_id]
            checked = jwt.decode(
                assertion,
                key,
                algorithms=["ES256", "ES384", "RS256", "PS256", "EdDSA"],
                audience=[self.provider.issuer, self.provider.issuer + "/"],
            )
        except (jwt.InvalidTokenError, KeyError):
            return None
        return client_id if checked.get("sub") == client_id else None

    def _without_resource_metadata(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [
                    (
                        name,
                        _RESOURCE_METADATA.sub("", value.decode()).encode() if name == b"www-authenticate" else value,
                    )
                    for name, value in message.get("headers", [])
                ]
            await send(message)

        return sending


_RESOURCE_METADATA = re.compile(r',?\s*resource_metadata="[^"]*"')


def build_app(
    provider: FixtureOAuthProvider, *, pkce_advert: bool = True, extra: dict[str, Any] | None = None
) -> Starlette:
    """The Starlette app: the SDK's, with the authorization server metadata route replaced by ours.

    Ours is the SDK's metadata plus the `none` token endpoint auth method (public clients, which the
    SDK's token endpoint accepts) and `authorization_response_iss_parameter_supported` when `iss` is
    sent, and without `code_challenge_methods_supported` when `pkce_advert` is false; `extra` fields
    replace the metadata's own.
    """
    server = build_server(provider)
    app = server.streamable_http_app(streamable_http_path=MCP_PATH)
    settings = server.settings.auth
    if settings is None:
        raise RuntimeError("the server was built without auth settings")
    metadata = build_metadata(settings.issuer_url, None, REGISTRATION, RevocationOptions())
    # The SDK accepts public clients (`none`) at /token but advertises only the secret methods.
    update: dict[str, Any] = {
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"]
    }
    if not pkce_advert:
        update["code_challenge_methods_supported"] = None
    if provider.send_iss:
        update["authorization_response_iss_parameter_supported"] = True
    metadata = metadata.model_copy(update={**update, **(extra or {})})
    route = Route(
        AS_METADATA_PATH,
        endpoint=cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
        methods=["GET", "OPTIONS"],
    )
    routes: list[BaseRoute] = app.router.routes
    for index, existing in enumerate(routes):
        if isinstance(existing, Route) and existing.path == AS_METADATA_PATH:
            routes[index] = route
            break
    else:
        raise RuntimeError(f"the SDK served no {AS_METADATA_PATH} route to replace")
    return app


def parser() -> argparse.ArgumentParser:
    """The command line `main` reads."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=["streamable-http"], default="streamable-http", help="the only one")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--access-ttl", type=int, default=DEFAULT_ACCESS_TTL, metavar="SECONDS")
    parser.add_argument(
        "--no-pkce-advert", action="store_true", help="leave code_challenge_methods_supported out of the AS metadata"
    )
    parser.add_argument("--no-iss", action="store_true", help="send no RFC 9207 iss in the authorization response")
    parser.add_argument("--legacy", action="store_true", help="no protected resource metadata (2025-03-26)")
    parser.add_argument("--pre-registered", type=int, metavar="PORT", help="know PRE_CLIENT_ID, redirected to PORT")
    parser.add_argument("--client-credentials", action="store_true", help="take the client-credentials grant")
    parser.add_argument("--jwt-public-key", type=Path, metavar="FILE", help="JWT_CLIENT_ID's PEM public key")
    parser.add_argument("--cross-app", action="store_true", help="an identity provider too, and the jwt-bearer grant")
    return parser


def http_app(args: argparse.Namespace) -> ASGIApp:
    """The ASGI app `main` serves for `args` (parsed by `parser`): its issuer is `http://HOST:PORT`."""
    issuer = origin(args.host, args.port)
    provider = FixtureOAuthProvider(
        issuer=issuer, resource=issuer + MCP_PATH, access_ttl=args.access_ttl, send_iss=not args.no_iss
    )
    if args.pre_registered is not None:
        provider.clients[PRE_CLIENT_ID] = OAuthClientInformationFull(
            client_id=PRE_CLIENT_ID,
            client_secret=PRE_CLIENT_SECRET,
            redirect_uris=[AnyUrl(f"http://127.0.0.1:{args.pre_registered}/callback")],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="client_secret_basic",
            scope=SCOPE,
        )
    if args.cross_app:
        provider.jag_key = secrets.token_bytes(32)
        provider.clients[XAA_CLIENT_ID] = OAuthClientInformationFull(
            client_id=XAA_CLIENT_ID,
            client_secret=XAA_CLIENT_SECRET,
            redirect_uris=None,
            grant_types=[JWT_BEARER_GRANT],
            token_endpoint_auth_method="client_secret_basic",
            scope=SCOPE,
        )
    secrets_by_client = {CC_CLIENT_ID: CC_CLIENT_SECRET} if args.client_credentials else {}
    keys = {JWT_CLIENT_ID: args.jwt_public_key.read_text()} if args.jwt_public_key else {}
    extra: dict[str, Any] = {}
    if args.cross_app:
        extra["grant_types_supported"] = ["authorization_code", "refresh_token", JWT_BEARER_GRANT]
    if secrets_by_client or keys:
        extra["grant_types_supported"] = ["authorization_code", "refresh_token", "client_credentials"]
        extra["token_endpoint_auth_methods_supported"] = [
            "client_secret_post",
            "client_secret_basic",
            "none",
            *(["private_key_jwt"] if keys else []),
        ]
    return Extras(
        build_app(provider, pkce_advert=not args.no_pkce_advert, extra=extra),
        provider,
        legacy=args.legacy,
        secrets=secrets_by_client,
        keys=keys,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and serve until interrupted."""
    args = parser().parse_args(argv)
    app = http_app(args)
    # Run as a script: put the repository root on the path to reach the shared helper.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.servers._listen import serve

    serve(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
