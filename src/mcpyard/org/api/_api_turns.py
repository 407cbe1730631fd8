"""Teammates in the JSON API: the organization's model, teammates, their conversations and turns (API-6).

Like every operation, each parses, authorizes and calls a service function of `turns`.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.org import turns
from mcpyard.org._bodies import json_body
from mcpyard.org._caller import Caller
from mcpyard.org.api._operations import Operations, answered, running
from mcpyard.org.api._schema import array, op
from mcpyard.org.api._turn_schemas import (
    CONVERSATION,
    LISTED_CONVERSATION,
    MESSAGE_BODY,
    MODEL,
    MODEL_BODY,
    STARTED,
    TEAMMATE,
    TEAMMATE_BODY,
    TEAMMATE_CHANGE,
    TRACED,
    TURN,
)

__all__ = ["API", "MESSAGE_FIELDS"]

API = Operations()
MODEL_FIELDS = ("base_url", "model", "api_key")
TEAMMATE_FIELDS = ("name", "instructions", "model", "server_ids")
MESSAGE_FIELDS = ("message",)


@API.member(
    "GET", "/api/v1/model", op("The organization's model (never its key)", {"200": ("the model", MODEL)}, "401")
)
async def get_model(request: Request, caller: Caller) -> Response:
    return JSONResponse(await turns.get_model(running(request).service, caller))


@API.member(
    "PUT",
    "/api/v1/model",
    op(
        "Set the organization's model (owner, admin): an OpenAI-compatible endpoint; the key is sealed",
        {"200": ("the model, never its key", MODEL)},
        "400 401 403 413 422",
        body=MODEL_BODY,
    ),
)
async def put_model(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=MODEL_FIELDS)
    return JSONResponse(await turns.put_model(running(request).service, caller, body))


@API.member("GET", "/api/v1/teammates", op("The teammates", {"200": ("every teammate", array(TEAMMATE))}, "401"))
async def list_teammates(request: Request, caller: Caller) -> Response:
    return JSONResponse(await turns.list_teammates(running(request).service, caller))


@API.member(
    "POST",
    "/api/v1/teammates",
    op(
        "Create a teammate (owner, admin) with the servers it may use",
        {"201": ("the teammate, with the tools it is offered", TEAMMATE)},
        "400 401 403 409 413 422",
        body=TEAMMATE_BODY,
    ),
)
async def create_teammate(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=TEAMMATE_FIELDS)
    return JSONResponse(await turns.create_teammate(running(request).service, caller, body), status_code=201)


@API.member(
    "GET",
    "/api/v1/teammates/{teammate_id}",
    op("One teammate (a deleted one too, with `deleted_at`)", {"200": ("the teammate", TEAMMATE)}, "401 404"),
)
async def get_teammate(request: Request, caller: Caller) -> Response:
    return JSONResponse(await turns.get_teammate(running(request).service, caller, request.path_params["teammate_id"]))


@API.member(
    "PATCH",
    "/api/v1/teammates/{teammate_id}",
    op(
        "Change a teammate (owner, admin): any of its name, instructions, servers and model; its next call "
        "uses what it has now. 409 `teammate_deleted` for a deleted one; 422 `unknown_server` names each "
        "server id that is not a live server of the organization",
        {"200": ("the teammate, with the tools it is offered now", TEAMMATE)},
        "400 401 403 404 409 413 422",
        body=TEAMMATE_CHANGE,
    ),
)
async def update_teammate(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=TEAMMATE_FIELDS)
    svc, teammate_id = running(request).service, request.path_params["teammate_id"]
    await turns.update_teammate(svc, caller, teammate_id, body)
    return JSONResponse(await turns.get_teammate(svc, caller, teammate_id))


@API.member(
    "DELETE",
    "/api/v1/teammates/{teammate_id}",
    op(
        "Delete a teammate (owner, admin), keeping its conversations, turns and traces readable: it leaves "
        "the list, takes no new conversation or turn (409 `teammate_deleted`), its turns waiting for an "
        "approval end and their pending approvals are declined",
        {"204": ("deleted", None)},
        "401 403 404 409",
    ),
)
async def delete_teammate(request: Request, caller: Caller) -> Response:
    await turns.delete_teammate(running(request).service, caller, request.path_params["teammate_id"])
    return Response(status_code=204)


@API.member(
    "GET",
    "/api/v1/teammates/{teammate_id}/conversations",
    op(
        "The caller's own conversations with a teammate, newest first",
        {"200": ("the conversations, each with its turn count and first message", array(LISTED_CONVERSATION))},
        "401 404",
    ),
)
async def list_conversations(request: Request, caller: Caller) -> Response:
    teammate_id = request.path_params["teammate_id"]
    return JSONResponse(await turns.list_conversations(running(request).service, caller, teammate_id))


@API.member(
    "POST",
    "/api/v1/teammates/{teammate_id}/conversations",
    op(
        "Start a conversation with a teammate (the caller's own)",
        {"201": ("the conversation", STARTED)},
        "401 404 409",
    ),
)
async def start_conversation(request: Request, caller: Caller) -> Response:
    await json_body(request, fields=())
    started = await turns.start_conversation(running(request).service, caller, request.path_params["teammate_id"])
    return JSONResponse(started, status_code=201)


@API.member(
    "GET",
    "/api/v1/conversations/{conversation_id}",
    op(
        "A conversation with a teammate and its turns, oldest first (its member's alone)",
        {"200": ("the conversation", CONVERSATION)},
        "401 404",
    ),
)
async def get_conversation(request: Request, caller: Caller) -> Response:
    conversation_id = request.path_params["conversation_id"]
    return JSONResponse(await turns.get_conversation(running(request).service, caller, conversation_id))


@API.member(
    "POST",
    "/api/v1/conversations/{conversation_id}/turns",
    op(
        "A turn: 200 when it ended, 202 when it waits for an approval (it goes on once that is decided) or "
        "for the answer to a question one of its servers asked (it goes on once that is answered)",
        {"200": ("the turn", TURN), "202": ("the turn, waiting for an approval or an answer", TURN)},
        "400 401 404 409 413 422",
        body=MESSAGE_BODY,
    ),
)
async def take_turn(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=MESSAGE_FIELDS)
    conversation_id = request.path_params["conversation_id"]
    return answered(await turns.take_turn(running(request).service, caller, conversation_id, body))


@API.member("GET", "/api/v1/turns/{turn_id}", op("A turn and its trace", {"200": ("the turn", TRACED)}, "401 404"))
async def get_turn(request: Request, caller: Caller) -> Response:
    return JSONResponse(await turns.get_turn(running(request).service, caller, request.path_params["turn_id"]))
