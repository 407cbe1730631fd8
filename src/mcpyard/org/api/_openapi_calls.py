"""The call operations of the organization's OpenAPI document: calls, approvals, results, audit, alerts (API-6)."""

from __future__ import annotations

from mcpyard.org.api._api import APPROVAL_STATES
from mcpyard.org.api._openapi_parts import ANY_OBJ, BOOL, NOBJ, NSTR, STR, S, array, enum, obj, op, path, query
from mcpyard.org.services import MAX_CONVERSATION, MAX_TOOL_NAME

__all__ = ["CALL_RESULT", "calls_paths"]

CALL_RESULT = obj(
    ["ok", "text", "content", "structured", "cached", "handle", "error", "tool", "server", "call_id"],
    ok=BOOL,
    text=STR,
    content={"type": "array", "items": ANY_OBJ},
    structured={},
    cached=BOOL,
    handle=NSTR,
    error={"oneOf": [{"type": "null"}, obj(["code", "message"], code=STR, message=STR)]},
    tool=NSTR,
    server=NSTR,
    call_id=NSTR,
)
_PARKED = obj(["approval"], approval=obj(["id", "status"], id=STR, status={"const": "pending"}))
_QUESTION_ASKED = obj(["id", "status"], id=STR, status={"const": "pending"})
_ASKING = obj(["call_id", "question"], call_id=STR, question=_QUESTION_ASKED)
_RUNNING = obj(
    ["approval", "question"],
    approval=obj(["id", "status"], id=STR, status={"const": "running"}),
    question={"oneOf": [{"type": "null"}, _QUESTION_ASKED]},
)
_APPROVAL = obj(
    [
        "id",
        "status",
        "tool",
        "tool_id",
        "member_id",
        "arguments",
        "reason",
        "conversation",
        "created_at",
        "decided_by",
        "decided_at",
        "result",
    ],
    id=STR,
    status=enum(*APPROVAL_STATES),
    tool=STR,
    tool_id=STR,
    member_id=STR,
    arguments=STR,
    reason=STR,
    conversation=STR,
    created_at=STR,
    decided_by=NSTR,
    decided_at=NSTR,
    result={"oneOf": [{"type": "null"}, CALL_RESULT]},
)
_AUDIT = obj(
    ["id", "at", "actor", "action", "target", "old", "new"],
    id=STR,
    at=STR,
    actor=STR,
    action=STR,
    target=STR,
    old=NOBJ,
    new=NOBJ,
)
_ALERT = obj(
    ["id", "server_id", "assistant_id", "kind", "message", "raised_at", "cleared_at"],
    id=STR,
    server_id=NSTR,
    assistant_id=NSTR,
    kind=STR,
    message=STR,
    raised_at=STR,
    cleared_at=NSTR,
)
_CONVERSATION: S = {"type": "string", "maxLength": MAX_CONVERSATION}


def calls_paths() -> S:
    call_body = obj(
        ["tool"],
        tool={"type": "string", "minLength": 1, "maxLength": MAX_TOOL_NAME},
        arguments={**ANY_OBJ, "default": {}},
        conversation=_CONVERSATION,
    )
    offset = {"type": "integer", "minimum": 0}
    return {
        "/api/v1/calls": {
            "post": op(
                "Call a tool by the name the model sees: refusals are 200 with `ok: false` and the pipeline's code",
                {
                    "200": ("the call's result", CALL_RESULT),
                    "202": (
                        "parked for approval (the saved arguments run once it is approved), or running: its server "
                        "asked a question (the call goes on once it is answered; its result comes with the question)",
                        {"oneOf": [_PARKED, _ASKING]},
                    ),
                },
                "400 401 403 413 422",
                body=call_body,
            )
        },
        "/api/v1/approvals": {
            "get": op(
                "The inbox: a member's own calls; owners and admins see every one",
                {"200": ("the approvals, oldest first", array(_APPROVAL))},
                "401 422",
                params=[query("status", enum(*APPROVAL_STATES))],
            )
        },
        "/api/v1/approvals/{approval_id}/approve": {
            "parameters": [path("approval_id")],
            "post": op(
                "Approve: policy, definition and access checked again, then the saved call runs once",
                {
                    "200": ("the result of that one run", CALL_RESULT),
                    "202": ("running: its server asked a question; its result becomes the approval's", _RUNNING),
                },
                "401 403 404 409",
            ),
        },
        "/api/v1/approvals/{approval_id}/decline": {
            "parameters": [path("approval_id")],
            "post": op("Decline: nothing is sent", {"200": ("the approval", _APPROVAL)}, "401 403 404 409"),
        },
        "/api/v1/results/{handle}": {
            "parameters": [path("handle")],
            "get": op(
                "A window of a stored result, only in the caller's conversation that made it",
                {"200": ("the window", CALL_RESULT)},
                "401 404 422",
                params=[
                    query("offset", offset),
                    query("length", {"type": "integer", "minimum": 1}),
                    query("conversation", _CONVERSATION),
                ],
            ),
        },
        "/api/v1/audit": {
            "get": op(
                "The audit log, newest first (owner, admin)",
                {"200": ("the events", array(_AUDIT))},
                "401 403 422",
                params=[query("action", STR), query("actor", STR)],
            )
        },
        "/api/v1/alerts": {
            "get": op(
                "Alerts, newest first, open and cleared (`cleared_at` is null while one is open)",
                {"200": ("the alerts", array(_ALERT))},
                "401 422",
                params=[query("open", enum("true", "false"))],
            )
        },
    }
