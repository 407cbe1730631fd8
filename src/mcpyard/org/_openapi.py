"""The OpenAPI document of the organization's JSON API, served at `/api/v1/openapi.json` (API-6).

Written out by hand from the contract, so that a change to the API is a change here too. Each
operation lists exactly the statuses it answers with; what a request may hold is what the
service accepts (the bounds come from the modules that enforce them). The tests send generated
requests to every operation (schemathesis) and check each answer against this document.
"""

from __future__ import annotations

from typing import Any

from mcpyard._version import __version__
from mcpyard.org._api import APPROVAL_STATES
from mcpyard.org._auth import COOKIE
from mcpyard.org._inbox import MAX_CONVERSATION, MAX_TOOL_NAME
from mcpyard.org._openapi_turns import turn_paths
from mcpyard.org._passwords import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH
from mcpyard.org._registry import MAX_CC_FIELD, MAX_NAME, MAX_SCOPE, MAX_SCOPES, NAME_PATTERN

__all__ = ["openapi_document"]

_S = dict[str, Any]

DESCRIPTION = (
    "The organization service's JSON API. Programs send `Authorization: Bearer <API token>`; the web pages use a "
    "session cookie instead, and every state-changing request they make carries the page's `X-CSRF-Token`. "
    'Errors are `{"error": {"code", "message"}}`. Text in a path, a query parameter or a body (tool arguments '
    "aside) must not hold a NUL character (U+0000): in a path it names nothing (404), elsewhere it is refused (422)."
)


def _obj(required: list[str], **properties: _S) -> _S:
    return {"type": "object", "required": required, "properties": properties}


def _enum(*values: str) -> _S:
    return {"type": "string", "enum": list(values)}


_STR: _S = {"type": "string"}
_NSTR: _S = {"type": ["string", "null"]}
_BOOL: _S = {"type": "boolean"}
_ANY_OBJ: _S = {"type": "object"}
_NOBJ: _S = {"type": ["object", "null"]}
_ROLE = _enum("owner", "admin", "member")
_POLICY = _enum("run_freely", "ask_first", "off")
_ERROR = _obj(["error"], error=_obj(["code", "message"], code=_STR, message=_STR))
_ME = _obj(["id", "email", "role", "org_id"], id=_STR, email=_STR, role=_ROLE, org_id=_STR)
_DEFINITION = _obj(
    ["description", "title", "input_schema", "annotations"],
    description=_STR,
    title=_NSTR,
    input_schema=_ANY_OBJ,
    annotations=_ANY_OBJ,
    refused=_STR,
)
_TOOL_FIELDS = [
    "id",
    "server_id",
    "name",
    "tool",
    "description",
    "title",
    "input_schema",
    "annotations",
    "definition_hash",
    "state",
    "policy",
    "reviewed_hash",
]
_TOOL = _obj(
    _TOOL_FIELDS,
    id=_STR,
    server_id=_STR,
    name=_STR,
    tool=_STR,
    title=_NSTR,
    description=_STR,
    input_schema=_ANY_OBJ,
    annotations=_ANY_OBJ,
    definition_hash=_STR,
    state=_enum("active", "changed", "removed"),
    policy=_POLICY,
    reviewed_hash=_NSTR,
)
_TOOL_DETAIL = {
    **_TOOL,
    "properties": {**_TOOL["properties"], "reviewed_definition": _DEFINITION, "definition": _DEFINITION},
}
"""One tool: when it changed since it was reviewed, the reviewed definition beside the current one."""
_SERVER = _obj(
    [
        "id",
        "name",
        "url",
        "state",
        "last_error",
        "protocol_version",
        "has_token",
        "has_client_credentials",
        "client_id",
        "issuer",
        "created_at",
        "refreshed_at",
        "tools",
    ],
    id=_STR,
    name=_STR,
    url=_STR,
    state=_enum("connecting", "connected", "failed"),
    last_error=_NSTR,
    protocol_version=_NSTR,
    has_token=_BOOL,
    has_client_credentials=_BOOL,
    client_id=_NSTR,
    issuer=_NSTR,
    created_at=_STR,
    refreshed_at=_NSTR,
    tools={"type": "array", "items": _TOOL},
)
_CALL_RESULT = _obj(
    ["ok", "text", "content", "structured", "cached", "handle", "error", "tool", "server", "call_id"],
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
    id=_STR,
    status=_enum(*APPROVAL_STATES),
    tool=_STR,
    tool_id=_STR,
    member_id=_STR,
    arguments=_STR,
    reason=_STR,
    conversation=_STR,
    created_at=_STR,
    decided_by=_NSTR,
    decided_at=_NSTR,
    result={"oneOf": [{"type": "null"}, _CALL_RESULT]},
)
_AUDIT = _obj(
    ["id", "at", "actor", "action", "target", "old", "new"],
    id=_STR,
    at=_STR,
    actor=_STR,
    action=_STR,
    target=_STR,
    old=_NOBJ,
    new=_NOBJ,
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
_MEMBER = _obj(["id", "email", "role", "org_id"], id=_STR, email=_STR, role=_ROLE, org_id=_STR)
_LISTED_MEMBER = _obj(["id", "email", "role", "created_at"], id=_STR, email=_STR, role=_ROLE, created_at=_STR)
_LISTED_TOKEN = _obj(
    ["id", "label", "created_at", "last_used_at"], id=_STR, label=_STR, created_at=_STR, last_used_at=_NSTR
)
_SELECTION = _obj(["kind", "id", "name"], kind=_enum("assistant", "teammate"), id=_STR, name=_STR)
_PASSWORD: _S = {"type": "string", "minLength": MIN_PASSWORD_LENGTH, "maxLength": MAX_PASSWORD_LENGTH}
_CREDENTIALS = _obj(["email", "password"], email=_STR, password=_STR)
_SERVER_NAME: _S = {"type": "string", "pattern": NAME_PATTERN, "minLength": 1, "maxLength": MAX_NAME}
_URL: _S = {"type": "string", "minLength": 1}
_BEARER: _S = {"type": "string", "minLength": 1, "pattern": "^[^\\r\\n]+$"}
_CONVERSATION: _S = {"type": "string", "maxLength": MAX_CONVERSATION}
_CC_LINE: _S = {"type": "string", "minLength": 1, "maxLength": MAX_CC_FIELD, "pattern": "^[^\\r\\n]+$"}
_CLIENT_CREDENTIALS: _S = {
    **_obj(
        ["client_id", "client_secret", "issuer"],
        client_id=_CC_LINE,
        client_secret=_CC_LINE,
        issuer={**_CC_LINE, "description": "the authorization server's issuer URL, checked like a server's (NET-1)"},
        scopes={
            "type": ["array", "null"],
            "maxItems": MAX_SCOPES,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_SCOPE, "pattern": "^[^\\s]+$"},
        },
    ),
    "additionalProperties": False,
    "description": "An OAuth client-credentials grant (not with bearer_token); the secret is sealed, never returned",
}
_NCLIENT_CREDENTIALS: _S = {"oneOf": [{"type": "null"}, _CLIENT_CREDENTIALS]}

_REASONS = {
    "400": "the body is not a JSON object",
    "401": "no valid API token or session",
    "403": "the caller's role may not do this (or a session's request without its CSRF token)",
    "404": "no such object in the caller's organization",
    "409": "in conflict with the object's state",
    "429": "too many requests: wait the seconds `Retry-After` says",
    "413": "the body is over 1 MiB",
    "415": "the body is not sent as application/json",
    "422": "a field is missing or cannot be used",
}


def _json(schema: _S) -> _S:
    return {"content": {"application/json": {"schema": schema}}}


def _op(
    summary: str,
    answers: dict[str, tuple[str, _S | None]],
    refusals: str,
    *,
    body: _S | None = None,
    body_required: bool = True,
    params: list[_S] | None = None,
    public: bool = False,
) -> _S:
    """An operation: its answers (status → description and schema, None for no body) and the refusal statuses it
    can give (space-separated)."""
    responses: _S = {}
    for status, (description, schema) in answers.items():
        responses[status] = {"description": description, **(_json(schema) if schema is not None else {})}
    for status in refusals.split():
        responses[status] = {"description": _REASONS[status], **_json(_ERROR)}
    operation: _S = {"summary": summary, "responses": responses}
    if body is not None:
        operation["requestBody"] = {"required": body_required, **_json(body)}
    if params:
        operation["parameters"] = params
    if public:
        operation["security"] = []
    return operation


def _path(name: str) -> _S:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}


def _query(name: str, schema: _S) -> _S:
    return {"name": name, "in": "query", "required": False, "schema": schema}


def _array(schema: _S) -> _S:
    return {"type": "array", "items": schema}


def _people() -> _S:
    return {
        "/api/v1/login": {
            "post": _op(
                "A new API token for the member with this email and password",
                {"200": ("the new token, shown once", _obj(["token"], token=_STR))},
                "400 401 413 422 429",
                body=_CREDENTIALS,
                public=True,
            )
        },
        "/api/v1/session": {
            "post": _op(
                "Sign in for the web pages: a session cookie, and its CSRF token in the X-CSRF-Token header",
                {"200": ("signed in", _obj(["member"], member=_MEMBER))},
                "400 401 403 413 415 422 429",
                body=_CREDENTIALS,
                public=True,
            ),
            "delete": _op("Sign out: the session cookie is cleared", {"204": ("signed out", None)}, "401 403"),
        },
        "/api/v1/me": {"get": _op("Who the caller is", {"200": ("the caller", _ME)}, "401")},
        "/api/v1/members": {
            "get": _op(
                "The organization's members, by email", {"200": ("every member", _array(_LISTED_MEMBER))}, "401"
            ),
            "post": _op(
                "Add a member (owner, admin; only an owner adds an owner)",
                {"201": ("the new member", _MEMBER)},
                "400 401 403 413 422",
                body=_obj(["email", "role", "password"], email=_STR, role=_ROLE, password=_PASSWORD),
            ),
        },
        "/api/v1/tokens": {
            "get": _op(
                "The caller's own API tokens not revoked, newest first (never a token or its hash)",
                {"200": ("the tokens", _array(_LISTED_TOKEN))},
                "401",
            ),
            "post": _op(
                "A new API token for the caller, shown once",
                {"201": ("the new token and its id", _obj(["token", "id"], token=_STR, id=_STR))},
                "400 401 403 413 422",
                body=_obj([], label=_STR),
                body_required=False,
            ),
        },
        "/api/v1/tokens/{token_id}": {
            "parameters": [_path("token_id")],
            "delete": _op(
                "Revoke a token: the caller's own (owners and admins: any in the organization)",
                {"204": ("revoked", None)},
                "401 403 404",
            ),
        },
    }


def _servers() -> _S:
    server_body = _obj(
        ["name", "url"], name=_SERVER_NAME, url=_URL, bearer_token=_BEARER, client_credentials=_NCLIENT_CREDENTIALS
    )
    edit = {
        **_obj(
            [],
            name=_SERVER_NAME,
            url=_URL,
            bearer_token={"oneOf": [{"type": "null"}, _BEARER]},
            client_credentials=_NCLIENT_CREDENTIALS,
        )
    }
    edit["additionalProperties"] = False
    return {
        "/api/v1/servers": {
            "get": _op("The registered servers", {"200": ("every server", _array(_SERVER))}, "401"),
            "post": _op(
                "Register a server (owner, admin): URL checked (NET-1), connected, tools discovered, each off; "
                "with a bearer token or client credentials (not both)",
                {"201": ("the server, never its token or client secret", _SERVER)},
                "400 401 403 409 413 422",
                body=server_body,
            ),
        },
        "/api/v1/servers/{server_id}": {
            "parameters": [_path("server_id")],
            "get": _op("One server", {"200": ("the server", _SERVER)}, "401 404"),
            "patch": _op(
                "Edit a server's name, URL, token or client credentials (owner, admin; `bearer_token: null` or "
                "`client_credentials: null` removes it)",
                {"200": ("the server, connected again", _SERVER)},
                "400 401 403 404 409 413 422",
                body=edit,
            ),
            "delete": _op(
                "Delete a server: its tools stop at once (owner, admin)", {"204": ("deleted", None)}, "401 403 404"
            ),
        },
        "/api/v1/servers/{server_id}/refresh": {
            "parameters": [_path("server_id")],
            "post": _op("Discover the tools again (owner, admin)", {"200": ("the server", _SERVER)}, "401 403 404"),
        },
        "/api/v1/servers/{server_id}/selections": {
            "parameters": [_path("server_id")],
            "get": _op(
                "What deleting the server would affect: assistants using its tools, teammates it is allowed to",
                {"200": ("by kind, then name", _array(_SELECTION))},
                "401 403 404",
            ),
        },
        "/api/v1/tools": {"get": _op("Every tool with its state and policy", {"200": ("", _array(_TOOL))}, "401")},
        "/api/v1/tools/{tool_id}": {
            "parameters": [_path("tool_id")],
            "get": _op("One tool", {"200": ("the tool", _TOOL_DETAIL)}, "401 404"),
        },
        "/api/v1/tools/{tool_id}/policy": {
            "parameters": [_path("tool_id")],
            "put": _op(
                "Set the policy for the definition reviewed (owner, admin): 409 `stale_hash` unless it is the current",
                {"200": ("the tool", _TOOL_DETAIL)},
                "400 401 403 404 409 413 422",
                body=_obj(["policy", "definition_hash"], policy=_POLICY, definition_hash=_STR),
            ),
        },
    }


def _calls() -> _S:
    call_body = _obj(
        ["tool"],
        tool={"type": "string", "minLength": 1, "maxLength": MAX_TOOL_NAME},
        arguments={**_ANY_OBJ, "default": {}},
        conversation=_CONVERSATION,
    )
    offset = {"type": "integer", "minimum": 0}
    return {
        "/api/v1/calls": {
            "post": _op(
                "Call a tool by the name the model sees: refusals are 200 with `ok: false` and the pipeline's code",
                {
                    "200": ("the call's result", _CALL_RESULT),
                    "202": ("parked for approval: the saved arguments run once it is approved", _PARKED),
                },
                "400 401 403 413 422",
                body=call_body,
            )
        },
        "/api/v1/approvals": {
            "get": _op(
                "The inbox: a member's own calls; owners and admins see every one",
                {"200": ("the approvals, oldest first", _array(_APPROVAL))},
                "401 422",
                params=[_query("status", _enum(*APPROVAL_STATES))],
            )
        },
        "/api/v1/approvals/{approval_id}/approve": {
            "parameters": [_path("approval_id")],
            "post": _op(
                "Approve: policy, definition and access checked again, then the saved call runs once",
                {"200": ("the result of that one run", _CALL_RESULT)},
                "401 403 404 409",
            ),
        },
        "/api/v1/approvals/{approval_id}/decline": {
            "parameters": [_path("approval_id")],
            "post": _op("Decline: nothing is sent", {"200": ("the approval", _APPROVAL)}, "401 403 404 409"),
        },
        "/api/v1/results/{handle}": {
            "parameters": [_path("handle")],
            "get": _op(
                "A window of a stored result, only in the caller's conversation that made it",
                {"200": ("the window", _CALL_RESULT)},
                "401 404 422",
                params=[
                    _query("offset", offset),
                    _query("length", {"type": "integer", "minimum": 1}),
                    _query("conversation", _CONVERSATION),
                ],
            ),
        },
        "/api/v1/audit": {
            "get": _op(
                "The audit log, newest first (owner, admin)",
                {"200": ("the events", _array(_AUDIT))},
                "401 403 422",
                params=[_query("action", _STR), _query("actor", _STR)],
            )
        },
        "/api/v1/alerts": {
            "get": _op(
                "Alerts, newest first, open and cleared (`cleared_at` is null while one is open)",
                {"200": ("the alerts", _array(_ALERT))},
                "401 422",
                params=[_query("open", _enum("true", "false"))],
            )
        },
    }


def openapi_document() -> dict[str, Any]:
    """The document, as a fresh dictionary."""
    paths: _S = {
        "/api/v1/openapi.json": {
            "get": _op("This document", {"200": ("the OpenAPI document", _ANY_OBJ)}, "", public=True)
        },
        **_people(),
        **_servers(),
        **_calls(),
        **turn_paths(_obj, _enum, _op, _path, _array, (_STR, _NSTR, _BOOL)),
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
