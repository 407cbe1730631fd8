"""The OAuth endpoints and metadata of the organization's MCP endpoint (API-7, RFC 9728, RFC 8414).

- `/.well-known/oauth-protected-resource/mcp` (and `…/mcp/teammates/{id}`): the resource, its
  authorization server (the service itself), its scope, bearer tokens in the header only;
- `/.well-known/oauth-authorization-server`: the server's metadata, PKCE S256 only, client ID
  metadata documents and dynamic registration supported;
- `/oauth/authorize`, `/oauth/token`, `/oauth/register`, `/oauth/revoke`: the SDK's handlers over
  `OrgAuthorizationServer`.

Addresses are the service's as the request reached it (the MCP endpoint itself answers only its
public address, so a token is bound to that one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.settings import ClientRegistrationOptions
from starlette.datastructures import MutableHeaders
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, request_response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpyard.errors import ServiceError
from mcpyard.org._bodies import origin_of
from mcpyard.org.api import error_response, opened
from mcpyard.org.mcp import MCP_PATHS
from mcpyard.org.oauth._provider import BASE_URL, SCOPE, OrgAuthorizationServer

__all__ = ["OAUTH_ROUTES", "oauth_routes"]

OAUTH_ROUTES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("/.well-known/oauth-authorization-server", ("GET", "OPTIONS")),
    *((f"/.well-known/oauth-protected-resource{path}", ("GET", "OPTIONS")) for path in MCP_PATHS),
    ("/oauth/authorize", ("GET", "POST")),
    ("/oauth/token", ("POST", "OPTIONS")),
    ("/oauth/register", ("POST", "OPTIONS")),
    ("/oauth/revoke", ("POST", "OPTIONS")),
)
"""Each OAuth route and its methods, as `oauth_routes` serves them."""


class _Serving:
    """Around each OAuth endpoint: 503 while the service is not serving; the request's origin for the provider."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        try:
            opened(getattr(request.app.state, "running", None))
        except ServiceError as exc:
            await error_response(exc.status, exc.code, exc.message)(scope, receive, send)
            return
        token = BASE_URL.set(origin_of(request))
        try:
            await self._app(scope, receive, send)
        finally:
            BASE_URL.reset(token)


def _public(app: ASGIApp, methods: tuple[str, ...]) -> ASGIApp:
    """Endpoints a browser-based client may call from another origin (the SDK's own choice), served or not."""
    return CORSMiddleware(
        _Serving(app), allow_origins="*", allow_methods=list(methods), allow_headers=["mcp-protocol-version"]
    )


async def authorization_server_metadata(request: Request) -> Response:
    base = origin_of(request)
    return JSONResponse(
        {
            "issuer": base,
            "authorization_endpoint": f"{base}/oauth/authorize",
            "token_endpoint": f"{base}/oauth/token",
            "registration_endpoint": f"{base}/oauth/register",
            "revocation_endpoint": f"{base}/oauth/revoke",
            "scopes_supported": [SCOPE],
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
        },
        headers={"Cache-Control": "public, max-age=300"},
    )


async def protected_resource_metadata(request: Request) -> Response:
    base = origin_of(request)
    resource = f"{base}{request.url.path.removeprefix('/.well-known/oauth-protected-resource')}"
    return JSONResponse(
        {
            "resource": resource,
            "authorization_servers": [base],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
            "resource_name": "mcpyard organization service",
        },
        headers={"Cache-Control": "public, max-age=300"},
    )


class _WithIssuer:
    """Around the authorization endpoint: an error the SDK's handler sends back to the client's redirect URI
    names the issuer too, as every other redirect of the service does (RFC 9207)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        issuer = origin_of(Request(scope))

        async def naming(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in (302, 303):
                headers = MutableHeaders(raw=list(message["headers"]))
                location = headers.get("location", "")
                query = parse_qs(urlsplit(location).query)
                if "error" in query and "iss" not in query:
                    headers["location"] = f"{location}&{urlencode({'iss': issuer})}"
                    message = {**message, "headers": headers.raw}
            await send(message)

        await self._app(scope, receive, naming)


class _Revocation:
    """RFC 7009 token revocation, for public clients too: the SDK's handler requires a `client_secret` field even
    from a client that has none (mcp 2.3), so a public client's revocation would be refused as malformed.
    The client authenticates as at the token endpoint; a token of another client, or none, is answered 200 and
    left alone (RFC 7009 2.2)."""

    def __init__(self, provider: OrgAuthorizationServer, authenticator: ClientAuthenticator) -> None:
        self._provider, self._authenticator = provider, authenticator

    async def handle(self, request: Request) -> Response:
        try:
            client = await self._authenticator.authenticate_request(request)
        except AuthenticationError as exc:
            return JSONResponse({"error": "unauthorized_client", "error_description": exc.message}, status_code=401)
        form = await request.form()
        value = form.get("token")
        if not isinstance(value, str) or not value:
            return JSONResponse({"error": "invalid_request", "error_description": "token is required"}, status_code=400)
        token = await self._provider.load_access_token(value) or await self._provider.load_refresh_token(client, value)
        if token is not None and token.client_id == client.client_id:
            await self._provider.revoke_token(token)
        return Response(status_code=200, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})


def oauth_routes(service: Callable[[], Any]) -> list[Route]:
    """The routes, their provider reading the running service (`service()`) at each request."""
    provider = OrgAuthorizationServer(service)
    authenticator = ClientAuthenticator(provider)
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE])
    handlers: dict[str, Any] = {
        "/oauth/authorize": AuthorizationHandler(provider).handle,
        "/oauth/token": TokenHandler(provider, authenticator).handle,
        "/oauth/register": RegistrationHandler(provider, options=registration).handle,
        "/oauth/revoke": _Revocation(provider, authenticator).handle,
    }
    routes: list[Route] = []
    for path, methods in OAUTH_ROUTES:
        if path == "/.well-known/oauth-authorization-server":
            app = _public(request_response(authorization_server_metadata), methods)
        elif path.startswith("/.well-known/oauth-protected-resource"):
            app = _public(request_response(protected_resource_metadata), methods)
        elif path == "/oauth/authorize":  # a browser navigation, not a cross-origin call
            app = _Serving(_WithIssuer(request_response(handlers[path])))
        else:
            app = _public(request_response(handlers[path]), methods)
        routes.append(Route(path, app, methods=list(methods)))
    return routes
