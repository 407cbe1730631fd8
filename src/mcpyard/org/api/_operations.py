"""Each API operation declared once, beside its handler: the route table and the OpenAPI paths are built from them.

A handler module keeps an `Operations` and declares each handler with its method, path and
OpenAPI operation object (`@API.member(...)` for a member's request, `@API.public(...)` for
one that needs no credentials). Handlers are module-level functions; what the lifespan opened
(the service, the authenticator, the limits) reaches them as `running(request)`. A refusal of the
error tree becomes one error object with its kind's status, wherever it is raised.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpyard.errors import ServiceError, TooMany, Unavailable
from mcpyard.org._bodies import check_text
from mcpyard.org._caller import Caller
from mcpyard.org.api._schema import S, path
from mcpyard.org.keys import PasswordHashing
from mcpyard.org.services import Authenticator, OrgService, Outcome, SignInLimits
from mcpyard.org.turns import RateLimits

__all__ = [
    "Endpoint",
    "Handler",
    "Operation",
    "Operations",
    "Running",
    "answered",
    "error_response",
    "opened",
    "paths",
    "refusal",
    "routes",
    "running",
]

Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, Caller], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class Running:
    """What the lifespan opened, as every handler sees it (on `app.state.running` while the service runs)."""

    service: OrgService
    authenticate: Authenticator
    sign_ins: SignInLimits
    rate_limits: RateLimits
    secure_cookies: bool
    hashing: PasswordHashing


def opened(found: object) -> Running:
    """What the lifespan opened; before it opened, or after it closed, a request is refused with 503."""
    if not isinstance(found, Running):
        raise Unavailable("unavailable", "the organization service is not serving yet, or any more; try again soon")
    return found


def running(request: Request) -> Running:
    """The running service behind a request (503 when there is none: see `opened`)."""
    return opened(getattr(request.app.state, "running", None))


def error_response(status: int, code: str, message: str, details: dict[str, Any] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **(details or {})}}, status_code=status)


def answered(outcome: Outcome[object]) -> JSONResponse:
    """A call's, an approved run's or a turn's outcome: 200 when it ended, 202 while it is still going on."""
    return JSONResponse(outcome.body, status_code=202 if outcome.waiting else 200)


def refusal(exc: ServiceError) -> JSONResponse:
    """A refusal as the API answers it: its kind's status, one error object, and `Retry-After` when it says when."""
    response = error_response(exc.status, exc.code, exc.message, exc.details)
    if isinstance(exc, TooMany) and exc.retry_after is not None:
        response.headers["Retry-After"] = str(exc.retry_after)
    return response


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: `method` on `path` runs `endpoint`; `doc` is its OpenAPI operation object."""

    method: str
    path: str
    endpoint: Endpoint
    doc: S


class Operations:
    """A module's operations, in the order they are declared."""

    def __init__(self) -> None:
        self.declared: list[Operation] = []

    def member(self, method: str, route: str, doc: S) -> Callable[[Handler], Handler]:
        """Declare a member's operation: who asks is checked first (THREATS: every endpoint, every role).

        The handler is returned as it is: the declared route is what checks, so call it only from a route.
        """

        def declare(handler: Handler) -> Handler:
            async def endpoint(request: Request) -> Response:
                try:
                    caller = await running(request).authenticate(request)
                    check_text(request)
                    return await handler(request, caller)
                except ServiceError as exc:
                    return refusal(exc)

            self.declared.append(Operation(method, route, endpoint, doc))
            return handler

        return declare

    def public(self, method: str, route: str, doc: S) -> Callable[[Endpoint], Endpoint]:
        """Declare an operation that needs no credentials (signing in, a visitor's turn)."""

        def declare(handler: Endpoint) -> Endpoint:
            async def endpoint(request: Request) -> Response:
                try:
                    running(request)  # nothing is read or counted while the service is not serving
                    check_text(request)
                    return await handler(request)
                except ServiceError as exc:
                    return refusal(exc)

            self.declared.append(Operation(method, route, endpoint, {**doc, "security": []}))
            return handler

        return declare


def _by_path(operations: Iterable[Operation]) -> dict[str, dict[str, Operation]]:
    grouped: dict[str, dict[str, Operation]] = {}
    for operation in operations:
        methods = grouped.setdefault(operation.path, {})
        if operation.method in methods:
            raise ValueError(f"{operation.method} {operation.path} is declared twice")
        methods[operation.method] = operation
    return grouped


def routes(operations: Iterable[Operation]) -> list[Route]:
    """One route per path, taking exactly the methods declared on it (any other is 405)."""

    def dispatch(methods: dict[str, Operation]) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            method = "GET" if request.method == "HEAD" else request.method
            return await methods[method].endpoint(request)

        return endpoint

    return [Route(route, dispatch(methods), methods=list(methods)) for route, methods in _by_path(operations).items()]


def paths(operations: Iterable[Operation]) -> S:
    """The OpenAPI document's `paths`: each path's parameters, then its operations."""
    document: S = {}
    for route, methods in _by_path(operations).items():
        entry: S = {}
        names = re.findall(r"{(\w+)}", route)
        if names:
            entry["parameters"] = [path(name) for name in names]
        for method, operation in methods.items():
            entry[method.lower()] = operation.doc
        document[route] = entry
    return document
