"""The webhooks page (owners and admins): add a webhook (its secret shown once), see each one's delivery log,
delete one. The JSON twin is `/api/v1/webhooks`; the rules live in the service functions."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from mcpyard.org import services
from mcpyard.org._bodies import origin_of
from mcpyard.org.web._pages import Notice, PageRoutes, Pages, Visit, field

__all__ = ["PAGES"]

PAGES = PageRoutes()
DELIVERIES_SHOWN = 20
"""The latest deliveries shown under each webhook (the API answers more)."""
EVENT_LABELS = {
    "approval_waiting": "An approval waits",
    "question_waiting": "A server's question waits",
    "alert_raised": "An alert is raised",
}


async def webhooks_page(pages: Pages, request: Request, visit: Visit, *, created: Any = None) -> Response:
    hooks = await services.list_webhooks(pages.svc, visit.caller)
    logs = {
        hook["id"]: (await services.list_deliveries(pages.svc, visit.caller, hook["id"], limit=DELIVERIES_SHOWN))
        for hook in hooks
    }
    context = {
        "title": "Webhooks",
        "hooks": hooks,
        "logs": logs,
        "labels": EVENT_LABELS,
        "events": services.EVENTS,
        "created": created,
    }
    return pages.render(request, "webhooks.html", context, visit=visit)


@PAGES.page("/webhooks", "GET", "POST")
async def webhooks(pages: Pages, request: Request, visit: Visit) -> Response:
    if request.method == "GET":
        return await webhooks_page(pages, request, visit)
    form = await pages.form(request, visit)
    body = {
        "url": field(form, "url"),
        "events": [value for value in form.getlist("events") if isinstance(value, str)] or None,
        "include_arguments": field(form, "include_arguments") == "yes",
    }
    created = await services.add_webhook(pages.svc, visit.caller, body, origin_of(request))
    # Rendered here, not after a redirect: the secret is shown this once and never put in a cookie.
    return await webhooks_page(pages, request, visit, created=created)


@PAGES.page("/webhooks/{webhook_id}/delete", "POST", back="/webhooks")
async def delete(pages: Pages, request: Request, visit: Visit) -> Response:
    await pages.form(request, visit)
    await services.delete_webhook(pages.svc, visit.caller, request.path_params["webhook_id"])
    return pages.redirect(request, "/webhooks", Notice("done", "The webhook is deleted: nothing more is sent to it."))
