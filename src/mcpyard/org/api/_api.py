"""The organization's JSON API under `/api/v1` (API-6): thin routes over the service functions.

A route parses, authorizes and calls a plain service function; the rules live in the service
modules. Errors are `{"error": {"code", "message"}}` with the status the service chose; a
request body that is not a JSON object of the fields its route names, or that holds unusable
text, is refused before anything runs (`_bodies.py`). A route that takes no body refuses one
with fields, so nothing sent is ever dropped unseen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpyard.errors import Invalid, ServiceError
from mcpyard.org import services
from mcpyard.org._bodies import MAX_BODY_BYTES, check_text, json_body, query_text
from mcpyard.org._caller import ADMINS, Caller, require
from mcpyard.org.services import OrgService, list_alerts, list_audit

__all__ = [
    "MAX_BODY_BYTES",
    "Authenticate",
    "Handler",
    "api_routes",
    "check_text",
    "error_response",
    "guard",
    "json_body",
]

APPROVAL_STATES = ("pending", "running", "done", "failed", "declined")
SERVER_FIELDS = ("name", "url", "bearer_token", "client_credentials")
POLICY_FIELDS = ("policy", "definition_hash")
CALL_FIELDS = ("tool", "arguments", "conversation")
Authenticate = Callable[[Request], Awaitable[Caller]]
"""Who sent the request (bearer token or session cookie), or `ServiceError` 401."""
Handler = Callable[[Request, Caller], Awaitable[Response]]


def error_response(status: int, code: str, message: str, details: dict[str, Any] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **(details or {})}}, status_code=status)


def _choice(request: Request, name: str, choices: tuple[str, ...]) -> str | None:
    """A query parameter that must be one of `choices` when given (None when absent), else 422."""
    value = query_text(request, name)
    if value is not None and value not in choices:
        raise Invalid("invalid_request", f"`{name}` must be one of {', '.join(choices)}")
    return value


def _int(request: Request, name: str, default: int | None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise Invalid("invalid_request", f"`{name}` must be a whole number") from None
    if value < 0:
        raise Invalid("invalid_request", f"`{name}` must not be negative")
    return value


def guard(authenticate: Authenticate, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint of a route that needs a member: who asks is checked first, and a refusal is one error object."""

    async def endpoint(request: Request) -> Response:
        try:
            caller = await authenticate(request)
            check_text(request)
            return await handler(request, caller)
        except ServiceError as exc:
            return error_response(exc.status, exc.code, exc.message, exc.details)

    return endpoint


def api_routes(svc: OrgService, authenticate: Authenticate) -> list[Route]:
    """The routes that need a member: each checks who asks before it runs (THREATS: every endpoint, every role)."""

    def guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        return guard(authenticate, handler)

    async def me(request: Request, caller: Caller) -> Response:
        del request
        return JSONResponse(
            {"id": caller.member_id, "email": caller.email, "role": caller.role, "org_id": caller.org_id}
        )

    async def servers(request: Request, caller: Caller) -> Response:
        if request.method == "POST":
            body = await json_body(request, fields=SERVER_FIELDS)
            created = await services.register_server(
                svc,
                caller,
                body.get("name"),
                body.get("url"),
                body.get("bearer_token"),
                body.get("client_credentials"),
            )
            return JSONResponse(created, status_code=201)
        return JSONResponse(await services.list_servers(svc, caller))

    async def server(request: Request, caller: Caller) -> Response:
        server_id = request.path_params["server_id"]
        if request.method == "PATCH":
            changes = await json_body(request, fields=SERVER_FIELDS)
            return JSONResponse(await services.update_server(svc, caller, server_id, changes))
        if request.method == "DELETE":
            await services.delete_server(svc, caller, server_id)
            return Response(status_code=204)
        return JSONResponse(await services.get_server(svc, caller, server_id))

    async def refresh(request: Request, caller: Caller) -> Response:
        await json_body(request, fields=())
        return JSONResponse(await services.refresh_server(svc, caller, request.path_params["server_id"]))

    async def selections(request: Request, caller: Caller) -> Response:
        return JSONResponse(await services.server_selections(svc, caller, request.path_params["server_id"]))

    async def tools(request: Request, caller: Caller) -> Response:
        del request
        return JSONResponse(await services.list_tools(svc, caller))

    async def tool(request: Request, caller: Caller) -> Response:
        return JSONResponse(await services.get_tool(svc, caller, request.path_params["tool_id"]))

    async def policy(request: Request, caller: Caller) -> Response:
        body = await json_body(request, fields=POLICY_FIELDS)
        tool_id = request.path_params["tool_id"]
        updated = await services.set_policy(svc, caller, tool_id, body.get("policy"), body.get("definition_hash"))
        return JSONResponse(updated)

    async def calls(request: Request, caller: Caller) -> Response:
        body = await json_body(request, fields=CALL_FIELDS, opaque=("arguments",))
        status, answer = await services.call_tool(
            svc, caller, body.get("tool"), body.get("arguments", {}), body.get("conversation")
        )
        return JSONResponse(answer, status_code=status)

    async def approvals(request: Request, caller: Caller) -> Response:
        status = _choice(request, "status", APPROVAL_STATES)
        return JSONResponse(await services.list_approvals(svc, caller, status))

    async def approve(request: Request, caller: Caller) -> Response:
        await json_body(request, fields=())
        approval_id = request.path_params["approval_id"]
        status, ran = await services.approve(svc, caller, approval_id)
        return JSONResponse(ran, status_code=status)

    async def decline(request: Request, caller: Caller) -> Response:
        await json_body(request, fields=())
        approval_id = request.path_params["approval_id"]
        return JSONResponse(await services.decline(svc, caller, approval_id))

    async def result(request: Request, caller: Caller) -> Response:
        offset = _int(request, "offset", 0) or 0
        length = _int(request, "length", None)
        if length == 0:
            raise Invalid("invalid_request", "`length` must be at least 1")
        conversation = services.checked_conversation(query_text(request, "conversation") or None)
        handle = request.path_params["handle"]
        window = await services.read_result(svc, caller, handle, offset, length, conversation)
        return JSONResponse(window)

    async def audit(request: Request, caller: Caller) -> Response:
        require(caller, *ADMINS)
        action, actor = query_text(request, "action"), query_text(request, "actor")
        async with svc.db.begin() as session:
            rows = await list_audit(session, caller.org_id, action=action, actor=actor)
        return JSONResponse(rows)

    async def alerts(request: Request, caller: Caller) -> Response:
        open_only = _choice(request, "open", ("true", "false"))
        async with svc.db.begin() as session:
            rows = await list_alerts(session, caller.org_id, open_only=open_only == "true")
        return JSONResponse(rows)

    return [
        Route("/api/v1/me", guarded(me), methods=["GET"]),
        Route("/api/v1/audit", guarded(audit), methods=["GET"]),
        Route("/api/v1/alerts", guarded(alerts), methods=["GET"]),
        Route("/api/v1/servers", guarded(servers), methods=["GET", "POST"]),
        Route("/api/v1/servers/{server_id}", guarded(server), methods=["GET", "PATCH", "DELETE"]),
        Route("/api/v1/servers/{server_id}/refresh", guarded(refresh), methods=["POST"]),
        Route("/api/v1/servers/{server_id}/selections", guarded(selections), methods=["GET"]),
        Route("/api/v1/tools", guarded(tools), methods=["GET"]),
        Route("/api/v1/tools/{tool_id}", guarded(tool), methods=["GET"]),
        Route("/api/v1/tools/{tool_id}/policy", guarded(policy), methods=["PUT"]),
        Route("/api/v1/calls", guarded(calls), methods=["POST"]),
        Route("/api/v1/approvals", guarded(approvals), methods=["GET"]),
        Route("/api/v1/approvals/{approval_id}/approve", guarded(approve), methods=["POST"]),
        Route("/api/v1/approvals/{approval_id}/decline", guarded(decline), methods=["POST"]),
        Route("/api/v1/results/{handle}", guarded(result), methods=["GET"]),
    ]
