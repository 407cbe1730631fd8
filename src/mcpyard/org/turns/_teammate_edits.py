"""Changing and deleting a teammate (ORG-4, ORG-5): owners and admins only, each change written down (ORG-3).

An edit takes effect at the teammate's next call: every call of a turn checks again which tools the
teammate may use now (`still_offered`), on whichever process runs it, and an approval parked by its turn
is checked against its servers again before it runs. Deleting keeps every record (conversations, turns,
traces, audit rows stay readable): the teammate leaves the list, takes no new conversation or turn
(409 `teammate_deleted`), its turns waiting for an approval end, and their pending approvals are declined,
saying the deletion declined them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import Conflict, Invalid, ServiceError
from mcpyard.org._caller import ADMINS, Caller, not_found, require, text_field
from mcpyard.org._words import quoted
from mcpyard.org.services import OrgService, audit, result_json
from mcpyard.org.store import (
    Approval,
    Conversation,
    RegisteredServer,
    Teammate,
    TeammateServer,
    TurnRow,
    note_change,
    utcnow,
)
from mcpyard.org.turns._model_setting import MAX_MODEL_NAME
from mcpyard.org.turns._turn_offer import offered_names
from mcpyard.pipeline import CallResult

__all__ = [
    "MAX_TEAMMATE_INSTRUCTIONS",
    "MAX_TEAMMATE_NAME",
    "delete_teammate",
    "deleted",
    "live_servers",
    "server_ids_field",
    "still_offered",
    "update_teammate",
]

MAX_TEAMMATE_NAME = 100
MAX_TEAMMATE_INSTRUCTIONS = 20_000
EDITABLE = ("name", "instructions", "server_ids", "model")
"""The fields `PATCH /api/v1/teammates/{id}` takes."""
DELETED_WHY = "the teammate was deleted; nothing was sent"


def deleted() -> ServiceError:
    """The answer for a change to, or a new conversation or turn with, a deleted teammate."""
    return Conflict(
        "teammate_deleted", "this teammate was deleted: its conversations stay readable, but it takes no new work"
    )


def server_ids_field(body: dict[str, Any]) -> list[str]:
    """The `server_ids` of a request (left out: none), each once, or 422."""
    server_ids = body.get("server_ids", [])
    if not isinstance(server_ids, list) or not all(isinstance(item, str) for item in server_ids):
        raise Invalid("invalid_request", "`server_ids` must be a list of server ids")
    return list(dict.fromkeys(server_ids))


async def live_servers(session: AsyncSession, org_id: str, server_ids: Sequence[str]) -> list[str]:
    """The ids, checked: each a live server of the organization, or 422 naming every one that is not."""
    live = set(
        await session.scalars(
            select(RegisteredServer.id).where(
                RegisteredServer.org_id == org_id,
                RegisteredServer.deleted_at.is_(None),
                RegisteredServer.id.in_(server_ids),
            )
        )
    )
    unknown = [item for item in server_ids if item not in live]
    if unknown:
        named = ", ".join(repr(item) for item in unknown)
        raise Invalid(
            "unknown_server",
            f"no server with id {named} in your organization; list them with GET /api/v1/servers",
            details={"unknown_server_ids": unknown},
        )
    return list(server_ids)


async def still_offered(session: AsyncSession, teammate_id: str) -> Collection[str]:
    """The tools the teammate may use at this moment (none once it is deleted), by the name the model sees."""
    teammate = await session.get(Teammate, teammate_id, populate_existing=True)
    if teammate is None or teammate.deleted_at is not None:
        return ()
    servers = list(
        await session.scalars(select(TeammateServer.server_id).where(TeammateServer.teammate_id == teammate_id))
    )
    return (await offered_names(session, teammate.org_id, server_ids=servers)).keys()


async def _editable(session: AsyncSession, caller: Caller, teammate_id: str) -> Teammate:
    require(caller, *ADMINS)
    teammate = await session.scalar(
        select(Teammate).where(Teammate.id == teammate_id, Teammate.org_id == caller.org_id).with_for_update()
    )
    if teammate is None:
        raise not_found("teammate")
    if teammate.deleted_at is not None:
        raise deleted()
    return teammate


async def update_teammate(svc: OrgService, caller: Caller, teammate_id: str, body: dict[str, Any]) -> None:
    """Change any of the teammate's name, instructions, servers and model (null: the organization's), as creating
    it checks them; the audit row has the old and new value of each field that changed."""
    if not any(field in body for field in EDITABLE):
        raise Invalid("invalid_request", f"give at least one of {', '.join(EDITABLE)}")
    name = text_field(body, "name", MAX_TEAMMATE_NAME, required=True) if "name" in body else None
    instructions = text_field(body, "instructions", MAX_TEAMMATE_INSTRUCTIONS) if "instructions" in body else None
    model = (text_field(body, "model", MAX_MODEL_NAME) or None) if "model" in body else None
    wanted = server_ids_field(body) if "server_ids" in body else None
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    async with svc.db.begin() as session:
        teammate = await _editable(session, caller, teammate_id)
        if name is not None and name != teammate.name:
            taken = await session.scalar(
                select(Teammate.id).where(Teammate.org_id == caller.org_id, Teammate.name == name)
            )
            if taken is not None:
                raise Conflict("name_taken", f"a teammate named {quoted(name)} exists already; choose another name")
            old["name"], new["name"], teammate.name = teammate.name, name, name
        if instructions is not None and instructions != teammate.instructions:
            old["instructions"], new["instructions"] = teammate.instructions, instructions
            teammate.instructions = instructions
        if "model" in body and model != teammate.model:
            old["model"], new["model"], teammate.model = teammate.model, model, model
        if wanted is not None:
            servers = await live_servers(session, caller.org_id, wanted)
            had = sorted(
                await session.scalars(select(TeammateServer.server_id).where(TeammateServer.teammate_id == teammate.id))
            )
            if sorted(servers) != had:
                await session.execute(delete(TeammateServer).where(TeammateServer.teammate_id == teammate.id))
                for server_id in servers:
                    session.add(TeammateServer(org_id=caller.org_id, teammate_id=teammate.id, server_id=server_id))
                old["servers"], new["servers"] = had, sorted(servers)
        if new:
            audit(session, caller.org_id, caller.email, "teammate.update", teammate.id, old=old, new=new)
            await note_change(session, caller.org_id)  # its MCP endpoint's clients hear of it (ORG-10)


async def delete_teammate(svc: OrgService, caller: Caller, teammate_id: str) -> None:
    """Delete the teammate, keeping its records; its pending approvals are declined and its parked turns end."""
    now = utcnow()
    refusal = result_json(CallResult.refusal("teammate_deleted", DELETED_WHY), None)
    async with svc.db.begin() as session:
        teammate = await _editable(session, caller, teammate_id)
        teammate.deleted_at = now
        turns = (
            select(TurnRow.id)
            .join(Conversation, Conversation.id == TurnRow.conversation_id)
            .where(Conversation.teammate_id == teammate.id, TurnRow.org_id == caller.org_id)
        )
        declined = await session.execute(
            update(Approval)
            .where(Approval.org_id == caller.org_id, Approval.status == "pending", Approval.turn_id.in_(turns))
            .values(status="declined", decided_by=caller.member_id, decided_at=now, result=refusal)
            .execution_options(synchronize_session=False)
        )
        await session.execute(
            update(TurnRow)
            .where(TurnRow.id.in_(turns), TurnRow.status == "waiting_for_approval")
            .values(
                status="model_error", error="the teammate was deleted; this turn ended", state=None, finished_at=now
            )
            .execution_options(synchronize_session=False)
        )
        audit(
            session,
            caller.org_id,
            caller.email,
            "teammate.delete",
            teammate.id,
            old={"name": teammate.name},
            new={"declined_approvals": int(getattr(declined, "rowcount", 0) or 0)},
        )
        await note_change(session, caller.org_id)
