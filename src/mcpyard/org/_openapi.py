"""The OpenAPI document of the organization's JSON API, served at `/api/v1/openapi.json` (API-6).

Written out by hand from the contract, so that a change to the API is a change here too: the
API tests check every response the service gives against it.
"""

from __future__ import annotations

from typing import Any

from mcpyard._version import __version__

__all__ = ["openapi_document"]

_S = dict[str, Any]


def _obj(required: list[str], **properties: _S) -> _S:
    return {"type": "object", "required": required, "properties": properties}


_STR: _S = {"type": "string"}
_NSTR: _S = {"type": ["string", "null"]}
_INT: _S = {"type": "integer"}
_BOOL: _S = {"type": "boolean"}
_ANY_OBJ: _S = {"type": "object"}
_ERROR = _obj(["error"], error=_obj(["code", "message"], code=_STR, message=_STR))
_ME = _obj(
    ["id", "email", "role", "org_id"], id=_STR, email=_STR, role={"enum": ["owner", "admin", "member"]}, org_id=_STR
)
_TOOL = _obj(
    [
        "id",
        "server_id",
        "name",
        "tool",
        "description",
        "input_schema",
        "annotations",
        "definition_hash",
        "state",
        "policy",
        "reviewed_hash",
    ],
    id=_STR,
    server_id=_STR,
    name=_STR,
    tool=_STR,
    title=_NSTR,
    description=_STR,
    input_schema=_ANY_OBJ,
    annotations=_ANY_OBJ,
    definition_hash=_STR,
    state={"enum": ["active", "changed", "removed"]},
    policy={"enum": ["run_freely", "ask_first", "off"]},
    reviewed_hash=_NSTR,
    reviewed_definition=_ANY_OBJ,
    definition=_ANY_OBJ,
)
_SERVER = _obj(
    ["id", "name", "url", "state", "has_token", "tools"],
    id=_STR,
    name=_STR,
    url=_STR,
    state=_STR,
    last_error=_NSTR,
    protocol_version=_NSTR,
    has_token=_BOOL,
    created_at=_STR,
    refreshed_at=_NSTR,
    tools={"type": "array", "items": _TOOL},
)
_CALL_RESULT = _obj(
    ["ok", "text", "content", "cached", "handle", "error", "call_id"],
    ok=_BOOL,
    text=_STR,
    content={"type": "array", "items": _ANY_OBJ},
    structured={},
    cached=_BOOL,
    handle=_NSTR,
    error={"oneOf": [{"type": "null"}, _obj(["code", "message"], code=_STR, message=_STR)]},
    tool=_NSTR,
    server=_NSTR,
    call_id=_NSTR,
)
_PARKED = _obj(["approval"], approval=_obj(["id", "status"], id=_STR, status={"const": "pending"}))
_APPROVAL = _obj(
    ["id", "status", "tool", "arguments", "reason", "created_at"],
    id=_STR,
    status={"enum": ["pending", "running", "done", "failed", "declined"]},
    tool=_STR,
    tool_id=_STR,
    member_id=_STR,
    arguments=_STR,
    reason=_STR,
    conversation=_STR,
    created_at=_STR,
    decided_by=_NSTR,
    decided_at=_NSTR,
    result={"oneOf": [{"type": "null"}, _ANY_OBJ]},
)
_AUDIT = _obj(
    ["id", "at", "actor", "action", "target", "old", "new"],
    id=_STR,
    at=_STR,
    actor=_STR,
    action=_STR,
    target=_STR,
    old={},
    new={},
)
_ALERT = _obj(
    ["id", "server_id", "assistant_id", "kind", "message", "raised_at", "cleared_at"],
    id=_STR,
    server_id=_NSTR,
    assistant_id=_NSTR,
    kind=_STR,
    message=_STR,
    raised_at=_STR,
    cleared_at=_NSTR,
)
_MEMBER = _obj(["id", "email", "role", "org_id"], id=_STR, email=_STR, role=_STR, org_id=_STR)
_TOKEN = _obj(["token"], token=_STR, id=_STR)


def _json(schema: _S) -> _S:
    return {"content": {"application/json": {"schema": schema}}}


def _answers(ok: str, schema: _S, *more: int) -> _S:
    answers: _S = {ok: {"description": "done", **_json(schema)}}
    for status in (400, 401, 403, 404, 409, 413, 422, *more):
        answers[str(status)] = {"description": "refused", **_json(_ERROR)}
    return answers


def _op(
    summary: str, ok: str, schema: _S, *, body: _S | None = None, params: list[_S] | None = None, public: bool = False
) -> _S:
    operation: _S = {"summary": summary, "responses": _answers(ok, schema)}
    if body is not None:
        operation["requestBody"] = {"required": True, **_json(body)}
    if params:
        operation["parameters"] = params
    if public:
        operation["security"] = []
    return operation


def _path(name: str) -> _S:
    return {"name": name, "in": "path", "required": True, "schema": _STR}


def _query(name: str, schema: _S) -> _S:
    return {"name": name, "in": "query", "required": False, "schema": schema}


def _array(schema: _S) -> _S:
    return {"type": "array", "items": schema}


def openapi_document() -> dict[str, Any]:
    """The document, as a fresh dictionary."""
    call_body = _obj(["tool"], tool=_STR, arguments=_ANY_OBJ, conversation=_STR)
    server_body = _obj(["name", "url"], name=_STR, url=_STR, bearer_token=_STR)
    policy_body = _obj(
        ["policy", "definition_hash"], policy={"enum": ["run_freely", "ask_first", "off"]}, definition_hash=_STR
    )
    call_answers = _answers("200", _CALL_RESULT)
    call_answers["202"] = {"description": "parked for approval", **_json(_PARKED)}
    paths: _S = {
        "/api/v1/login": {
            "post": _op(
                "A new API token for the member with this email and password",
                "200",
                _TOKEN,
                body=_obj(["email", "password"], email=_STR, password=_STR),
                public=True,
            )
        },
        "/api/v1/me": {"get": _op("Who the caller is", "200", _ME)},
        "/api/v1/members": {
            "post": _op(
                "Add a member (owner, admin)",
                "201",
                _MEMBER,
                body=_obj(["email", "role", "password"], email=_STR, role=_STR, password=_STR),
            )
        },
        "/api/v1/tokens": {"post": _op("A new API token for the caller, shown once", "201", _TOKEN)},
        "/api/v1/tokens/{token_id}": {
            "delete": {**_op("Revoke one of the caller's tokens", "204", {}), "parameters": [_path("token_id")]}
        },
        "/api/v1/servers": {
            "get": _op("The registered servers", "200", _array(_SERVER)),
            "post": _op(
                "Register a server (owner, admin): URL checked, connected, tools discovered, each off",
                "201",
                _SERVER,
                body=server_body,
            ),
        },
        "/api/v1/servers/{server_id}": {
            "parameters": [_path("server_id")],
            "get": _op("One server", "200", _SERVER),
            "patch": _op(
                "Edit a server's name, URL or token (owner, admin)",
                "200",
                _SERVER,
                body=_obj([], name=_STR, url=_STR, bearer_token=_NSTR),
            ),
            "delete": _op("Delete a server: its tools stop at once (owner, admin)", "204", {}),
        },
        "/api/v1/servers/{server_id}/refresh": {
            "parameters": [_path("server_id")],
            "post": _op("Discover the tools again (owner, admin)", "200", _SERVER),
        },
        "/api/v1/tools": {"get": _op("Every tool with its state and policy", "200", _array(_TOOL))},
        "/api/v1/tools/{tool_id}": {"parameters": [_path("tool_id")], "get": _op("One tool", "200", _TOOL)},
        "/api/v1/tools/{tool_id}/policy": {
            "parameters": [_path("tool_id")],
            "put": _op("Set the policy for the reviewed definition (owner, admin)", "200", _TOOL, body=policy_body),
        },
        "/api/v1/calls": {
            "post": {
                "summary": "Call a tool",
                "requestBody": {"required": True, **_json(call_body)},
                "responses": call_answers,
            }
        },
        "/api/v1/approvals": {
            "get": _op(
                "The inbox",
                "200",
                _array(_APPROVAL),
                params=[_query("status", {"enum": ["pending", "running", "done", "failed", "declined"]})],
            )
        },
        "/api/v1/approvals/{approval_id}/approve": {
            "parameters": [_path("approval_id")],
            "post": _op("Approve: the saved call runs once", "200", _CALL_RESULT),
        },
        "/api/v1/approvals/{approval_id}/decline": {
            "parameters": [_path("approval_id")],
            "post": _op("Decline: nothing is sent", "200", _APPROVAL),
        },
        "/api/v1/results/{handle}": {
            "parameters": [_path("handle")],
            "get": _op(
                "A window of a stored result, in the conversation that made it",
                "200",
                _CALL_RESULT,
                params=[
                    _query("offset", {"type": "integer", "minimum": 0}),
                    _query("length", {"type": "integer", "minimum": 1}),
                    _query("conversation", _STR),
                ],
            ),
        },
        "/api/v1/audit": {
            "get": _op(
                "The audit log (owner, admin)",
                "200",
                _array(_AUDIT),
                params=[_query("action", _STR), _query("actor", _STR)],
            )
        },
        "/api/v1/alerts": {
            "get": _op(
                "Alerts, open and cleared", "200", _array(_ALERT), params=[_query("open", {"enum": ["true", "false"]})]
            )
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "mcpyard organization service", "version": __version__},
        "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        "security": [{"token": []}],
        "paths": paths,
    }
