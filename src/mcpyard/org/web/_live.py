"""Live updates for pages: server-sent events saying which part of a page changed (the inbox, alerts, a turn).

`GET /events?topics=inbox,alerts,conversation:<id>` streams `event: change` with the topic as
its data whenever what that topic shows changes; the page's script then fetches the part again.
Changes are found by reading the database every `poll_seconds` (a small fingerprint per topic),
so a change made by any replica reaches every page. A stream ends when its page closes (the
browser disconnects), after `MAX_STREAM_SECONDS` (the browser reconnects by itself), or when the
service stops. The inbox topic covers approvals and servers' questions; a conversation's covers
its turns, their calls and their questions.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
from sqlalchemy import func, select
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from mcpyard.errors import Invalid, TooMany
from mcpyard.org._caller import Caller
from mcpyard.org._words import quoted
from mcpyard.org.services import COOKIE
from mcpyard.org.store import Alert, Approval, CallRow, Conversation, Question, TurnRow, reading
from mcpyard.org.web._pages import PageRoutes, Pages, Visit

__all__ = ["PAGES"]

MAX_TOPICS = 8
MAX_STREAMS = 500
MAX_STREAMS_A_MEMBER = 12
"""Open streams a process serves at most, and for one member; past that a page does without live updates."""
MAX_STREAM_SECONDS = 600.0
HEARTBEAT_SECONDS = 15.0
_RECENT = 200
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

PAGES = PageRoutes()


def _topics(raw: str) -> list[str]:
    topics = list(dict.fromkeys(item.strip() for item in raw.split(",") if item.strip()))
    if not topics or len(topics) > MAX_TOPICS:
        raise Invalid("invalid_request", f"give 1 to {MAX_TOPICS} topics")
    for topic in topics:
        kind, _, ident = topic.partition(":")
        if topic in ("inbox", "alerts") or (kind == "conversation" and _ID.fullmatch(ident)):
            continue
        raise Invalid("invalid_request", f"{quoted(topic[:40])} is not a topic (inbox, alerts, conversation:<id>)")
    return topics


def _digest(rows: Any) -> str:
    return hashlib.sha256(repr(list(rows)).encode()).hexdigest()


async def _fingerprint(pages: Pages, caller: Caller, topic: str) -> str:
    """A short digest of what `topic` shows `caller` now; it changes when the page's part would."""
    async with reading(pages.svc.db) as session:
        if topic == "inbox":
            query = select(Approval.id, Approval.status).where(Approval.org_id == caller.org_id)
            asked = select(Question.id, Question.status).where(Question.org_id == caller.org_id)
            if not caller.is_admin:
                query = query.where(Approval.member_id == caller.member_id)
                asked = asked.where(Question.member_id == caller.member_id)
            approvals = await session.execute(query.order_by(Approval.created_at.desc()).limit(_RECENT))
            questions = await session.execute(asked.order_by(Question.created_at.desc()).limit(_RECENT))
            return _digest([*approvals, *questions])
        if topic == "alerts":
            alerts = select(Alert.id, Alert.cleared_at).where(Alert.org_id == caller.org_id)
            return _digest(await session.execute(alerts.order_by(Alert.raised_at.desc()).limit(_RECENT)))
        conversation_id = topic.partition(":")[2]
        mine = select(Conversation.id).where(Conversation.id == conversation_id, Conversation.org_id == caller.org_id)
        if not caller.is_admin:
            mine = mine.where(Conversation.member_id == caller.member_id)
        if await session.scalar(mine) is None:
            return "none"
        turns = await session.execute(
            select(TurnRow.id, TurnRow.status)
            .where(TurnRow.conversation_id == conversation_id)
            .order_by(TurnRow.created_at, TurnRow.id)
        )
        calls = await session.scalar(
            select(func.count(CallRow.id))
            .join(TurnRow, TurnRow.id == CallRow.turn_id)
            .where(TurnRow.conversation_id == conversation_id)
        )
        questions = await session.execute(
            select(Question.id, Question.status)
            .join(TurnRow, TurnRow.id == Question.turn_id)
            .where(TurnRow.conversation_id == conversation_id)
            .order_by(Question.created_at)
        )
        return _digest([*turns, calls, *questions])


@PAGES.page("/events", "GET")
async def events(pages: Pages, request: Request, visit: Visit) -> Response:
    live = pages.live
    topics = _topics(request.query_params.get("topics", ""))
    caller = visit.caller
    if live.open >= MAX_STREAMS or live.open_for(caller.member_id) >= MAX_STREAMS_A_MEMBER:
        raise TooMany("busy", "too many pages are open for live updates; reload the page to see changes")

    cookie = request.cookies.get(COOKIE, "")

    async def stream() -> AsyncIterator[str]:
        with live.streaming(caller.member_id):
            yield "retry: 3000\n\n"
            seen = {topic: await _fingerprint(pages, caller, topic) for topic in topics}
            started = beat = time.monotonic()
            while time.monotonic() - started < MAX_STREAM_SECONDS:
                await anyio.sleep(live.poll_seconds)
                # The session is looked at again each round: signed out, or the member removed, and the
                # stream ends at once (on every replica); a changed role is the one the next round sees.
                found = await pages.authenticate.session_of(cookie)
                if found is None:
                    return
                now_caller = found[0]
                for topic in topics:
                    now = await _fingerprint(pages, now_caller, topic)
                    if now != seen[topic]:
                        seen[topic] = now
                        yield f"event: change\ndata: {topic}\n\n"
                if time.monotonic() - beat >= HEARTBEAT_SECONDS:
                    beat = time.monotonic()
                    yield ": still here\n\n"

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
