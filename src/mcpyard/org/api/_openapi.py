"""The OpenAPI document of the organization's JSON API, served at `/api/v1/openapi.json` (API-6).

Written out by hand from the contract, so that a change to the API is a change here too. Each
operation lists exactly the statuses it answers with; what a request may hold is what the
service accepts (the bounds come from the modules that enforce them). The tests send generated
requests to every operation (schemathesis) and check each answer against this document.
"""

from __future__ import annotations

from typing import Any

from mcpyard import __version__
from mcpyard.org.api._openapi_calls import calls_paths
from mcpyard.org.api._openapi_parts import ANY_OBJ, S, op
from mcpyard.org.api._openapi_people import people_paths
from mcpyard.org.api._openapi_questions import questions_paths
from mcpyard.org.api._openapi_servers import servers_paths
from mcpyard.org.api._openapi_turns import turn_paths
from mcpyard.org.services import COOKIE

__all__ = ["openapi_document"]

DESCRIPTION = (
    "The organization service's JSON API. Programs send `Authorization: Bearer <API token>`; the web pages use a "
    "session cookie instead, and every state-changing request they make carries the page's `X-CSRF-Token`. "
    'Errors are `{"error": {"code", "message"}}`. Text in a path, a query parameter or a body (tool arguments '
    "aside) must not hold a NUL character (U+0000): in a path it names nothing (404), elsewhere it is refused (422)."
)


def openapi_document() -> dict[str, Any]:
    """The document, as a fresh dictionary."""
    paths: S = {
        "/api/v1/openapi.json": {
            "get": op("This document", {"200": ("the OpenAPI document", ANY_OBJ)}, "", public=True)
        },
        **people_paths(),
        **servers_paths(),
        **calls_paths(),
        **questions_paths(),
        **turn_paths(),
    }
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
        "paths": paths,
    }
