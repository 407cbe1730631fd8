"""The servers and tools in the JSON API: registering, editing, refreshing, deleting, policies (API-6).

Like every operation, each parses, authorizes and calls a service function; the rules live in
the service modules. A body that is not a JSON object of the fields its operation names, or
that holds unusable text, is refused before anything runs (`_bodies.py`); an operation that
takes no body refuses one with fields, so nothing sent is ever dropped unseen.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.org import services
from mcpyard.org._bodies import json_body
from mcpyard.org._caller import Caller
from mcpyard.org.api._operations import Operations, running
from mcpyard.org.api._schema import ANY_OBJ, BOOL, NSTR, STR, S, array, enum, obj, op
from mcpyard.org.services import MAX_CC_FIELD, MAX_SCOPE, MAX_SCOPES, MAX_SERVER_NAME, NAME_PATTERN

__all__ = ["API", "BODIES"]

API = Operations()
SERVER_FIELDS = ("name", "url", "bearer_token", "client_credentials")
POLICY_FIELDS = ("policy", "definition_hash")

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
BODIES = {
    "definition": _DEFINITION,
    "tool": _TOOL,
    "tool_detail": _TOOL_DETAIL,
    "server": _SERVER,
    "edited_server": _EDITED,
    "selection": _SELECTION,
}
"""The bodies these operations answer with, by the name the views test pairs with a service's view."""
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

_SERVER_BODY = obj(
    ["name", "url"], name=_SERVER_NAME, url=_URL, bearer_token=_BEARER, client_credentials=_NCLIENT_CREDENTIALS
)
_SERVER_EDIT: S = {
    **obj(
        [],
        name=_SERVER_NAME,
        url=_URL,
        bearer_token={"oneOf": [{"type": "null"}, _BEARER]},
        client_credentials=_NCLIENT_CREDENTIALS,
    ),
    "additionalProperties": False,
}


@API.member("GET", "/api/v1/servers", op("The registered servers", {"200": ("every server", array(_SERVER))}, "401"))
async def list_servers(request: Request, caller: Caller) -> Response:
    return JSONResponse(await services.list_servers(running(request).service, caller))


@API.member(
    "POST",
    "/api/v1/servers",
    op(
        "Register a server (owner, admin): URL checked (NET-1), connected, tools discovered, each off; "
        "with a bearer token or client credentials (not both)",
        {"201": ("the server, never its token or client secret", _SERVER)},
        "400 401 403 409 413 422",
        body=_SERVER_BODY,
    ),
)
async def register_server(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=SERVER_FIELDS)
    created = await services.register_server(
        running(request).service,
        caller,
        body.get("name"),
        body.get("url"),
        body.get("bearer_token"),
        body.get("client_credentials"),
    )
    return JSONResponse(created, status_code=201)


@API.member("GET", "/api/v1/servers/{server_id}", op("One server", {"200": ("the server", _SERVER)}, "401 404"))
async def get_server(request: Request, caller: Caller) -> Response:
    return JSONResponse(await services.get_server(running(request).service, caller, request.path_params["server_id"]))


@API.member(
    "PATCH",
    "/api/v1/servers/{server_id}",
    op(
        "Edit a server's name, URL, token or client credentials (owner, admin; `bearer_token: null` or "
        "`client_credentials: null` removes it; a URL moved to another origin drops the stored credential "
        "unless a new one is given with it)",
        {"200": ("the server, connected again", _EDITED)},
        "400 401 403 404 409 413 422",
        body=_SERVER_EDIT,
    ),
)
async def update_server(request: Request, caller: Caller) -> Response:
    changes = await json_body(request, fields=SERVER_FIELDS)
    server_id = request.path_params["server_id"]
    return JSONResponse(await services.update_server(running(request).service, caller, server_id, changes))


@API.member(
    "DELETE",
    "/api/v1/servers/{server_id}",
    op("Delete a server: its tools stop at once (owner, admin)", {"204": ("deleted", None)}, "401 403 404"),
)
async def delete_server(request: Request, caller: Caller) -> Response:
    await services.delete_server(running(request).service, caller, request.path_params["server_id"])
    return Response(status_code=204)


@API.member(
    "POST",
    "/api/v1/servers/{server_id}/refresh",
    op(
        "Discover the tools again (owner, admin); 409 `calls_in_flight` while a changed server's calls end",
        {"200": ("the server", _SERVER)},
        "401 403 404 409",
    ),
)
async def refresh_server(request: Request, caller: Caller) -> Response:
    await json_body(request, fields=())
    server_id = request.path_params["server_id"]
    return JSONResponse(await services.refresh_server(running(request).service, caller, server_id))


@API.member(
    "GET",
    "/api/v1/servers/{server_id}/selections",
    op(
        "What deleting the server would affect: assistants using its tools, teammates it is allowed to",
        {"200": ("by kind, then name", array(_SELECTION))},
        "401 403 404",
    ),
)
async def server_selections(request: Request, caller: Caller) -> Response:
    server_id = request.path_params["server_id"]
    return JSONResponse(await services.server_selections(running(request).service, caller, server_id))


@API.member("GET", "/api/v1/tools", op("Every tool with its state and policy", {"200": ("", array(_TOOL))}, "401"))
async def list_tools(request: Request, caller: Caller) -> Response:
    return JSONResponse(await services.list_tools(running(request).service, caller))


@API.member("GET", "/api/v1/tools/{tool_id}", op("One tool", {"200": ("the tool", _TOOL_DETAIL)}, "401 404"))
async def get_tool(request: Request, caller: Caller) -> Response:
    return JSONResponse(await services.get_tool(running(request).service, caller, request.path_params["tool_id"]))


@API.member(
    "PUT",
    "/api/v1/tools/{tool_id}/policy",
    op(
        "Set the policy for the definition reviewed (owner, admin): 409 `stale_hash` unless it is the current",
        {"200": ("the tool", _TOOL_DETAIL)},
        "400 401 403 404 409 413 422",
        body=obj(["policy", "definition_hash"], policy=_POLICY, definition_hash=STR),
    ),
)
async def set_policy(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=POLICY_FIELDS)
    svc, tool_id = running(request).service, request.path_params["tool_id"]
    return JSONResponse(
        await services.set_policy(svc, caller, tool_id, body.get("policy"), body.get("definition_hash"))
    )
