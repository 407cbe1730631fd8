"""Pages for what the organization connects to: servers, tools, policies, the audit log, alerts (ORG-2, -3, -8).

Each action calls the same service function as its JSON twin under `/api/v1`; a tool whose
definition changed since it was reviewed shows the reviewed and current definitions side by side,
and its policy can only be set again from that page, for the definition on it.
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from mcpyard.errors import Forbidden, Invalid
from mcpyard.org import services
from mcpyard.org._words import text_of
from mcpyard.org.services import ToolView, list_alerts, list_audit
from mcpyard.org.web._diff import definition_text, side_by_side
from mcpyard.org.web._pages import Notice, PageRoutes, Pages, Visit, field

__all__ = ["PAGES"]

POLICY_LABELS = {"run_freely": "Run freely", "ask_first": "Ask first", "off": "Off"}
HINTS = (
    ("readOnlyHint", "read_only_hint", "read-only"),
    ("destructiveHint", "destructive_hint", "destructive"),
    ("idempotentHint", "idempotent_hint", "idempotent"),
    ("openWorldHint", "open_world_hint", "open world"),
)


def hints(annotations: dict[str, Any]) -> list[str]:
    """A tool's annotations as short words: what its server claims, shown as hints, never trusted as rules."""
    shown = []
    for camel, snake, word in HINTS:
        value = annotations.get(camel, annotations.get(snake))
        if value is True:
            shown.append(word)
        elif value is False and camel == "destructiveHint":
            shown.append("not destructive")
    return shown


def client_credentials(form: FormData) -> dict[str, Any] | None:
    """The client credentials a server form gives (OAuth client-credentials grant), or None when it gives none."""
    names = ("client_id", "client_secret", "issuer")
    if not any(field(form, name) for name in names):
        return None
    given: dict[str, Any] = {name: field(form, name) for name in names}
    scopes = field(form, "scopes").split()
    if scopes:
        given["scopes"] = scopes
    return given


PAGES = PageRoutes()


common = {"policy_labels": POLICY_LABELS, "hints": hints}


@PAGES.page("/servers", "GET", "POST")
async def servers(pages: Pages, request: Request, visit: Visit) -> Response:
    if request.method == "POST":
        form = await pages.form(request, visit)
        created = await services.register_server(
            pages.svc,
            visit.caller,
            field(form, "name"),
            field(form, "url"),
            field(form, "bearer_token") or None,
            client_credentials=client_credentials(form),
        )
        tools = len(created["tools"])
        notice = Notice(
            "done",
            f"{text_of(created['name'])} is registered ({created['state']}, {tools} tools). Set each tool's policy.",
        )
        return pages.redirect(request, f"/servers/{created['id']}", notice)
    listed = await services.list_servers(pages.svc, visit.caller)
    return pages.render(request, "servers.html", {"title": "MCP servers", "servers": listed}, visit=visit)


@PAGES.page("/servers/{server_id}", "GET")
async def server(pages: Pages, request: Request, visit: Visit) -> Response:
    found = await services.get_server(pages.svc, visit.caller, request.path_params["server_id"])
    context = {"title": found["name"], "server": found, **common}
    return pages.render(request, "server.html", context, visit=visit)


@PAGES.page("/servers/{server_id}/edit", "POST", back="/servers/{server_id}")
async def edit(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    changes: dict[str, Any] = {"name": field(form, "name"), "url": field(form, "url")}
    if field(form, "bearer_token"):
        changes["bearer_token"] = field(form, "bearer_token")
    # The form shows the current client id and issuer: only a new secret says they are to be replaced.
    if field(form, "client_secret") and (given := client_credentials(form)) is not None:
        changes["client_credentials"] = given
    if field(form, "remove_token") == "yes":
        changes["bearer_token"] = None
    if field(form, "remove_client_credentials") == "yes":
        changes["client_credentials"] = None
    updated = await services.update_server(pages.svc, visit.caller, request.path_params["server_id"], changes)
    text = f"{text_of(updated['name'])} is saved."
    if dropped := updated["credentials_dropped"]:
        what = "bearer token" if dropped == ["bearer_token"] else "client credentials"
        text += (
            f" Its {what} was dropped: it was entered for another address, and is never sent to a new one. "
            f"Enter the {what} for the new address to send one."
        )
    return pages.redirect(request, f"/servers/{updated['id']}", Notice("done", text))


@PAGES.page("/servers/{server_id}/refresh", "POST", back="/servers/{server_id}")
async def refresh(pages: Pages, request: Request, visit: Visit) -> Response:
    await pages.form(request, visit)
    found = await services.refresh_server(pages.svc, visit.caller, request.path_params["server_id"])
    changed = [tool["name"] for tool in found["tools"] if tool["state"] == "changed"]
    text = f"{text_of(found['name'])} refreshed: {found['state']}."
    if changed:
        text += f" Changed, and suspended until reviewed: {', '.join(changed)}."
    return pages.redirect(request, f"/servers/{found['id']}", Notice("done", text))


@PAGES.page("/servers/{server_id}/delete", "GET", "POST", back="/servers/{server_id}")
async def delete(pages: Pages, request: Request, visit: Visit) -> Response:
    server_id = request.path_params["server_id"]
    found = await services.get_server(pages.svc, visit.caller, server_id)
    if request.method == "GET":
        selections = await services.server_selections(pages.svc, visit.caller, server_id)
        context = {"title": f"Delete {found['name']}", "server": found, "selections": selections}
        return pages.render(request, "server_delete.html", context, visit=visit)
    await pages.form(request, visit)
    await services.delete_server(pages.svc, visit.caller, server_id)
    return pages.redirect(
        request, "/servers", Notice("done", f"{text_of(found['name'])} is deleted; its tools stopped.")
    )


@PAGES.page("/tools", "GET")
async def tools(pages: Pages, request: Request, visit: Visit) -> Response:
    listed = await services.list_tools(pages.svc, visit.caller)
    names = {item["id"]: item["name"] for item in await services.list_servers(pages.svc, visit.caller)}
    groups: dict[str, list[ToolView]] = {}
    for item in listed:
        groups.setdefault(names.get(item["server_id"], "?"), []).append(item)
    context = {"title": "Tools & policies", "groups": groups, **common}
    return pages.render(request, "tools.html", context, visit=visit)


@PAGES.page("/tools/{tool_id}", "GET")
async def tool(pages: Pages, request: Request, visit: Visit) -> Response:
    found = await services.get_tool(pages.svc, visit.caller, request.path_params["tool_id"])
    rows = []
    if "reviewed_definition" in found:
        rows = side_by_side(definition_text(found["reviewed_definition"]), definition_text(found["definition"]))
    context = {"title": found["name"], "tool": found, "rows": rows, **common}
    return pages.render(request, "tool.html", context, visit=visit)


@PAGES.page("/tools/{tool_id}/policy", "POST", back="/tools/{tool_id}")
async def policy(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    tool_id = request.path_params["tool_id"]
    chosen = field(form, "policy")
    updated = await services.set_policy(pages.svc, visit.caller, tool_id, chosen, field(form, "definition_hash"))
    label = POLICY_LABELS.get(chosen, chosen)
    back = field(form, "back")
    to = "/tools" if back == "tools" else f"/tools/{tool_id}"
    return pages.redirect(request, to, Notice("done", f"{text_of(updated['name'])}: {label}."))


@PAGES.page("/audit", "GET")
async def audit_page(pages: Pages, request: Request, visit: Visit) -> Response:
    if not visit.caller.is_admin:
        raise Forbidden("forbidden", "only owners and admins read the audit log")
    action = request.query_params.get("action", "").strip() or None
    actor = request.query_params.get("actor", "").strip() or None
    if any(value is not None and "\x00" in value for value in (action, actor)):
        raise Invalid("invalid_request", "a filter held a NUL character")
    async with pages.svc.db.begin() as session:
        rows = await list_audit(session, visit.caller.org_id, action=action, actor=actor)
    context = {"title": "Audit log", "rows": rows, "action": action or "", "actor": actor or ""}
    return pages.render(request, "audit.html", context, visit=visit)


@PAGES.page("/alerts", "GET")
async def alerts(pages: Pages, request: Request, visit: Visit) -> Response:
    async with pages.svc.db.begin() as session:
        rows = await list_alerts(session, visit.caller.org_id)
    opened = [row for row in rows if row["cleared_at"] is None]
    cleared = [row for row in rows if row["cleared_at"] is not None]
    context = {"title": "Alerts", "opened": opened, "cleared": cleared}
    return pages.render(request, "alerts.html", context, visit=visit)
