"""A parked turn goes on once its approvals are decided, on whichever process claims it (ORG-5)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.agent import TurnState
from mcpyard.errors import ServiceError
from mcpyard.org.services import OrgService, held_until, result_from_json
from mcpyard.org.store import Approval, Conversation, TurnRow
from mcpyard.org.turns._turn_offer import Offer, model_for
from mcpyard.org.turns._turns import drive_turn, ends_if_it_fails
from mcpyard.pipeline import CallResult

__all__ = ["OfferFor", "continue_after_decision"]


async def _decided(session: AsyncSession, turn_id: str, waiting: Collection[str]) -> dict[str, CallResult]:
    """The results of the turn's waiting calls that were decided: the approved run's, or the refusal."""
    approvals = await session.scalars(
        select(Approval).where(Approval.turn_id == turn_id, Approval.status.in_(("done", "failed", "declined")))
    )
    decided: dict[str, CallResult] = {}
    for approval in approvals:
        if approval.tool_call_id is None or approval.tool_call_id not in waiting:
            continue
        if approval.status == "declined" or approval.result is None:
            decided[approval.tool_call_id] = CallResult.refusal(
                "denied",
                f"{approval.tool_name}: a person declined this call; nothing was sent",
                tool=approval.tool_name,
            )
        else:
            decided[approval.tool_call_id] = result_from_json(approval.result)
    return decided


OfferFor = Callable[[Conversation], Awaitable[tuple[Offer, str, str | None]]]
"""What a parked turn of this conversation may use when it goes on: the offer, the host conversation, the model."""


async def continue_after_decision(svc: OrgService, org_id: str, turn_id: str, offer_for: OfferFor) -> None:
    """Go on with a parked turn whose approvals were decided; exactly one process does (a claim on the turn's row).

    After it parks again it looks once more, so a decision that came in while it ran is never left waiting.
    """
    while True:
        async with svc.db.begin() as session:
            claimed = await session.scalar(
                update(TurnRow)
                .where(TurnRow.id == turn_id, TurnRow.org_id == org_id, TurnRow.status == "waiting_for_approval")
                .values(status="running", held_until=held_until(svc))
                .returning(TurnRow)
                .execution_options(synchronize_session=False)
            )
            if claimed is None:
                return  # another process goes on with it, or it went on already
            state = TurnState.from_json(claimed.state or {})
            decided = await _decided(session, turn_id, state.waiting.keys())
            conversation = await session.get(Conversation, claimed.conversation_id)
            if not decided or conversation is None:
                claimed.status = "waiting_for_approval"
                return
        try:
            # Claimed, so no one else will go on with it: if it fails it ends here, saying why.
            async with ends_if_it_fails(svc, turn_id):
                offer, key, name = await offer_for(conversation)
                model = await model_for(svc, org_id, name)
                opened = await svc.hosts.current(org_id)
                row = await drive_turn(
                    svc, opened, model, conversation, claimed, offer, key=key, resume=(state, decided)
                )
        except ServiceError:
            return
        if row.status != "waiting_for_approval":
            return
        async with svc.db.begin() as session:
            again = await _decided(session, turn_id, TurnState.from_json(row.state or {}).waiting.keys())
        if not again:
            return
