"""Assistants in the JSON API: assistants, their publications and previews, and visitors' turns (API-6).

Visitors' operations (`/public/…`) need no credentials and answer only what a published
assistant may show; they are rate limited per visitor and per assistant.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.org import turns
from mcpyard.org._bodies import json_body
from mcpyard.org._caller import Caller
from mcpyard.org.api._api_turns import MESSAGE_FIELDS
from mcpyard.org.api._operations import Operations, running
from mcpyard.org.api._schema import array, op
from mcpyard.org.api._turn_schemas import (
    ASSISTANT,
    ASSISTANT_BODY,
    MESSAGE_BODY,
    PREVIEWED,
    PUBLICATION,
    VISITOR,
    VISITOR_BODY,
)

__all__ = ["API"]

API = Operations()
ASSISTANT_FIELDS = ("name", "instructions", "tool_ids")
VISITOR_FIELDS = ("message", "conversation")


@API.member("GET", "/api/v1/assistants", op("The assistants", {"200": ("every assistant", array(ASSISTANT))}, "401"))
async def list_assistants(request: Request, caller: Caller) -> Response:
    return JSONResponse(await turns.list_assistants(running(request).service, caller))


@API.member(
    "POST",
    "/api/v1/assistants",
    op(
        "Create an assistant (owner, admin) with a selection of tools",
        {"201": ("the assistant", ASSISTANT)},
        "400 401 403 413 422",
        body=ASSISTANT_BODY,
    ),
)
async def create_assistant(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=ASSISTANT_FIELDS)
    return JSONResponse(await turns.create_assistant(running(request).service, caller, body), status_code=201)


@API.member(
    "GET",
    "/api/v1/assistants/{assistant_id}",
    op("One assistant, with its publications", {"200": ("the assistant", ASSISTANT)}, "401 404"),
)
async def get_assistant(request: Request, caller: Caller) -> Response:
    assistant_id = request.path_params["assistant_id"]
    return JSONResponse(await turns.get_assistant(running(request).service, caller, assistant_id))


@API.member(
    "GET",
    "/api/v1/assistants/{assistant_id}/publications",
    op("The assistant's publications, newest first", {"200": ("the publications", array(PUBLICATION))}, "401 404"),
)
async def list_publications(request: Request, caller: Caller) -> Response:
    assistant_id = request.path_params["assistant_id"]
    return JSONResponse(await turns.list_publications(running(request).service, caller, assistant_id))


@API.member(
    "POST",
    "/api/v1/assistants/{assistant_id}/publish",
    op(
        "Publish the selection: 409 `not_publishable` names each tool that may not serve visitors",
        {"200": ("the publication", PUBLICATION)},
        "401 403 404 409",
    ),
)
async def publish(request: Request, caller: Caller) -> Response:
    await json_body(request, fields=())
    return JSONResponse(await turns.publish(running(request).service, caller, request.path_params["assistant_id"]))


@API.member(
    "POST",
    "/api/v1/assistants/{assistant_id}/preview",
    op(
        "A turn as visitors would have it, with the current selection",
        {"200": ("the turn, and the tools left out", PREVIEWED)},
        "400 401 403 404 409 413 422",
        body=MESSAGE_BODY,
    ),
)
async def preview(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=MESSAGE_FIELDS)
    svc, assistant_id = running(request).service, request.path_params["assistant_id"]
    return JSONResponse(await turns.preview(svc, caller, assistant_id, body))


@API.public(
    "POST",
    "/public/assistants/{slug}/turns",
    op(
        "A visitor's turn of a published assistant (no credentials; at most 5 calls; rate limited)",
        {"200": ("the answer", VISITOR)},
        "400 404 409 413 422 429",
        body=VISITOR_BODY,
    ),
)
async def visitor_turn(request: Request) -> Response:
    body = await json_body(request, fields=VISITOR_FIELDS)
    parts = running(request)
    client = request.client.host if request.client is not None else "unknown"
    return JSONResponse(
        await turns.visitor_turn(parts.service, request.path_params["slug"], body, client, parts.rate_limits)
    )
