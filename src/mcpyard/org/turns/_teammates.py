"""Teammates: internal agents members talk to, each allowed some of the registered servers (ORG-4, ORG-5, ORG-7).

Owners and admins create a teammate (name, instructions, model) and choose its servers; a teammate
is offered a server's tools under the server's prefix, and only those whose policy lets them run for
their current definition (`run_freely` or `ask_first`; never `off`, changed or removed). A member's
conversation with a teammate is the member's alone; an `ask_first` call parks the turn in the inbox
and the turn goes on once the call is approved (run once, policy and the teammate's access checked
again) or declined.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.config import ToolSearchSettings
from mcpyard.errors import Conflict
from mcpyard.org._caller import ADMINS, Caller, not_found, require, text_field
from mcpyard.org._words import quoted
from mcpyard.org.hosts import conversation_key
from mcpyard.org.rules import Subject
from mcpyard.org.services import (
    Asker,
    OrgService,
    Outcome,
    audit,
    charge,
    held_until,
    questions_of_turns,
    tool_search_of,
    until_done_or_asked,
)
from mcpyard.org.store import Approval, Conversation, Member, Teammate, TeammateServer, TurnRow
from mcpyard.org.turns._model_setting import MAX_MODEL_NAME
from mcpyard.org.turns._teammate_edits import (
    MAX_TEAMMATE_INSTRUCTIONS,
    MAX_TEAMMATE_NAME,
    deleted,
    live_servers,
    server_ids_field,
    still_offered,
)
from mcpyard.org.turns._turn_json import turn_json, turn_trace
from mcpyard.org.turns._turn_offer import Offer, TurnInbox, limits, model_for, offered_names
from mcpyard.org.turns._turn_resume import continue_after_decision
from mcpyard.org.turns._turns import MAX_MESSAGE, drive_turn, ends_if_it_fails
from mcpyard.org.turns._views import (
    ConversationView,
    ListedConversationView,
    StartedConversationView,
    TeammateView,
    TracedTurnView,
    TurnView,
)

__all__ = [
    "after_decision",
    "create_teammate",
    "get_conversation",
    "get_teammate",
    "get_turn",
    "list_conversations",
    "list_teammates",
    "start_conversation",
    "take_turn",
]

UNFINISHED = ("running", "waiting_for_approval", "waiting_for_answer")
"""A turn in these states has not ended: its conversation takes no new message yet."""
FIRST_MESSAGE_CHARS = 120
"""How much of a conversation's first message its listing shows."""


async def _teammate_json(svc: OrgService, teammate: Teammate) -> TeammateView:
    async with svc.db.begin() as session:
        servers = list(
            await session.scalars(select(TeammateServer.server_id).where(TeammateServer.teammate_id == teammate.id))
        )
        offered = await offered_names(session, teammate.org_id, server_ids=servers)
    return {
        "id": teammate.id,
        "name": teammate.name,
        "instructions": teammate.instructions,
        "model": teammate.model,
        "server_ids": sorted(servers),
        "tools": sorted(offered),
        "created_at": teammate.created_at.isoformat(),
        "deleted_at": teammate.deleted_at.isoformat() if teammate.deleted_at else None,
    }


async def create_teammate(svc: OrgService, caller: Caller, body: dict[str, Any]) -> TeammateView:
    require(caller, *ADMINS)
    name = text_field(body, "name", MAX_TEAMMATE_NAME, required=True)
    instructions = text_field(body, "instructions", MAX_TEAMMATE_INSTRUCTIONS) or ""
    model = text_field(body, "model", MAX_MODEL_NAME)
    server_ids = server_ids_field(body)
    assert name is not None
    async with svc.db.begin() as session:
        live = await live_servers(session, caller.org_id, server_ids)
        taken = await session.scalar(select(Teammate.id).where(Teammate.org_id == caller.org_id, Teammate.name == name))
        if taken is not None:
            raise Conflict("name_taken", f"a teammate named {quoted(name)} exists already; choose another name")
        teammate = Teammate(org_id=caller.org_id, name=name, instructions=instructions, model=model)
        session.add(teammate)
        await session.flush()
        for server_id in live:
            session.add(TeammateServer(org_id=caller.org_id, teammate_id=teammate.id, server_id=server_id))
        audit(
            session,
            caller.org_id,
            caller.email,
            "teammate.create",
            teammate.id,
            new={"name": name, "servers": sorted(live)},
        )
    return await _teammate_json(svc, teammate)


async def _teammate(svc: OrgService, caller: Caller, teammate_id: str, *, in_use: bool = False) -> Teammate:
    """The organization's teammate (404 otherwise); with `in_use`, 409 `teammate_deleted` for a deleted one."""
    async with svc.db.begin() as session:
        teammate = await session.scalar(
            select(Teammate).where(Teammate.id == teammate_id, Teammate.org_id == caller.org_id)
        )
    if teammate is None:
        raise not_found("teammate")
    if in_use and teammate.deleted_at is not None:
        raise deleted()
    return teammate


async def list_teammates(svc: OrgService, caller: Caller) -> list[TeammateView]:
    async with svc.db.begin() as session:
        teammates = list(
            await session.scalars(
                select(Teammate)
                .where(Teammate.org_id == caller.org_id, Teammate.deleted_at.is_(None))
                .order_by(Teammate.name)
            )
        )
    return [await _teammate_json(svc, teammate) for teammate in teammates]


async def get_teammate(svc: OrgService, caller: Caller, teammate_id: str) -> TeammateView:
    return await _teammate_json(svc, await _teammate(svc, caller, teammate_id))


async def start_conversation(svc: OrgService, caller: Caller, teammate_id: str) -> StartedConversationView:
    teammate = await _teammate(svc, caller, teammate_id, in_use=True)
    async with svc.db.begin() as session:
        conversation = Conversation(
            org_id=caller.org_id, teammate_id=teammate.id, member_id=caller.member_id, messages=[]
        )
        session.add(conversation)
    return {"id": conversation.id, "teammate_id": teammate.id}


async def list_conversations(svc: OrgService, caller: Caller, teammate_id: str) -> list[ListedConversationView]:
    """The caller's own conversations with the teammate, newest first: how many turns, and how the first began."""
    teammate = await _teammate(svc, caller, teammate_id)
    turns = select(func.count(TurnRow.id)).where(TurnRow.conversation_id == Conversation.id).scalar_subquery()
    first = (
        select(TurnRow.message)
        .where(TurnRow.conversation_id == Conversation.id)
        .order_by(TurnRow.created_at, TurnRow.id)
        .limit(1)
        .scalar_subquery()
    )
    async with svc.db.begin() as session:
        rows = (
            await session.execute(
                select(Conversation, turns, first)
                .where(
                    Conversation.org_id == caller.org_id,
                    Conversation.teammate_id == teammate.id,
                    Conversation.member_id == caller.member_id,
                )
                .order_by(Conversation.created_at.desc(), Conversation.id.desc())
            )
        ).all()
    return [
        {
            "id": conversation.id,
            "teammate_id": teammate.id,
            "created_at": conversation.created_at.isoformat(),
            "turns": int(count or 0),
            "first_message": (message or "")[:FIRST_MESSAGE_CHARS],
        }
        for conversation, count, message in rows
    ]


async def _own_conversation(session: AsyncSession, caller: Caller, conversation_id: str) -> Conversation:
    """The caller's own conversation with a teammate, or 404 (for anyone else's too: it is theirs alone)."""
    conversation = await session.scalar(
        select(Conversation).where(
            Conversation.id == conversation_id,
            Conversation.org_id == caller.org_id,
            Conversation.member_id == caller.member_id,
            Conversation.teammate_id.is_not(None),
        )
    )
    if conversation is None:
        raise not_found("conversation")
    return conversation


async def get_conversation(svc: OrgService, caller: Caller, conversation_id: str) -> ConversationView:
    """A conversation with a teammate and its turns, oldest first: its member's alone to read (404 for anyone
    else, owners and admins too, as for a conversation that does not exist)."""
    async with svc.db.begin() as session:
        conversation = await _own_conversation(session, caller, conversation_id)
        rows = await session.scalars(
            select(TurnRow)
            .where(TurnRow.conversation_id == conversation.id, TurnRow.org_id == caller.org_id)
            .order_by(TurnRow.created_at, TurnRow.id)
        )
        listed = list(rows)
        questions = await questions_of_turns(session, caller.org_id, [row.id for row in listed])
        turns: list[TurnView] = [{**turn_json(row), "questions": questions.get(row.id, [])} for row in listed]
    teammate_id = conversation.teammate_id
    assert teammate_id is not None, "_own_conversation finds only conversations with a teammate"
    return {
        "id": conversation.id,
        "teammate_id": teammate_id,
        "created_at": conversation.created_at.isoformat(),
        "turns": turns,
    }


@dataclass(frozen=True, slots=True)
class _Setting:
    """A conversation's turns: what they may use, whose they are, where their results live, which model."""

    names: frozenset[str]
    teammate_id: str
    instructions: str
    member: Caller
    key: str
    model: str | None
    tool_search: ToolSearchSettings

    def asker(self, turn_id: str) -> Asker:
        """Who answers the questions of the turn's servers: the conversation's member (owners and admins too)."""
        return Asker(self.member.org_id, self.member.member_id, turn_id=turn_id)

    def offer(self, svc: OrgService, turn_id: str, asker: Asker | None = None) -> Offer:
        inbox = TurnInbox(svc, self.member, self.key, turn_id)
        asker = asker or self.asker(turn_id)
        return Offer(
            self.names,
            self.instructions,
            limits(),
            inbox,
            asker,
            self.still_offered(svc),
            self.charge(svc),
            self.tool_search,
        )

    def charge(self, svc: OrgService) -> Callable[[], Awaitable[None]]:
        """Each call of the teammate's turns counts against the organization's per-teammate limits (ORG-11)."""
        org_id, teammate = self.member.org_id, Subject("teammate", self.teammate_id)

        async def count() -> None:
            await charge(svc, org_id, [teammate])

        return count

    def still_offered(self, svc: OrgService) -> Callable[[], Awaitable[Collection[str]]]:
        """The tools the teammate may use now, read again before each call of its turns (ORG-5)."""
        teammate_id = self.teammate_id

        async def now() -> Collection[str]:
            async with svc.db.begin() as session:
                return await still_offered(session, teammate_id)

        return now


async def _setting(svc: OrgService, conversation: Conversation) -> _Setting:
    async with svc.db.begin() as session:
        teammate = await session.get(Teammate, conversation.teammate_id) if conversation.teammate_id else None
        member = await session.get(Member, conversation.member_id) if conversation.member_id else None
        if teammate is None or member is None:
            raise not_found("conversation")
        if teammate.deleted_at is not None:
            raise deleted()
        servers = list(
            await session.scalars(select(TeammateServer.server_id).where(TeammateServer.teammate_id == teammate.id))
        )
        names = await offered_names(session, teammate.org_id, server_ids=servers)
        tool_search = await tool_search_of(session, teammate.org_id)
    return _Setting(
        names=frozenset(names),
        teammate_id=teammate.id,
        instructions=teammate.instructions,
        member=Caller(member.id, member.org_id, member.email, member.role),
        key=conversation_key(member.id, conversation.id),
        model=teammate.model or None,
        tool_search=tool_search,
    )


async def take_turn(svc: OrgService, caller: Caller, conversation_id: str, body: dict[str, Any]) -> Outcome[TurnView]:
    """One turn of a member's conversation: ended, or still going on (waiting for an approval or an answer)."""
    message = text_field(body, "message", MAX_MESSAGE, required=True)
    assert message is not None
    async with svc.db.begin() as session:
        conversation = await _own_conversation(session, caller, conversation_id)
        waiting = await session.scalar(
            select(TurnRow.id).where(TurnRow.conversation_id == conversation.id, TurnRow.status.in_(UNFINISHED))
        )
        if waiting is not None:
            raise Conflict(
                "turn_waiting", "this conversation's last turn has not ended (an approval or an answer is pending)"
            )
    setting = await _setting(svc, conversation)
    model = await model_for(svc, caller.org_id, setting.model)
    async with svc.db.begin() as session:
        row = TurnRow(
            org_id=caller.org_id,
            conversation_id=conversation.id,
            message=message,
            status="running",
            calls=[],
            held_until=held_until(svc),
        )
        session.add(row)
    turn_id = row.id
    asker = setting.asker(turn_id)
    offer = setting.offer(svc, turn_id, asker)

    async def run() -> TurnRow:
        async with ends_if_it_fails(svc, turn_id):
            opened = await svc.hosts.current(caller.org_id)
            return await drive_turn(svc, opened, model, conversation, row, offer, key=setting.key)

    ended, _ = await until_done_or_asked(svc, asker, run, "a turn waiting for an answer")
    async with svc.db.begin() as session:
        fresh = await session.get(TurnRow, turn_id, populate_existing=True)
        if fresh is None:
            raise not_found("turn")
        questions = await questions_of_turns(session, caller.org_id, [turn_id])
    shown: TurnView = {**turn_json(fresh), "questions": questions.get(turn_id, [])}
    return Outcome(shown, waiting=not ended or fresh.status in UNFINISHED)


async def get_turn(svc: OrgService, caller: Caller, turn_id: str) -> TracedTurnView:
    """A turn and its trace: the conversation's member sees it, and so do owners and admins."""
    async with svc.db.begin() as session:
        found = (
            await session.execute(
                select(TurnRow, Conversation)
                .join(Conversation, Conversation.id == TurnRow.conversation_id)
                .where(TurnRow.id == turn_id, TurnRow.org_id == caller.org_id)
            )
        ).first()
    if found is None:
        raise not_found("turn")
    row, conversation = found
    if not caller.is_admin and conversation.member_id != caller.member_id:
        raise not_found("turn")
    async with svc.db.begin() as session:
        questions = (await questions_of_turns(session, caller.org_id, [row.id])).get(row.id, [])
    return {**turn_json(row), "questions": questions, "trace": await turn_trace(svc, row)}


async def after_decision(svc: OrgService, org_id: str, approval_id: str) -> None:
    """The teammate's turn parked on the decided approval (if one is) goes on, in the background."""
    async with svc.db.begin() as session:
        turn_id = await session.scalar(
            select(Approval.turn_id).where(Approval.id == approval_id, Approval.org_id == org_id)
        )
    if turn_id is None:
        return
    parked: str = turn_id

    async def offer_for(conversation: Conversation) -> tuple[Offer, str, str | None]:
        setting = await _setting(svc, conversation)
        return setting.offer(svc, parked), setting.key, setting.model

    async def work() -> None:
        await continue_after_decision(svc, org_id, parked, offer_for)

    svc.hosts.spawn(work, "a turn going on after its approval")
