"""Webhooks in the JSON API: add one (its secret answered once), list them, delete one, read its delivery log.

Owners and admins only, checked by the service functions; an id from another organization is 404.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.org import services
from mcpyard.org._bodies import json_body, origin_of
from mcpyard.org._caller import Caller
from mcpyard.org.api._operations import Operations, running
from mcpyard.org.api._schema import BOOL, NSTR, STR, S, array, enum, obj, op

__all__ = ["API", "BODIES"]

API = Operations()

_EVENT = enum(*services.EVENTS)
_NINT: S = {"type": ["integer", "null"]}
_WEBHOOK = obj(
    ["id", "url", "events", "include_arguments", "created_by", "created_at"],
    id=STR,
    url=STR,
    events=array(_EVENT),
    include_arguments=BOOL,
    created_by=STR,
    created_at=STR,
)
_CREATED = {
    **_WEBHOOK,
    "required": [*_WEBHOOK["required"], "secret"],
    "properties": {
        **_WEBHOOK["properties"],
        "secret": {**STR, "description": "the shared secret deliveries are signed with: shown this once, never again"},
    },
}
_TRY = obj(["at", "status", "error"], at=STR, status=_NINT, error=NSTR)
_DELIVERY = obj(
    [
        "id",
        "webhook_id",
        "event",
        "status",
        "attempts",
        "last_status",
        "last_error",
        "created_at",
        "next_at",
        "finished_at",
        "tries",
    ],
    id=STR,
    webhook_id=STR,
    event=STR,
    status=enum("pending", "sending", "delivered", "failed"),
    attempts={"type": "integer"},
    last_status=_NINT,
    last_error=NSTR,
    created_at=STR,
    next_at=NSTR,
    finished_at=NSTR,
    tries=array(_TRY),
)
BODIES = {"webhook": _WEBHOOK, "created_webhook": _CREATED, "delivery": _DELIVERY, "delivery_try": _TRY}
"""The bodies these operations answer with, by the name the views test pairs with a service's view."""
_WEBHOOK_BODY = obj(
    ["url"],
    url={"type": "string", "minLength": 1, "maxLength": services.MAX_WEBHOOK_URL},
    events={**array(_EVENT), "minItems": 1, "description": "default: every event"},
    include_arguments={**BOOL, "description": "send an approval's argument values (redacted); default false"},
)


@API.member("GET", "/api/v1/webhooks", op("The webhooks (owner, admin)", {"200": ("", array(_WEBHOOK))}, "401 403"))
async def list_webhooks(request: Request, caller: Caller) -> Response:
    return JSONResponse(await services.list_webhooks(running(request).service, caller))


@API.member(
    "POST",
    "/api/v1/webhooks",
    op(
        "Add a webhook (owner, admin): its URL checked by the outbound guard (422 `url_refused`), a shared secret "
        "made; links in its payloads start with the address this request reached the service at",
        {"201": ("the webhook with its secret, shown this once", _CREATED)},
        "400 401 403 409 413 422",
        body=_WEBHOOK_BODY,
    ),
)
async def add_webhook(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=services.WEBHOOK_FIELDS)
    created = await services.add_webhook(running(request).service, caller, body, origin_of(request))
    return JSONResponse(created, status_code=201)


@API.member(
    "DELETE",
    "/api/v1/webhooks/{webhook_id}",
    op("Delete a webhook and its deliveries (owner, admin)", {"204": ("deleted", None)}, "401 403 404"),
)
async def delete_webhook(request: Request, caller: Caller) -> Response:
    await services.delete_webhook(running(request).service, caller, request.path_params["webhook_id"])
    return Response(status_code=204)


@API.member(
    "GET",
    "/api/v1/webhooks/{webhook_id}/deliveries",
    op(
        "A webhook's delivery log, newest first (owner, admin): status, attempts, each attempt's HTTP status or error",
        {"200": ("the latest deliveries", array(_DELIVERY))},
        "401 403 404",
    ),
)
async def list_deliveries(request: Request, caller: Caller) -> Response:
    webhook_id = request.path_params["webhook_id"]
    return JSONResponse(await services.list_deliveries(running(request).service, caller, webhook_id))
