"""Tool search in the JSON API: when the organization's teammates are offered `find_tools` in place of their tools
(MOD-4). Any member reads it; owners and admins set it."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.config import TOOL_SEARCH_MODES
from mcpyard.org._bodies import json_body
from mcpyard.org._caller import Caller
from mcpyard.org.api._operations import Operations, running
from mcpyard.org.api._schema import enum, obj, op
from mcpyard.org.services import (
    MAX_TOKEN_BUDGET,
    MAX_TOOL_BUDGET,
    TOOL_SEARCH_FIELDS,
    get_tool_search,
    set_tool_search,
)

__all__ = ["API", "BODIES"]

API = Operations()

_BUDGETS = {
    "max_tools": {"type": "integer", "minimum": 0, "maximum": MAX_TOOL_BUDGET},
    "max_tokens": {"type": "integer", "minimum": 0, "maximum": MAX_TOKEN_BUDGET},
}
_TOOL_SEARCH = obj(list(TOOL_SEARCH_FIELDS), mode=enum(*TOOL_SEARCH_MODES), **_BUDGETS)
_TOOL_SEARCH_BODY = obj([], mode=enum(*TOOL_SEARCH_MODES), **_BUDGETS)
BODIES = {"tool_search": _TOOL_SEARCH}
"""The bodies these operations answer with, by the name the views test pairs with a service's view."""


@API.member(
    "GET",
    "/api/v1/tool-search",
    op(
        "When teammates' models are offered `find_tools` in place of the tools they may use: `auto` once those"
        " tools are more than `max_tools` or their definitions more than `max_tokens` (at 4 characters a token),"
        " `always`, or `off`",
        {"200": ("the setting", _TOOL_SEARCH)},
        "401",
    ),
)
async def tool_search(request: Request, caller: Caller) -> Response:
    return JSONResponse(await get_tool_search(running(request).service, caller))


@API.member(
    "PUT",
    "/api/v1/tool-search",
    op(
        "Replace the tool search setting (owner, admin): a field left out takes its default (`auto`, 40 tools,"
        " 10000 tokens); audited as `tool_search.set`. Turns that start afterwards use it; the tools a"
        " conversation found stay offered in its later turns",
        {"200": ("the setting as it now is", _TOOL_SEARCH)},
        "400 401 403 413 422",
        body=_TOOL_SEARCH_BODY,
    ),
)
async def put_tool_search(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=TOOL_SEARCH_FIELDS)
    return JSONResponse(await set_tool_search(running(request).service, caller, body))
