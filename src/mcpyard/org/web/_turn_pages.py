"""Pages for turns: teammates and their conversations, the inbox, assistants, visitors, turn traces (ORG-4 to ORG-7).

A conversation page shows each turn with its calls and, for a call waiting on a person, an
approval card inline; the inbox lists every call waiting on the reader. Both update live (see
`_live.py`). The visitors' page (`/a/{slug}`) needs no account: its form carries a CSRF token tied
to a cookie of the visitor's own, and it reaches only what the published assistant may use.
"""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import Response

from mcpyard.errors import NotFound, ServiceError
from mcpyard.org import services, turns
from mcpyard.org._bodies import text_problem
from mcpyard.org._words import text_of
from mcpyard.org.services import list_members
from mcpyard.org.store import Assistant, Conversation, Publication, TurnRow
from mcpyard.org.turns import UNFINISHED, PreviewView
from mcpyard.org.web._pages import Notice, PageRoutes, Pages, Visit, field
from mcpyard.pipeline import FencedResults

__all__ = ["PAGES", "VISITOR_COOKIE"]

VISITOR_COOKIE = "mcpyard_visitor"
MAX_VISITOR_TURNS_SHOWN = 50
DECIDED_SHOWN = 50
"""Decided calls the inbox shows, newest first."""
RESULT_SHOWN = 2000
"""Characters of a decided call's result the inbox shows (the rest is read in the turn, or by handle)."""
TURN_ENDINGS = {
    "model_error": "The model could not answer.",
    "call_limit": "The turn asked for more tool calls than it may make.",
    "time_limit": "The turn took longer than it may.",
    "interrupted": "The service stopped while the turn ran; send the message again.",
}
"""What a page says of a turn that ended without its answer, by the turn's status."""
WAITING_WORDS = {"waiting_for_approval": "Waiting for an approval…", "waiting_for_answer": "Waiting for an answer…"}
"""What a page says of a turn that has not ended, by the turn's status (else: working)."""


def _server_ids(form: Any) -> list[str]:
    return [value for value in form.getlist("server_ids") if isinstance(value, str)]


async def _emails(pages: Pages, org_id: str) -> dict[str, str]:
    async with pages.svc.db.begin() as session:
        return {member["id"]: member["email"] for member in await list_members(session, org_id)}


PAGES = PageRoutes()


@PAGES.page("/teammates", "GET", "POST")
async def teammates(pages: Pages, request: Request, visit: Visit) -> Response:
    if request.method == "POST":
        form = await pages.form(request, visit)
        body = {
            "name": field(form, "name"),
            "instructions": field(form, "instructions"),
            "server_ids": _server_ids(form),
            "model": field(form, "model") or None,
        }
        created = await turns.create_teammate(pages.svc, visit.caller, body)
        return pages.redirect(
            request, f"/teammates/{created['id']}", Notice("done", f"{text_of(created['name'])} is ready.")
        )
    listed = await turns.list_teammates(pages.svc, visit.caller)
    servers = await services.list_servers(pages.svc, visit.caller) if visit.caller.is_admin else []
    search = await services.get_tool_search(pages.svc, visit.caller)
    context = {"title": "Teammates", "teammates": listed, "servers": servers, "search": search}
    return pages.render(request, "teammates.html", context, visit=visit)


def _whole(form: Any, name: str) -> object:
    """A budget as typed: a whole number, or the text itself (the service names the field it cannot take)."""
    text = field(form, name).strip()
    return int(text) if text.isascii() and text.isdigit() else text


@PAGES.page("/teammates/tool-search", "POST", back="/teammates")
async def save_tool_search(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    body = {
        "mode": field(form, "mode"),
        "max_tools": _whole(form, "max_tools"),
        "max_tokens": _whole(form, "max_tokens"),
    }
    await services.set_tool_search(pages.svc, visit.caller, body)
    return pages.redirect(request, "/teammates", Notice("done", "Tool search saved."))


@PAGES.page("/teammates/{teammate_id}", "GET")
async def teammate(pages: Pages, request: Request, visit: Visit) -> Response:
    teammate_id = request.path_params["teammate_id"]
    found = await turns.get_teammate(pages.svc, visit.caller, teammate_id)
    conversations = await turns.list_conversations(pages.svc, visit.caller, teammate_id)
    servers = await services.list_servers(pages.svc, visit.caller)
    names = {item["id"]: item["name"] for item in servers}
    context = {
        "title": found["name"] + (" (deleted)" if found["deleted_at"] else ""),
        "teammate": found,
        "conversations": conversations,
        "server_names": names,
        "servers": servers if visit.caller.is_admin else [],
    }
    return pages.render(request, "teammate.html", context, visit=visit)


@PAGES.page("/teammates/{teammate_id}/edit", "POST", back="/teammates/{teammate_id}")
async def edit(pages: Pages, request: Request, visit: Visit) -> Response:
    """The edit form's post: the service checks the role (a member's post changes nothing, 403)."""
    form = await pages.form(request, visit)
    body = {
        "name": field(form, "name"),
        "instructions": field(form, "instructions"),
        "server_ids": _server_ids(form),
        "model": field(form, "model") or None,
    }
    teammate_id = request.path_params["teammate_id"]
    await turns.update_teammate(pages.svc, visit.caller, teammate_id, body)
    found = await turns.get_teammate(pages.svc, visit.caller, teammate_id)
    return pages.redirect(request, f"/teammates/{teammate_id}", Notice("done", f"{text_of(found['name'])} is saved."))


@PAGES.page("/teammates/{teammate_id}/delete", "GET", "POST", back="/teammates/{teammate_id}")
async def delete(pages: Pages, request: Request, visit: Visit) -> Response:
    teammate_id = request.path_params["teammate_id"]
    found = await turns.get_teammate(pages.svc, visit.caller, teammate_id)
    if request.method == "GET":
        context = {"title": f"Delete {found['name']}", "teammate": found}
        return pages.render(request, "teammate_delete.html", context, visit=visit)
    await pages.form(request, visit)
    await turns.delete_teammate(pages.svc, visit.caller, teammate_id)
    text = f"{text_of(found['name'])} is deleted; its conversations stay readable."
    return pages.redirect(request, "/teammates", Notice("done", text))


@PAGES.page("/teammates/{teammate_id}/conversations", "POST", back="/teammates/{teammate_id}")
async def start(pages: Pages, request: Request, visit: Visit) -> Response:
    await pages.form(request, visit)
    started = await turns.start_conversation(pages.svc, visit.caller, request.path_params["teammate_id"])
    return pages.redirect(request, f"/conversations/{started['id']}")


@PAGES.page("/conversations/{conversation_id}", "GET")
async def conversation(pages: Pages, request: Request, visit: Visit) -> Response:
    found = await turns.get_conversation(pages.svc, visit.caller, request.path_params["conversation_id"])
    teammate = await turns.get_teammate(pages.svc, visit.caller, found["teammate_id"])
    traces = {}
    for turn in found["turns"]:
        if turn["status"] in UNFINISHED:
            traces[turn["id"]] = (await turns.get_turn(pages.svc, visit.caller, turn["id"]))["trace"]
    waiting = {item["id"]: item for item in await services.list_approvals(pages.svc, visit.caller, "pending")}
    busy = any(turn["status"] in UNFINISHED for turn in found["turns"])
    context = {
        "title": f"{teammate['name']}: conversation",
        "conversation": found,
        "teammate": teammate,
        "traces": traces,
        "waiting": waiting,
        "busy": busy,
        "turn_endings": TURN_ENDINGS,
        "waiting_words": WAITING_WORDS,
        "emails": await _emails(pages, visit.caller.org_id),
        "fenced": await turns.fenced_in(pages.svc, visit.caller.org_id, found["id"]),
    }
    return pages.render(request, "conversation.html", context, visit=visit)


@PAGES.page("/conversations/{conversation_id}/turns", "POST", back="/conversations/{conversation_id}")
async def take_turn(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    conversation_id = request.path_params["conversation_id"]
    turn = (await turns.take_turn(pages.svc, visit.caller, conversation_id, {"message": field(form, "message")})).body
    return pages.redirect(request, f"/conversations/{conversation_id}#turn-{turn['id']}")


@PAGES.page("/turns/{turn_id}", "GET")
async def turn(pages: Pages, request: Request, visit: Visit) -> Response:
    found = await turns.get_turn(pages.svc, visit.caller, request.path_params["turn_id"])
    fenced = await turns.fenced_in(pages.svc, visit.caller.org_id, found["conversation_id"])
    return pages.render(request, "turn.html", {"title": "Turn trace", "turn": found, "fenced": fenced}, visit=visit)


@PAGES.page("/inbox", "GET")
async def inbox(pages: Pages, request: Request, visit: Visit) -> Response:
    pending = await services.list_approvals(pages.svc, visit.caller, "pending")
    answered = await services.list_questions(pages.svc, visit.caller, None, newest=DECIDED_SHOWN, decided=True)
    decided = await services.list_approvals(pages.svc, visit.caller, None, newest=DECIDED_SHOWN, decided=True)
    tools = {item["id"]: item for item in await services.list_tools(pages.svc, visit.caller)}
    servers = {item["id"]: item["name"] for item in await services.list_servers(pages.svc, visit.caller)}
    context = {
        "title": "Inbox",
        "questions": await services.list_questions(pages.svc, visit.caller, "pending"),
        "long_calls": await services.list_task_calls(pages.svc, visit.caller),
        "answered": answered[::-1],
        "pending": pending,
        "decided": decided[::-1],
        "emails": await _emails(pages, visit.caller.org_id),
        "server_of": {key: servers.get(item["server_id"], "?") for key, item in tools.items()},
        "result_shown": RESULT_SHOWN,
    }
    return pages.render(request, "inbox.html", context, visit=visit)


@PAGES.page("/approvals/{approval_id}/{verb}", "POST", back="/inbox")
async def decide(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    approval_id, verb = request.path_params["approval_id"], request.path_params["verb"]
    if verb == "approve":
        ran = (await services.approve(pages.svc, visit.caller, approval_id)).body
        if "ok" not in ran:  # still running: no result yet
            text = "Approved: it runs, and its server asks a question first (see below)."
        elif ran["ok"]:
            text = "Approved: it ran once."
        else:
            why = ran["error"]["message"] if ran["error"] is not None else ran["text"]
            text = f"Approved, but it did not run: {text_of(why)}"
    elif verb == "decline":
        await services.decline(pages.svc, visit.caller, approval_id)
        text = "Declined: it will not run."
    else:
        raise NotFound("not_found", "an approval is approved or declined")
    back = field(form, "back")
    return pages.redirect(request, back if back.startswith("/conversations/") else "/inbox", Notice("done", text))


@PAGES.page("/assistants", "GET", "POST")
async def assistants(pages: Pages, request: Request, visit: Visit) -> Response:
    if request.method == "POST":
        form = await pages.form(request, visit)
        tool_ids = [value for value in form.getlist("tool_ids") if isinstance(value, str)]
        body = {"name": field(form, "name"), "instructions": field(form, "instructions"), "tool_ids": tool_ids}
        created = await turns.create_assistant(pages.svc, visit.caller, body)
        return pages.redirect(
            request, f"/assistants/{created['id']}", Notice("done", f"{text_of(created['name'])} is saved.")
        )
    listed = await turns.list_assistants(pages.svc, visit.caller)
    tools = [item for item in await services.list_tools(pages.svc, visit.caller) if item["policy"] == "run_freely"]
    context = {"title": "Assistants", "assistants": listed, "tools": tools}
    return pages.render(request, "assistants.html", context, visit=visit)


async def assistant_page(
    pages: Pages,
    request: Request,
    visit: Visit,
    *,
    refused: list[dict[str, Any]] | None = None,
    preview: PreviewView | None = None,
) -> Response:
    found = await turns.get_assistant(pages.svc, visit.caller, request.path_params["assistant_id"])
    tools = {item["id"]: item for item in await services.list_tools(pages.svc, visit.caller)}
    fenced = FencedResults()
    if preview is not None:
        fenced = await turns.fenced_in(pages.svc, visit.caller.org_id, preview["conversation_id"])
    context = {
        "title": found["name"],
        "assistant": found,
        "tools": tools,
        "refused": refused,
        "preview": preview,
        "fenced": fenced,
    }
    return pages.render(request, "assistant.html", context, visit=visit, status=409 if refused else 200)


@PAGES.page("/assistants/{assistant_id}", "GET")
async def assistant(pages: Pages, request: Request, visit: Visit) -> Response:
    return await assistant_page(pages, request, visit)


@PAGES.page("/assistants/{assistant_id}/publish", "POST", back="/assistants/{assistant_id}")
async def publish(pages: Pages, request: Request, visit: Visit) -> Response:
    await pages.form(request, visit)
    assistant_id = request.path_params["assistant_id"]
    try:
        published = await turns.publish(pages.svc, visit.caller, assistant_id)
    except ServiceError as exc:
        if exc.code != "not_publishable":
            raise
        reasons = (exc.details or {}).get("tools", [])
        return await assistant_page(pages, request, visit, refused=reasons or [{"tool": "", "reason": exc.message}])
    notice = Notice("done", f"Published: visitors can use it at /a/{published['slug']}.")
    return pages.redirect(request, f"/assistants/{assistant_id}", notice)


@PAGES.page("/assistants/{assistant_id}/preview", "POST", back="/assistants/{assistant_id}")
async def preview(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    assistant_id = request.path_params["assistant_id"]
    answer = await turns.preview(pages.svc, visit.caller, assistant_id, {"message": field(form, "message")})
    return await assistant_page(pages, request, visit, preview=answer)


@PAGES.public("/a/{slug}", "GET", "POST")
async def visitor(pages: Pages, request: Request) -> Response:
    slug = request.path_params["slug"]
    cookie = request.cookies.get(VISITOR_COOKIE) or secrets.token_urlsafe(24)
    csrf = pages.authenticate.signer.csrf(f"visitor:{cookie}")
    found = None
    if text_problem(slug) is None:  # a slug with a NUL or a lone surrogate names no assistant
        async with pages.svc.db.begin() as session:
            found = await session.scalar(
                select(Assistant)
                .join(Publication, Publication.assistant_id == Assistant.id)
                .where(Assistant.slug == slug)
                .limit(1)
            )
    context: dict[str, Any] = {
        "title": "Assistant",
        "slug": slug,
        "visitor_csrf": csrf,
        "turns": [],
        "error": None,
        "fenced": FencedResults(),
    }
    status = 200
    if found is None:
        context["missing"] = True
        return pages.render(request, "public.html", context, visit=None, status=404)
    context["name"], context["title"], context["missing"] = found.name, found.name, False
    conversation_id = None
    if request.method == "POST":
        try:
            form = await pages.form(request, None, csrf=csrf if request.cookies.get(VISITOR_COOKIE) else "")
            conversation_id = field(form, "conversation") or None
            body: dict[str, Any] = {"message": field(form, "message")}
            if conversation_id:
                body["conversation"] = conversation_id
            client = request.client.host if request.client is not None else "unknown"
            answer = await turns.visitor_turn(pages.svc, slug, body, client, pages.rate_limits)
            conversation_id = answer["conversation"]
        except ServiceError as exc:
            context["error"] = exc.message
            status = exc.status
    if conversation_id:
        context["turns"], context["fenced"] = await _visitor_turns(pages, found, conversation_id)
    context["conversation"] = conversation_id or ""
    response = pages.render(request, "public.html", context, visit=None, status=status)
    if not request.cookies.get(VISITOR_COOKIE):
        response.set_cookie(
            VISITOR_COOKIE, cookie, max_age=86400, httponly=True, samesite="strict", secure=pages.secure(request)
        )
    return response


async def _visitor_turns(
    pages: Pages, assistant: Assistant, conversation_id: str
) -> tuple[list[dict[str, Any]], FencedResults]:
    """A visitor conversation's exchanges so far (its message and reply each), for the page without script, and
    what the service fenced in it."""
    async with pages.svc.db.begin() as session:
        conversation = await session.scalar(
            select(Conversation.id).where(
                Conversation.id == conversation_id,
                Conversation.assistant_id == assistant.id,
                Conversation.member_id.is_(None),
            )
        )
        if conversation is None:
            return [], FencedResults()
        rows = await session.scalars(
            select(TurnRow).where(TurnRow.conversation_id == conversation).order_by(TurnRow.created_at)
        )
        shown = [
            {"message": row.message, "reply": row.reply, "status": row.status, "calls": row.calls}
            for row in list(rows)[-MAX_VISITOR_TURNS_SHOWN:]
        ]
    return shown, await turns.fenced_in(pages.svc, assistant.org_id, conversation)
