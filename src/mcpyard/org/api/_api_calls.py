"""Calls in the JSON API: a member's call, the inbox's approvals, stored results, the audit log, alerts (API-6)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.errors import Invalid
from mcpyard.org import services
from mcpyard.org._bodies import json_body, query_text
from mcpyard.org._caller import ADMINS, Caller, require
from mcpyard.org.api._operations import Operations, answered, running
from mcpyard.org.api._schema import ANY_OBJ, BOOL, NOBJ, NSTR, STR, S, array, enum, obj, op, query
from mcpyard.org.services import MAX_CONVERSATION, MAX_TOOL_NAME, list_alerts, list_audit

__all__ = ["API", "BODIES", "CALL_RESULT"]

API = Operations()
APPROVAL_STATES = ("pending", "running", "done", "failed", "declined")
CALL_FIELDS = ("tool", "arguments", "conversation")

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
_PENDING = obj(["id", "status"], id=STR, status={"const": "pending"})
"""An approval or a question that waits for a person."""
_RUNNING_APPROVAL = obj(["id", "status"], id=STR, status={"const": "running"})
_PARKED = obj(["approval"], approval=_PENDING)
_LONG = obj(["call_id", "task"], call_id=STR, task=_RUNNING_APPROVAL)
_TASK_CALL = obj(
    [
        "call_id",
        "status",
        "tool",
        "server",
        "message",
        "member_id",
        "turn_id",
        "created_at",
        "updated_at",
        "finished_at",
    ],
    call_id=STR,
    status=enum("running", "done"),
    tool=STR,
    server=STR,
    message=STR,
    member_id=STR,
    turn_id=NSTR,
    created_at=STR,
    updated_at=STR,
    finished_at=NSTR,
)
_ASKING = obj(["call_id", "question"], call_id=STR, question=_PENDING)
_RUNNING = obj(["approval", "question"], approval=_RUNNING_APPROVAL, question={"oneOf": [{"type": "null"}, _PENDING]})
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
        "client",
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
    client=NSTR,
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
BODIES = {
    "call_result": CALL_RESULT,
    "pending": _PENDING,
    "running_approval": _RUNNING_APPROVAL,
    "parked": _PARKED,
    "long_call": _LONG,
    "task_call": _TASK_CALL,
    "asking": _ASKING,
    "running": _RUNNING,
    "approval": _APPROVAL,
    "audit_entry": _AUDIT,
    "alert": _ALERT,
}
"""The bodies these operations answer with, by the name the views test pairs with a service's view."""
_CONVERSATION: S = {"type": "string", "maxLength": MAX_CONVERSATION}

_CALL_BODY = obj(
    ["tool"],
    tool={"type": "string", "minLength": 1, "maxLength": MAX_TOOL_NAME},
    arguments={**ANY_OBJ, "default": {}},
    conversation=_CONVERSATION,
)


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


@API.member(
    "POST",
    "/api/v1/calls",
    op(
        "Call a tool by the name the model sees: refusals are 200 with `ok: false` and the pipeline's code; a call"
        " over one of the organization's limits is 429 `limit_reached` with `Retry-After`, and nothing runs",
        {
            "200": ("the call's result", CALL_RESULT),
            "202": (
                "parked for approval (the saved arguments run once it is approved), or running: its server "
                "asked a question (the call goes on once it is answered; its result comes with the question), or "
                "a long call: its server answered with a task that did not end within 20 s (at once with "
                "`Prefer: respond-async`); read its result once with `GET /api/v1/calls/{call_id}`",
                {"oneOf": [_PARKED, _ASKING, _LONG]},
            ),
        },
        "400 401 403 413 422 429",
        body=_CALL_BODY,
    ),
)
async def call_tool(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=CALL_FIELDS, opaque=("arguments",))
    outcome = await services.call_tool(
        running(request).service,
        caller,
        body.get("tool"),
        body.get("arguments", {}),
        body.get("conversation"),
        respond_async=_prefers_async(request),
    )
    return answered(outcome)


def _prefers_async(request: Request) -> bool:
    """`Prefer: respond-async` (RFC 7240): a long call answers 202 as soon as its server made the task."""
    said = ",".join(request.headers.getlist("prefer"))
    return any(part.split(";")[0].strip().lower() == "respond-async" for part in said.split(","))


@API.member(
    "GET",
    "/api/v1/calls",
    op(
        "Long calls (answered 202 with `task`) running, or ended with their result not read yet: a member's own; "
        "owners and admins see every one",
        {"200": ("the long calls, oldest first", array(_TASK_CALL))},
        "401",
    ),
)
async def list_long_calls(request: Request, caller: Caller) -> Response:
    return JSONResponse(await services.list_task_calls(running(request).service, caller))


@API.member(
    "GET",
    "/api/v1/calls/{call_id}",
    op(
        "A long call of the caller's: 202 while its task runs (on whichever replica follows it); once it ended, its "
        "result, given once (a second read is 410 `already_read`)",
        {
            "200": ("the call's result", CALL_RESULT),
            "202": ("still running: its latest status", _TASK_CALL),
        },
        "401 404 410",
    ),
)
async def read_long_call(request: Request, caller: Caller) -> Response:
    return answered(await services.read_task_call(running(request).service, caller, request.path_params["call_id"]))


@API.member(
    "GET",
    "/api/v1/approvals",
    op(
        "The inbox: a member's own calls; owners and admins see every one",
        {"200": ("the approvals, oldest first", array(_APPROVAL))},
        "401 422",
        params=[query("status", enum(*APPROVAL_STATES))],
    ),
)
async def list_approvals(request: Request, caller: Caller) -> Response:
    status = _choice(request, "status", APPROVAL_STATES)
    return JSONResponse(await services.list_approvals(running(request).service, caller, status))


@API.member(
    "POST",
    "/api/v1/approvals/{approval_id}/approve",
    op(
        "Approve: policy, definition and access checked again, then the saved call runs once",
        {
            "200": ("the result of that one run", CALL_RESULT),
            "202": ("running: its server asked a question; its result becomes the approval's", _RUNNING),
        },
        "401 403 404 409",
    ),
)
async def approve(request: Request, caller: Caller) -> Response:
    await json_body(request, fields=())
    return answered(await services.approve(running(request).service, caller, request.path_params["approval_id"]))


@API.member(
    "POST",
    "/api/v1/approvals/{approval_id}/decline",
    op("Decline: nothing is sent", {"200": ("the approval", _APPROVAL)}, "401 403 404 409"),
)
async def decline(request: Request, caller: Caller) -> Response:
    await json_body(request, fields=())
    return JSONResponse(await services.decline(running(request).service, caller, request.path_params["approval_id"]))


@API.member(
    "GET",
    "/api/v1/results/{handle}",
    op(
        "A window of a stored result, only in the caller's conversation that made it",
        {"200": ("the window", CALL_RESULT)},
        "401 404 422",
        params=[
            query("offset", {"type": "integer", "minimum": 0}),
            query("length", {"type": "integer", "minimum": 1}),
            query("conversation", _CONVERSATION),
        ],
    ),
)
async def read_result(request: Request, caller: Caller) -> Response:
    offset = _int(request, "offset", 0) or 0
    length = _int(request, "length", None)
    if length == 0:
        raise Invalid("invalid_request", "`length` must be at least 1")
    conversation = services.checked_conversation(query_text(request, "conversation") or None)
    handle = request.path_params["handle"]
    window = await services.read_result(running(request).service, caller, handle, offset, length, conversation)
    return JSONResponse(window)


@API.member(
    "GET",
    "/api/v1/audit",
    op(
        "The audit log, newest first (owner, admin)",
        {"200": ("the events", array(_AUDIT))},
        "401 403 422",
        params=[query("action", STR), query("actor", STR)],
    ),
)
async def audit(request: Request, caller: Caller) -> Response:
    require(caller, *ADMINS)
    action, actor = query_text(request, "action"), query_text(request, "actor")
    async with running(request).service.db.begin() as session:
        rows = await list_audit(session, caller.org_id, action=action, actor=actor)
    return JSONResponse(rows)


@API.member(
    "GET",
    "/api/v1/alerts",
    op(
        "Alerts, newest first, open and cleared (`cleared_at` is null while one is open)",
        {"200": ("the alerts", array(_ALERT))},
        "401 422",
        params=[query("open", enum("true", "false"))],
    ),
)
async def alerts(request: Request, caller: Caller) -> Response:
    open_only = _choice(request, "open", ("true", "false"))
    async with running(request).service.db.begin() as session:
        rows = await list_alerts(session, caller.org_id, open_only=open_only == "true")
    return JSONResponse(rows)
