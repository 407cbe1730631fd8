"""The JSON API's operations, gathered: its route table and its OpenAPI document, served at `/api/v1/openapi.json`
(API-6).

Both are built from the operations each module declares beside its handlers, so each operation
is written once. Each operation lists exactly the statuses it answers with; what a request may hold is what
the service accepts (the bounds come from the modules that enforce them). The tests send generated
requests to every operation (schemathesis) and check each answer against this document.
"""

from __future__ import annotations

import copy
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpyard import __version__
from mcpyard.org.api import (
    _api_assistants,
    _api_calls,
    _api_limits,
    _api_people,
    _api_questions,
    _api_servers,
    _api_tool_search,
    _api_turns,
    _api_webhooks,
    _turn_schemas,
)
from mcpyard.org.api._operations import Operations, paths, routes
from mcpyard.org.api._schema import ANY_OBJ, S, op
from mcpyard.org.services import COOKIE

__all__ = ["BODY_SCHEMAS", "OPERATIONS", "api_routes", "openapi_document"]

API = Operations()

DESCRIPTION = (
    "The organization service's JSON API. Programs send `Authorization: Bearer <API token>`; the web pages use a "
    "session cookie instead, and every state-changing request they make carries the page's `X-CSRF-Token`. "
    'Errors are `{"error": {"code", "message"}}`. Text in a path, a query parameter or a body (tool arguments '
    "aside) must not hold a NUL character (U+0000): in a path it names nothing (404), elsewhere it is refused (422)."
)


@API.public("GET", "/api/v1/openapi.json", op("This document", {"200": ("the OpenAPI document", ANY_OBJ)}, ""))
async def document(request: Request) -> Response:
    del request
    return JSONResponse(openapi_document())


OPERATIONS = (
    *_api_people.API.declared,
    *_api_servers.API.declared,
    *_api_calls.API.declared,
    *_api_questions.API.declared,
    *_api_turns.API.declared,
    *_api_assistants.API.declared,
    *_api_webhooks.API.declared,
    *_api_limits.API.declared,
    *_api_tool_search.API.declared,
    *API.declared,
)
"""Every operation of the API, in the order the document lists them."""
BODY_SCHEMAS: dict[str, S] = {
    **_api_people.BODIES,
    **_api_servers.BODIES,
    **_api_calls.BODIES,
    **_api_questions.BODIES,
    **_turn_schemas.BODIES,
    **_api_webhooks.BODIES,
    **_api_limits.BODIES,
    **_api_tool_search.BODIES,
}
"""The schemas of the bodies the API answers with, by name: each is what a service's TypedDict view says, key by
key (the views test pairs them)."""


def api_routes() -> list[Route]:
    """The API's routes: one per path, each taking the methods declared on it."""
    return routes(OPERATIONS)


def openapi_document() -> dict[str, Any]:
    """The document, as a fresh dictionary."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "mcpyard organization service", "version": __version__, "description": DESCRIPTION},
        "components": {
            "securitySchemes": {
                "token": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": COOKIE},
            }
        },
        "security": [{"token": []}, {"session": []}],
        "paths": copy.deepcopy(paths(OPERATIONS)),
    }
