"""`/mcp` and `/mcp/teammates/{id}`: who may speak to the organization's MCP server, and how (ORG-10, API-7).

Every request is signed in first: an API token as `Authorization: Bearer` (a browser's session
cookie is not accepted here); without one, 401 with `WWW-Authenticate` naming the protected
resource metadata. A teammate's endpoint answers only a member of the teammate's organization, and
only while the teammate is in use. An MCP session belongs to the member who opened it: another
member's request naming it finds nothing (404). The SDK's streamable HTTP transport then checks
`Host` and `Origin` (DNS rebinding) against the addresses the service answers on, and the face
serves the request.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator
from urllib.parse import quote, urlsplit

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from mcpyard.errors import NotFound, NotSignedIn, ServiceError
from mcpyard.org._bodies import origin_of, text_problem
from mcpyard.org.api import error_response, opened
from mcpyard.org.mcp._face import STATE_KEY, McpRequest, OrgFace
from mcpyard.org.services import OrgService
from mcpyard.org.store import Teammate

__all__ = ["MAX_OWNED_SESSIONS", "MCP_METHODS", "MCP_PATHS", "McpEndpoint", "resource_of", "transport_security"]

MCP_PATHS = ("/mcp", "/mcp/teammates/{teammate_id}")
"""The MCP endpoints: the organization's tools, and each teammate's (its tools and nothing else)."""
MCP_METHODS = ("GET", "POST", "DELETE")
"""Streamable HTTP: a request or notification (POST), the stream of server messages (GET), the session's end."""

MAX_OWNED_SESSIONS = 10_000
"""MCP sessions whose member this process remembers (the oldest forgotten first: their sessions are long gone)."""
LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")


def resource_of(request: Request) -> str:
    """The MCP endpoint a request is for, as OAuth names it (RFC 8707): the service's origin and the path."""
    return f"{origin_of(request)}{request.url.path}"


def transport_security(public_url: str | None) -> TransportSecuritySettings:
    """The `Host` and `Origin` an MCP request may carry: the service's public address, else this machine's own."""
    if public_url:
        parts = urlsplit(public_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        return TransportSecuritySettings(allowed_hosts=[parts.netloc], allowed_origins=[origin])
    origins = [f"http://{host}" for host in LOOPBACK_HOSTS]
    return TransportSecuritySettings(allowed_hosts=list(LOOPBACK_HOSTS), allowed_origins=origins)


class McpEndpoint:
    """The ASGI app behind `/mcp` and `/mcp/teammates/{id}` (one per app; its session manager runs with the
    service)."""

    def __init__(self) -> None:
        self.face = OrgFace()
        self._manager: StreamableHTTPSessionManager | None = None
        self._front = self.face.fast_http(self._managed, None)
        """A member's repeated tool calls answered on parsed JSON; the rest by the SDK's session manager."""
        self._owners: OrderedDict[str, str] = OrderedDict()
        """MCP session id → the member who opened it."""

    @contextlib.asynccontextmanager
    async def running(self, service: OrgService, public_url: str | None) -> AsyncIterator[None]:
        """Serve MCP while the block runs: the face follows the service's changes, sessions end with the block."""
        self.face.attach(service)
        manager = StreamableHTTPSessionManager(app=self.face.server, security_settings=transport_security(public_url))
        async with manager.run(), anyio.create_task_group() as tg:
            await tg.start(self.face.run)
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None
                tg.cancel_scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        try:
            running = opened(getattr(request.app.state, "running", None))
            caller = await running.authenticate.bearer(request, resource_of(request))
            teammate_id = await self._teammate(running.service, request, caller.org_id)
        except NotSignedIn as exc:
            await self._unauthorized(request, exc.message)(scope, receive, send)
            return
        except ServiceError as exc:
            await error_response(exc.status, exc.code, exc.message)(scope, receive, send)
            return
        manager = self._manager
        if manager is None:
            await error_response(503, "unavailable", "the MCP endpoint is not serving yet, or any more")(
                scope, receive, send
            )
            return
        session = request.headers.get("mcp-session-id")
        if session is not None and self._owners.get(session) != caller.member_id:  # unknown: not found
            await error_response(404, "not_found", "no such MCP session")(scope, receive, send)
            return
        base = origin_of(request)
        scope.setdefault("state", {})[STATE_KEY] = McpRequest(running.service, caller, teammate_id, base)

        async def remembering(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", ()):
                    if name.lower() == b"mcp-session-id":
                        self._own(value.decode("latin-1"), caller.member_id)
            await send(message)

        await self._front(scope, receive, remembering)

    async def _managed(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self._manager
        if manager is None:
            await error_response(503, "unavailable", "the MCP endpoint is not serving any more")(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)

    def _own(self, session: str, member_id: str) -> None:
        self._owners[session] = member_id
        self._owners.move_to_end(session)
        while len(self._owners) > MAX_OWNED_SESSIONS:
            self._owners.popitem(last=False)

    async def _teammate(self, service: OrgService, request: Request, org_id: str) -> str | None:
        """The teammate whose endpoint this is (None: `/mcp`); 404 when it is not one in use in the organization."""
        teammate_id = request.path_params.get("teammate_id")
        if teammate_id is None:
            return None
        found = None
        if text_problem(teammate_id) is None:
            async with service.db.begin() as session:
                found = await session.scalar(
                    select(Teammate.id).where(
                        Teammate.id == teammate_id, Teammate.org_id == org_id, Teammate.deleted_at.is_(None)
                    )
                )
        if found is None:
            raise NotFound("not_found", "no teammate with that id in your organization")
        return str(found)

    def _unauthorized(self, request: Request, message: str) -> JSONResponse:
        base = origin_of(request)
        metadata = f"{base}/.well-known/oauth-protected-resource{quote(request.url.path, safe='/')}"
        response = error_response(401, "unauthorized", message)
        challenge = f'Bearer resource_metadata="{metadata}", scope="mcp"'
        if request.headers.get("authorization"):  # a token was sent and is not good here (RFC 6750 §3.1)
            challenge += ', error="invalid_token"'
        response.headers["WWW-Authenticate"] = challenge
        return response
