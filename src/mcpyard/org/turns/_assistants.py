"""Assistants: published for visitors, with only `run_freely` tools bound to the hashes reviewed (ORG-6, ORG-8).

Owners and admins choose an assistant's tools and publish. Publishing refuses a selection holding an
ask-first, off, changed or removed tool, a tool whose policy was set for another definition, or a
deleted server's tool, naming each; a publication stores only server ids, tool names and definition
hashes. At turn time (a visitor's or a preview) each tool must still be `run_freely` for the same
hash, or it is left out and an alert asks to review and publish again. Visitors, anonymous, get at
most 5 calls a turn, never an ask-first tool (no one could answer), and a rate limit per visitor and
per assistant; a server's question during their turn (or a preview) is refused at once, saying why.
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict, deque
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import Conflict, Invalid, NotFound, TooMany
from mcpyard.org._caller import ADMINS, Caller, not_found, require, text_field
from mcpyard.org._words import code_span, quoted, text_of
from mcpyard.org.hosts import model_name
from mcpyard.org.services import PUBLICATION_ALERT, Asker, OrgService, audit, clear_alert, held_until, raise_alert
from mcpyard.org.store import Assistant, Conversation, Policy, Publication, RegisteredServer, Tool, TurnRow, why_not_now
from mcpyard.org.turns._turn_json import turn_json
from mcpyard.org.turns._turn_offer import Offer, limits, model_for
from mcpyard.org.turns._turns import MAX_MESSAGE, drive_turn, ends_if_it_fails
from mcpyard.org.turns._views import AssistantView, PreviewView, PublicationView, PublishedToolView, VisitorTurnView

__all__ = [
    "MAX_VISITOR_CALLS",
    "RateLimited",
    "RateLimits",
    "create_assistant",
    "get_assistant",
    "list_assistants",
    "list_publications",
    "preview",
    "publish",
    "visitor_turn",
]

MAX_VISITOR_CALLS = 5
NOT_ASKED = "a published assistant's visitors are anonymous: mcpyard does not put a server's questions to them"
PREVIEW_NOT_ASKED = "a preview runs as visitors' turns do, and mcpyard does not put a server's questions to visitors"
MAX_ASSISTANT_NAME = 100
MAX_ASSISTANT_INSTRUCTIONS = 20_000
MAX_TOOLS = 200


class RateLimited(TooMany):
    """429, with how long to wait."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__("rate_limited", message, retry_after=retry_after)


class RateLimits:
    """Turns per minute, per visitor and per assistant, in this process (a sliding window; bounded memory)."""

    def __init__(self, *, per_visitor: int = 10, per_assistant: int = 120, window_secs: float = 60.0) -> None:
        self._limits = {"visitor": per_visitor, "assistant": per_assistant}
        self._window = window_secs
        self._seen: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()

    def check(self, assistant_id: str, visitor: str) -> None:
        now = time.monotonic()
        for kind, key in (("assistant", assistant_id), ("visitor", f"{assistant_id}|{visitor}")):
            times = self._seen.setdefault((kind, key), deque())
            self._seen.move_to_end((kind, key))
            while times and now - times[0] > self._window:
                times.popleft()
            if len(times) >= self._limits[kind]:
                wait = max(1, int(self._window - (now - times[0])) + 1)
                who = "this assistant" if kind == "assistant" else "you"
                raise RateLimited(f"too many turns for {who}: try again in {wait} s", wait)
        for kind, key in (("assistant", assistant_id), ("visitor", f"{assistant_id}|{visitor}")):
            self._seen[(kind, key)].append(now)
        while len(self._seen) > 10_000:
            self._seen.popitem(last=False)


def _slug(name: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "assistant"
    return f"{base}-{secrets.token_hex(3)}"


def _text(body: dict[str, Any], name: str, limit: int, *, required: bool = False) -> str:
    return text_field(body, name, limit, required=required) or ""


async def _latest(session: AsyncSession, assistant_id: str) -> Publication | None:
    return await session.scalar(
        select(Publication)
        .where(Publication.assistant_id == assistant_id)
        .order_by(Publication.published_at.desc())
        .limit(1)
    )


def _publication_json(publication: Publication, slug: str) -> PublicationView:
    tools = [
        PublishedToolView(server_id=item["server_id"], tool=item["tool"], definition_hash=item["definition_hash"])
        for item in publication.tools
    ]
    return {
        "id": publication.id,
        "assistant_id": publication.assistant_id,
        "slug": slug,
        "tools": tools,
        "published_by": publication.published_by,
        "published_at": publication.published_at.isoformat(),
    }


async def _assistant_json(svc: OrgService, assistant: Assistant) -> AssistantView:
    async with svc.db.begin() as session:
        latest = await _latest(session, assistant.id)
        history = list(
            await session.scalars(
                select(Publication).where(Publication.assistant_id == assistant.id).order_by(Publication.published_at)
            )
        )
    return {
        "id": assistant.id,
        "name": assistant.name,
        "slug": assistant.slug,
        "instructions": assistant.instructions,
        "tool_ids": assistant.tool_ids,
        "needs_review": assistant.needs_review,
        "review_reason": assistant.review_reason,
        "publication": _publication_json(latest, assistant.slug) if latest is not None else None,
        "publications": [_publication_json(item, assistant.slug) for item in history],
        "created_at": assistant.created_at.isoformat(),
    }


async def create_assistant(svc: OrgService, caller: Caller, body: dict[str, Any]) -> AssistantView:
    require(caller, *ADMINS)
    name = _text(body, "name", MAX_ASSISTANT_NAME, required=True)
    instructions = _text(body, "instructions", MAX_ASSISTANT_INSTRUCTIONS)
    tool_ids = body.get("tool_ids", [])
    if not isinstance(tool_ids, list) or len(tool_ids) > MAX_TOOLS or not all(isinstance(t, str) for t in tool_ids):
        raise Invalid("invalid_request", f"`tool_ids` must be a list of at most {MAX_TOOLS} tool ids")
    async with svc.db.begin() as session:
        known = set(await session.scalars(select(Tool.id).where(Tool.org_id == caller.org_id, Tool.id.in_(tool_ids))))
        unknown = [item for item in tool_ids if item not in known]
        if unknown:
            raise Invalid("unknown_tool", f"no tool with id {quoted(unknown[0])} in your organization")
        assistant = Assistant(
            org_id=caller.org_id,
            name=name,
            slug=_slug(name),
            instructions=instructions,
            tool_ids=list(dict.fromkeys(tool_ids)),
        )
        session.add(assistant)
        await session.flush()
        audit(
            session,
            caller.org_id,
            caller.email,
            "assistant.create",
            assistant.id,
            new={"name": name, "tools": assistant.tool_ids},
        )
    return await _assistant_json(svc, assistant)


async def _assistant(svc: OrgService, caller: Caller, assistant_id: str) -> Assistant:
    async with svc.db.begin() as session:
        assistant = await session.scalar(
            select(Assistant).where(Assistant.id == assistant_id, Assistant.org_id == caller.org_id)
        )
    if assistant is None:
        raise not_found("assistant")
    return assistant


async def list_assistants(svc: OrgService, caller: Caller) -> list[AssistantView]:
    async with svc.db.begin() as session:
        rows = list(
            await session.scalars(select(Assistant).where(Assistant.org_id == caller.org_id).order_by(Assistant.name))
        )
    return [await _assistant_json(svc, row) for row in rows]


async def get_assistant(svc: OrgService, caller: Caller, assistant_id: str) -> AssistantView:
    return await _assistant_json(svc, await _assistant(svc, caller, assistant_id))


async def list_publications(svc: OrgService, caller: Caller, assistant_id: str) -> list[PublicationView]:
    """The assistant's publications, newest first, each as `publish` answered it."""
    assistant = await _assistant(svc, caller, assistant_id)
    async with svc.db.begin() as session:
        rows = await session.scalars(
            select(Publication)
            .where(Publication.assistant_id == assistant.id, Publication.org_id == caller.org_id)
            .order_by(Publication.published_at.desc(), Publication.id.desc())
        )
        return [_publication_json(row, assistant.slug) for row in rows]


async def _selection(
    session: Any, org_id: str, tool_ids: list[str]
) -> list[tuple[str, Tool | None, Policy | None, RegisteredServer | None]]:
    rows = (
        await session.execute(
            select(Tool, Policy, RegisteredServer)
            .outerjoin(Policy, Policy.tool_id == Tool.id)
            .join(RegisteredServer, RegisteredServer.id == Tool.server_id)
            .where(Tool.org_id == org_id, Tool.id.in_(tool_ids))
        )
    ).all()
    found = {tool.id: (tool, policy, server) for tool, policy, server in rows}
    return [(tool_id, *found.get(tool_id, (None, None, None))) for tool_id in tool_ids]


async def publish(svc: OrgService, caller: Caller, assistant_id: str) -> PublicationView:
    """Publish the selection as it stands, or 409 `not_publishable` naming each tool that may not be published."""
    require(caller, *ADMINS)
    assistant = await _assistant(svc, caller, assistant_id)
    async with svc.db.begin() as session:
        problems: list[dict[str, str]] = []
        tools: list[dict[str, str]] = []
        for tool_id, tool, policy, server in await _selection(session, caller.org_id, assistant.tool_ids):
            why = "removed" if tool is None or server is None else why_not_now(tool, policy, server, "assistant")
            name = model_name(server.name, tool.name) if tool is not None and server is not None else tool_id
            if why is not None:
                problems.append({"tool_id": tool_id, "tool": name, "reason": why})
            elif tool is not None and server is not None:
                tools.append({"server_id": server.id, "tool": tool.name, "definition_hash": tool.definition_hash})
        if problems:
            listed = "; ".join(f"{item['tool']}: {item['reason']}" for item in problems)
            raise Conflict("not_publishable", f"these tools cannot be published: {listed}", details={"tools": problems})
        if not tools:
            raise Conflict("not_publishable", "choose at least one run_freely tool first", details={"tools": []})
        publication = Publication(
            org_id=caller.org_id, assistant_id=assistant.id, tools=tools, published_by=caller.email
        )
        session.add(publication)
        stored = await session.get(Assistant, assistant.id)
        assert stored is not None
        stored.needs_review, stored.review_reason = False, ""
        await clear_alert(session, caller.org_id, PUBLICATION_ALERT, assistant_id=assistant.id)
        audit(session, caller.org_id, caller.email, "assistant.publish", assistant.id, new={"tools": tools})
        await session.flush()
        return _publication_json(publication, assistant.slug)


async def _qualified(
    svc: OrgService, assistant: Assistant, published: list[dict[str, str]] | None
) -> tuple[set[str], list[str]]:
    """The tools a turn of the assistant may use now (model-facing names) and those left out, by name and why.

    `published`: the publication's tools (a visitor's turn); None: the current selection (a preview).
    """
    async with svc.db.begin() as session:
        offered: set[str] = set()
        left_out: list[str] = []
        if published is None:
            for tool_id, tool, policy, server in await _selection(session, assistant.org_id, assistant.tool_ids):
                why = "removed" if tool is None or server is None else why_not_now(tool, policy, server, "assistant")
                name = model_name(server.name, tool.name) if tool is not None and server is not None else tool_id
                if why:
                    left_out.append(f"{name}: {why}")
                else:
                    offered.add(name)
            return offered, left_out
        shown: list[str] = []  # the alert's: the service's words, each name and reason a code span
        for item in published:
            row = (
                await session.execute(
                    select(Tool, Policy, RegisteredServer)
                    .outerjoin(Policy, Policy.tool_id == Tool.id)
                    .join(RegisteredServer, RegisteredServer.id == Tool.server_id)
                    .where(
                        Tool.org_id == assistant.org_id, Tool.server_id == item["server_id"], Tool.name == item["tool"]
                    )
                )
            ).first()
            if row is None:
                left_out.append(f"{item['tool']}: removed")
                shown.append(f"{code_span(item['tool'])}: `removed`")
                continue
            tool, policy, server = row
            why = why_not_now(tool, policy, server, "assistant", item["definition_hash"])
            name = model_name(server.name, tool.name)
            if why:
                left_out.append(f"{name}: {why}")
                shown.append(f"{code_span(name)}: {code_span(why)}")
            else:
                offered.add(name)
        if left_out:
            listed = "; ".join(shown)
            message = (
                f"{text_of(assistant.name)}: left out of visitors' turns until reviewed and published again: {listed}"
            )
            await raise_alert(session, assistant.org_id, PUBLICATION_ALERT, message, assistant_id=assistant.id)
        return offered, left_out


def _visitor_offer(assistant: Assistant, names: set[str], refusal: str) -> Offer:
    asker = Asker.refusing(assistant.org_id, refusal)  # a server's question is refused at once, saying why
    return Offer(names, assistant.instructions, limits(MAX_VISITOR_CALLS), approver=None, asker=asker)


async def _visitor_turn_in(
    svc: OrgService,
    assistant: Assistant,
    conversation: Conversation,
    message: str,
    names: set[str],
    refusal: str = NOT_ASKED,
) -> TurnRow:
    model = await model_for(svc, assistant.org_id, None)
    async with svc.db.begin() as session:
        row = TurnRow(
            org_id=assistant.org_id,
            conversation_id=conversation.id,
            message=message,
            status="running",
            calls=[],
            held_until=held_until(svc),
        )
        session.add(row)
    async with ends_if_it_fails(svc, row.id):
        opened = await svc.hosts.current(assistant.org_id)
        offer = _visitor_offer(assistant, names, refusal)
        return await drive_turn(svc, opened, model, conversation, row, offer, key=f"visitor:{conversation.id}")


async def preview(svc: OrgService, caller: Caller, assistant_id: str, body: dict[str, Any]) -> PreviewView:
    """A turn of the assistant as visitors would have it, with the current selection under the same rules."""
    require(caller, *ADMINS)
    assistant = await _assistant(svc, caller, assistant_id)
    message = _text(body, "message", MAX_MESSAGE, required=True)
    names, left_out = await _qualified(svc, assistant, None)
    async with svc.db.begin() as session:
        conversation = Conversation(
            org_id=assistant.org_id, assistant_id=assistant.id, member_id=caller.member_id, messages=[]
        )
        session.add(conversation)
    row = await _visitor_turn_in(svc, assistant, conversation, message, names, PREVIEW_NOT_ASKED)
    return {**turn_json(row), "left_out": left_out}


async def visitor_turn(
    svc: OrgService, slug: str, body: dict[str, Any], visitor: str, limits_: RateLimits
) -> VisitorTurnView:
    """A visitor's turn of a published assistant: `{conversation, reply, calls}`."""
    message = _text(body, "message", MAX_MESSAGE, required=True)
    wanted = body.get("conversation")
    if wanted is not None and (not isinstance(wanted, str) or len(wanted) > 64):
        raise Invalid("invalid_request", "`conversation` must be the id an earlier turn gave")
    async with svc.db.begin() as session:
        assistant = await session.scalar(select(Assistant).where(Assistant.slug == slug))
        published = await _latest(session, assistant.id) if assistant is not None else None
    if assistant is None or published is None:
        raise NotFound("not_found", "no published assistant at this address")
    limits_.check(assistant.id, visitor)
    async with svc.db.begin() as session:
        conversation = None
        if wanted is not None:
            conversation = await session.scalar(
                select(Conversation).where(
                    Conversation.id == wanted,
                    Conversation.assistant_id == assistant.id,
                    Conversation.member_id.is_(None),
                )
            )
            if conversation is None:
                raise NotFound("not_found", "no such conversation with this assistant")
        else:
            conversation = Conversation(org_id=assistant.org_id, assistant_id=assistant.id, member_id=None, messages=[])
            session.add(conversation)
    names, _ = await _qualified(svc, assistant, published.tools)
    row = await _visitor_turn_in(svc, assistant, conversation, message, names)
    calls = turn_json(row)["calls"]
    return {"conversation": conversation.id, "reply": row.reply, "calls": calls, "status": row.status}
