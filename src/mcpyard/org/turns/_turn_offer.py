"""What a turn may use: the tools it is offered, who answers its cards, its limits, and the model it talks to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

import httpx2
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.agent import TurnLimits
from mcpyard.config import ToolSearchSettings
from mcpyard.connect import guarded_client
from mcpyard.errors import Conflict
from mcpyard.model import Model, ToolCall
from mcpyard.org._caller import Caller
from mcpyard.org.hosts import model_name
from mcpyard.org.keys import model_key_context
from mcpyard.org.rules import Purpose, ToolFacts, why_not
from mcpyard.org.services import Asker, Inbox, OrgService
from mcpyard.org.store import ModelSetting, Policy, RegisteredServer, Tool
from mcpyard.policy import Answer, ApprovalCard, Approver

__all__ = ["TURN_SECONDS", "Offer", "TurnInbox", "limits", "model_for", "offered_names"]

TURN_SECONDS = 300.0
"""A whole turn, model requests and calls (each call has its own 30 s too, NET-2)."""
MODEL_REQUEST_SECS = 120.0
"""One request to the organization's model, each phase (connect, write, read between bytes)."""


async def model_for(svc: OrgService, org_id: str, name: str | None) -> Model:
    """The model a turn talks to: the service's own when it has one, else the organization's endpoint."""
    if svc.models is not None:
        return svc.models(org_id, name)
    async with svc.db.begin() as session:
        setting = await session.scalar(select(ModelSetting).where(ModelSetting.org_id == org_id))
    if setting is None:
        raise Conflict(
            "no_model", "the organization has no model yet: an owner or admin sets it with PUT /api/v1/model"
        )
    await svc.check_url(setting.base_url)  # checked again at turn time: the address must still be allowed (NET-1)
    key = None
    if setting.sealed_key is not None and setting.key_id is not None:
        key = svc.sealer.unseal(
            setting.key_id, setting.sealed_key, context=model_key_context(setting), what="the model's key"
        )
    from mcpyard.model import OpenAIModel

    # Every request goes through the outbound guard: resolved once per connection, refused for a private address,
    # connected to the address checked, no redirects, no ambient proxy (NET-1); answers capped at 1 MiB (NET-2).
    http = guarded_client(svc.guard, timeout=httpx2.Timeout(MODEL_REQUEST_SECS)) if svc.guard is not None else None
    return OpenAIModel(
        base_url=setting.base_url, model=name or setting.model, api_key=key, stream=False, http_client=http
    )


async def offered_names(
    session: AsyncSession, org_id: str, *, server_ids: Collection[str] | None, purpose: Purpose = "teammate"
) -> dict[str, tuple[str, str, str]]:
    """The tools that may serve `purpose` now, by the name the model sees: (server id, tool, definition hash) of
    each (`server_ids`: of those servers only)."""
    query = (
        select(
            RegisteredServer.id,
            RegisteredServer.name,
            Tool.name,
            Tool.state,
            Tool.definition_hash,
            Policy.policy,
            Policy.reviewed_hash,
        )
        .join(Tool, Tool.server_id == RegisteredServer.id)
        .outerjoin(Policy, Policy.tool_id == Tool.id)
        .where(RegisteredServer.org_id == org_id, RegisteredServer.deleted_at.is_(None))
    )
    if server_ids is not None:
        query = query.where(RegisteredServer.id.in_(tuple(server_ids)))
    offered: dict[str, tuple[str, str, str]] = {}
    for server_id, server, tool, state, digest, policy, reviewed in (await session.execute(query)).all():
        facts = ToolFacts(
            listed=state != "removed",
            server_deleted=False,
            policy=policy,
            reviewed_hash=reviewed,
            live_hash=digest,
        )
        if why_not(facts, purpose) is None:
            offered[model_name(server, tool)] = (server_id, tool, digest)
    return offered


@dataclass(frozen=True, slots=True)
class Offer:
    """What one turn may use: the tools (model-facing names), its instructions and limits, who answers its cards
    and its servers' questions."""

    names: Collection[str]
    instructions: str
    limits: TurnLimits
    approver: Approver | None
    """None: a card is never answered (a visitor's turn: an ask-first tool is never offered anyway)."""
    asker: Asker | None = None
    """Who answers the questions its calls' servers ask (one that refuses: visitors, previews); None: no one."""
    still_offered: Callable[[], Awaitable[Collection[str]]] | None = None
    """The tools it may use at this moment, read again before each call (a teammate edited or deleted while its
    turn runs, on any process: from its next call on); None: `names` for the whole turn."""
    charge: Callable[[], Awaitable[None]] | None = None
    """Counts one call against the organization's limits before it runs, raising `LimitReached` when it would go
    over one (a teammate's turn: the teammate's limits); None: its calls are not counted (visitors have theirs)."""
    tool_search: ToolSearchSettings | None = None
    """When its model is offered `find_tools` in place of its tools (a teammate's: the organization's setting);
    None: every tool, always (an assistant's few, chosen one by one)."""


class TurnInbox:
    """The approver of a member's turn: each call it must ask about is parked in the inbox with its exact arguments,
    and the turn with it (`CallApprover`)."""

    def __init__(self, svc: OrgService, caller: Caller, conversation: str, turn_id: str) -> None:
        self._svc, self._caller, self._conversation, self._turn_id = svc, caller, conversation, turn_id

    def for_call(self, call: ToolCall) -> Approver:
        return Inbox(
            self._svc, self._caller, call.name, dict(call.arguments), self._conversation, turn=(self._turn_id, call.id)
        )

    async def __call__(self, card: ApprovalCard) -> Answer:  # only reached for a call the loop did not name
        from mcpyard.policy import Declined

        raise Declined("denied", f"{card.tool}: no one can answer this card here")


def limits(max_calls: int = 20) -> TurnLimits:
    return TurnLimits(max_calls=max_calls, max_seconds=TURN_SECONDS)
