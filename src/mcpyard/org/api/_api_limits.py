"""Limits and usage in the JSON API: the organization's limits on calls, and its calls summed by member, server, tool
or day (ORG-11, API-8). Owners and admins only."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.org._bodies import json_body, query_text
from mcpyard.org._caller import Caller
from mcpyard.org.api._operations import Operations, running
from mcpyard.org.api._schema import STR, S, array, enum, obj, op, query
from mcpyard.org.rules import LIMIT_FIELDS, MAX_PER_DAY, MAX_PER_MINUTE
from mcpyard.org.services import GROUPS, get_limits, set_limits, usage

__all__ = ["API", "BODIES"]

API = Operations()


def _limit(name: str) -> S:
    top = MAX_PER_MINUTE if name.endswith("_per_minute") else MAX_PER_DAY
    return {"type": ["integer", "null"], "minimum": 0, "maximum": top}


_LIMITS = obj(list(LIMIT_FIELDS), **{name: _limit(name) for name in LIMIT_FIELDS})
_LIMITS_BODY = obj([], **{name: _limit(name) for name in LIMIT_FIELDS})
_USAGE = obj(
    ["key", "calls", "errors", "seconds", "bytes"],
    key=STR,
    calls={"type": "integer", "minimum": 0},
    errors={"type": "integer", "minimum": 0},
    seconds={"type": "number", "minimum": 0},
    bytes={"type": "integer", "minimum": 0},
)
BODIES = {"limits": _LIMITS, "usage": _USAGE}
"""The bodies these operations answer with, by the name the views test pairs with a service's view."""
_WHEN: S = {"type": "string", "description": "a date (2026-12-01, UTC) or an ISO 8601 time (2026-12-01T09:30:00Z)"}


@API.member(
    "GET",
    "/api/v1/limits",
    op(
        "The organization's limits on calls (owner, admin): per member, per API token (or MCP client sign-in) and"
        " per teammate, calls per fixed UTC minute and per UTC day; null: no limit",
        {"200": ("the limits", _LIMITS)},
        "401 403",
    ),
)
async def limits(request: Request, caller: Caller) -> Response:
    return JSONResponse(await get_limits(running(request).service, caller))


@API.member(
    "PUT",
    "/api/v1/limits",
    op(
        "Replace the organization's limits (owner, admin): a limit left out or null is no limit; audited as"
        " `limits.set`. A call over a limit is refused before it runs: 429 with `Retry-After` from"
        " `POST /api/v1/calls`, an error result over MCP and in a teammate's turn",
        {"200": ("the limits as they now are", _LIMITS)},
        "400 401 403 413 422",
        body=_LIMITS_BODY,
    ),
)
async def put_limits(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=LIMIT_FIELDS)
    return JSONResponse(await set_limits(running(request).service, caller, body))


@API.member(
    "GET",
    "/api/v1/usage",
    op(
        "The organization's calls in a period (owner, admin), summed by member (email), server (name), tool (the"
        " name the model sees) or UTC day: calls, errors (refused, failed or an error result), seconds and result"
        " bytes. The period is `[since, until)`: by default the last 30 days, at most 366; a date as `until` counts"
        " that whole day",
        {"200": ("one entry per group: most calls first (by day: oldest first)", array(_USAGE))},
        "401 403 422",
        params=[query("since", _WHEN), query("until", _WHEN), query("group_by", enum(*GROUPS))],
    ),
)
async def get_usage(request: Request, caller: Caller) -> Response:
    since, until = query_text(request, "since") or None, query_text(request, "until") or None
    group = query_text(request, "group_by")
    return JSONResponse(await usage(running(request).service, caller, group, since, until))
