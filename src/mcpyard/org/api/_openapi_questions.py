"""The question operations of the organization's OpenAPI document: a server's questions and their answers (API-6)."""

from __future__ import annotations

from mcpyard.elicitation import FORMATS
from mcpyard.org.api._openapi_calls import CALL_RESULT
from mcpyard.org.api._openapi_parts import ANY_OBJ, BOOL, NSTR, STR, S, array, enum, obj, op, path, query
from mcpyard.org.services import ACTIONS, QUESTION_STATES

__all__ = ["QUESTION", "questions_paths"]

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


def questions_paths() -> S:
    answer = obj(
        ["action"],
        action=enum(*ACTIONS),
        content={**ANY_OBJ, "description": "accept, form mode: the form's values by field name (left out: default)"},
    )
    return {
        "/api/v1/questions": {
            "get": op(
                "Servers' questions: a member's own calls'; owners and admins see every one",
                {"200": ("the questions, oldest first", array(QUESTION))},
                "401 422",
                params=[query("status", enum(*QUESTION_STATES))],
            )
        },
        "/api/v1/questions/{question_id}": {
            "parameters": [path("question_id")],
            "get": op("One question", {"200": ("the question", QUESTION)}, "401 404"),
        },
        "/api/v1/questions/{question_id}/answer": {
            "parameters": [path("question_id")],
            "post": op(
                "Answer once (accept with the form's content, decline or cancel): 409 `already_decided` for a second "
                "answer, 409 `expired` when it expired; 422 names each field that does not fit, never a value",
                {"200": ("the question, answered; the call goes on", QUESTION)},
                "400 401 403 404 409 413 422",
                body=answer,
            ),
        },
    }
