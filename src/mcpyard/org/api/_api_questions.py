"""Servers' questions in the JSON API: the inbox's questions, one question, and its one answer (API-6).

Each operation parses, authorizes and calls a service function (`services/_answers.py`): a member
sees and answers the questions of their own calls, owners and admins every one; another
organization's question, or another member's for a member, is 404.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.elicitation import FORMATS
from mcpyard.errors import Invalid
from mcpyard.org import services
from mcpyard.org._bodies import json_body
from mcpyard.org._caller import Caller
from mcpyard.org.api._api_calls import CALL_RESULT
from mcpyard.org.api._operations import Operations, running
from mcpyard.org.api._schema import ANY_OBJ, BOOL, NSTR, STR, S, array, enum, obj, op, query
from mcpyard.org.services import ACTIONS, QUESTION_STATES

__all__ = ["API", "BODIES", "QUESTION"]

API = Operations()
ANSWER_FIELDS = ("action", "content")
"""An answer's fields; its `content` is shaped by the question's own schema (checked in `services/_answers.py`)."""

_COUNT: S = {"type": "integer", "minimum": 0}
_NUMBER: S = {"type": "number"}
FIELD: S = {
    "type": "object",
    "required": ["name", "kind", "title", "required", "secret"],
    "properties": {  # written out: a property is named `required`
        "name": STR,
        "kind": enum("string", "number", "integer", "boolean", "choice", "choices"),
        "title": STR,
        "required": BOOL,
        "description": STR,
        "default": {"description": "what an empty field sends (never shown for a secret field)"},
        "format": enum(*sorted(FORMATS)),
        "min_length": _COUNT,
        "max_length": _COUNT,
        "minimum": _NUMBER,
        "maximum": _NUMBER,
        "min_items": _COUNT,
        "max_items": _COUNT,
        "choices": array(obj(["value", "title"], value=STR, title=STR)),
        "secret": {**BOOL, "description": "looks like a secret: never echoed, shown or kept in clear"},
    },
}
QUESTION = obj(
    [
        "id",
        "status",
        "server",
        "server_id",
        "tool",
        "member_id",
        "turn_id",
        "call_id",
        "mode",
        "message",
        "fields",
        "url",
        "site",
        "asks_for_secrets",
        "why",
        "created_at",
        "expires_at",
        "answered_by",
        "answered_at",
        "result",
    ],
    id=STR,
    status=enum(*QUESTION_STATES),
    server=STR,
    server_id=NSTR,
    tool=NSTR,
    member_id=STR,
    turn_id=NSTR,
    call_id=NSTR,
    mode=enum("form", "url"),
    message=STR,
    fields=array(FIELD),
    url={**NSTR, "description": "URL mode: the address, checked; mcpyard never opens it"},
    site=NSTR,
    asks_for_secrets=BOOL,
    why=NSTR,
    created_at=STR,
    expires_at=STR,
    answered_by=NSTR,
    answered_at=NSTR,
    result={
        "oneOf": [{"type": "null"}, CALL_RESULT],
        "description": "a member's own call: its result, once it ended after the answer",
    },
)
"""A server's question as the inbox shows it: never an answer typed into it."""
BODIES = {"question": QUESTION}
"""The bodies these operations answer with, by the name the views test pairs with a service's view."""


_ANSWER = obj(
    ["action"],
    action=enum(*ACTIONS),
    content={**ANY_OBJ, "description": "accept, form mode: the form's values by field name (left out: default)"},
)


@API.member(
    "GET",
    "/api/v1/questions",
    op(
        "Servers' questions: a member's own calls'; owners and admins see every one",
        {"200": ("the questions, oldest first", array(QUESTION))},
        "401 422",
        params=[query("status", enum(*QUESTION_STATES))],
    ),
)
async def list_questions(request: Request, caller: Caller) -> Response:
    status = request.query_params.get("status")
    if status is not None and status not in QUESTION_STATES:
        raise Invalid("invalid_request", f"`status` must be one of {', '.join(QUESTION_STATES)}")
    return JSONResponse(await services.list_questions(running(request).service, caller, status))


@API.member(
    "GET", "/api/v1/questions/{question_id}", op("One question", {"200": ("the question", QUESTION)}, "401 404")
)
async def get_question(request: Request, caller: Caller) -> Response:
    question_id = request.path_params["question_id"]
    return JSONResponse(await services.get_question(running(request).service, caller, question_id))


@API.member(
    "POST",
    "/api/v1/questions/{question_id}/answer",
    op(
        "Answer once (accept with the form's content, decline or cancel): 409 `already_decided` for a second "
        "answer, 409 `expired` when it expired; 422 names each field that does not fit, never a value",
        {"200": ("the question, answered; the call goes on", QUESTION)},
        "400 401 403 404 409 413 422",
        body=_ANSWER,
    ),
)
async def answer_question(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=ANSWER_FIELDS)
    svc, question_id = running(request).service, request.path_params["question_id"]
    return JSONResponse(
        await services.answer_question(svc, caller, question_id, body.get("action"), body.get("content"))
    )
