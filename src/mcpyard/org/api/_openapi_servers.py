"""The server and tool operations of the organization's OpenAPI document: registering, policies (API-6)."""

from __future__ import annotations

from mcpyard.org.api._openapi_parts import ANY_OBJ, BOOL, NSTR, STR, S, array, enum, obj, op, path
from mcpyard.org.services import MAX_CC_FIELD, MAX_SCOPE, MAX_SCOPES, MAX_SERVER_NAME, NAME_PATTERN

__all__ = ["servers_paths"]

_POLICY = enum("run_freely", "ask_first", "off")
_DEFINITION = obj(
    ["description", "title", "input_schema", "annotations"],
    description=STR,
    title=NSTR,
    input_schema=ANY_OBJ,
    annotations=ANY_OBJ,
    refused=STR,
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
_TOOL = obj(
    _TOOL_FIELDS,
    id=STR,
    server_id=STR,
    name=STR,
    tool=STR,
    title=NSTR,
    description=STR,
    input_schema=ANY_OBJ,
    annotations=ANY_OBJ,
    definition_hash=STR,
    state=enum("active", "changed", "removed"),
    policy=_POLICY,
    reviewed_hash=NSTR,
)
_TOOL_DETAIL = {
    **_TOOL,
    "properties": {**_TOOL["properties"], "reviewed_definition": _DEFINITION, "definition": _DEFINITION},
}
"""One tool: when it changed since it was reviewed, the reviewed definition beside the current one."""
_SERVER = obj(
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
    id=STR,
    name=STR,
    url=STR,
    state=enum("connecting", "connected", "failed"),
    last_error=NSTR,
    protocol_version=NSTR,
    has_token=BOOL,
    has_client_credentials=BOOL,
    client_id=NSTR,
    issuer=NSTR,
    created_at=STR,
    refreshed_at=NSTR,
    tools={"type": "array", "items": _TOOL},
)
_EDITED = {
    **_SERVER,
    "required": [*_SERVER["required"], "credentials_dropped"],
    "properties": {
        **_SERVER["properties"],
        "credentials_dropped": {
            "type": "array",
            "items": enum("bearer_token", "client_credentials"),
            "description": "the stored credential dropped because the URL moved to another origin (a credential is "
            "sent only to the origin it was entered for); give it again in the same request to keep one",
        },
    },
}
"""A server as an edit answers it: which credential the edit dropped."""
_SELECTION = obj(["kind", "id", "name"], kind=enum("assistant", "teammate"), id=STR, name=STR)
_SERVER_NAME: S = {"type": "string", "pattern": NAME_PATTERN, "minLength": 1, "maxLength": MAX_SERVER_NAME}
_URL: S = {"type": "string", "minLength": 1}
_BEARER: S = {"type": "string", "minLength": 1, "pattern": "^[^\\r\\n]+$"}
_CC_LINE: S = {"type": "string", "minLength": 1, "maxLength": MAX_CC_FIELD, "pattern": "^[^\\r\\n]+$"}
_CLIENT_CREDENTIALS: S = {
    **obj(
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
_NCLIENT_CREDENTIALS: S = {"oneOf": [{"type": "null"}, _CLIENT_CREDENTIALS]}


def servers_paths() -> S:
    server_body = obj(
        ["name", "url"], name=_SERVER_NAME, url=_URL, bearer_token=_BEARER, client_credentials=_NCLIENT_CREDENTIALS
    )
    edit = {
        **obj(
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
            "get": op("The registered servers", {"200": ("every server", array(_SERVER))}, "401"),
            "post": op(
                "Register a server (owner, admin): URL checked (NET-1), connected, tools discovered, each off; "
                "with a bearer token or client credentials (not both)",
                {"201": ("the server, never its token or client secret", _SERVER)},
                "400 401 403 409 413 422",
                body=server_body,
            ),
        },
        "/api/v1/servers/{server_id}": {
            "parameters": [path("server_id")],
            "get": op("One server", {"200": ("the server", _SERVER)}, "401 404"),
            "patch": op(
                "Edit a server's name, URL, token or client credentials (owner, admin; `bearer_token: null` or "
                "`client_credentials: null` removes it; a URL moved to another origin drops the stored credential "
                "unless a new one is given with it)",
                {"200": ("the server, connected again", _EDITED)},
                "400 401 403 404 409 413 422",
                body=edit,
            ),
            "delete": op(
                "Delete a server: its tools stop at once (owner, admin)", {"204": ("deleted", None)}, "401 403 404"
            ),
        },
        "/api/v1/servers/{server_id}/refresh": {
            "parameters": [path("server_id")],
            "post": op(
                "Discover the tools again (owner, admin); 409 `calls_in_flight` while a changed server's calls end",
                {"200": ("the server", _SERVER)},
                "401 403 404 409",
            ),
        },
        "/api/v1/servers/{server_id}/selections": {
            "parameters": [path("server_id")],
            "get": op(
                "What deleting the server would affect: assistants using its tools, teammates it is allowed to",
                {"200": ("by kind, then name", array(_SELECTION))},
                "401 403 404",
            ),
        },
        "/api/v1/tools": {"get": op("Every tool with its state and policy", {"200": ("", array(_TOOL))}, "401")},
        "/api/v1/tools/{tool_id}": {
            "parameters": [path("tool_id")],
            "get": op("One tool", {"200": ("the tool", _TOOL_DETAIL)}, "401 404"),
        },
        "/api/v1/tools/{tool_id}/policy": {
            "parameters": [path("tool_id")],
            "put": op(
                "Set the policy for the definition reviewed (owner, admin): 409 `stale_hash` unless it is the current",
                {"200": ("the tool", _TOOL_DETAIL)},
                "400 401 403 404 409 413 422",
                body=obj(["policy", "definition_hash"], policy=_POLICY, definition_hash=STR),
            ),
        },
    }
